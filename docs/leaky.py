"""A server loop with a leak, a cache and scratch buffers, all in C memory
(ctypes): the README's leaks picture (pyperf-record --mode leaks)."""
import ctypes
import time

libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
contexts, cache = [], []


def remember(request):      # the leak: every request's context is kept
    contexts.append(libc.malloc(16384))


def cached(request):        # a cache: fills up to 48 entries, then stays
    if len(cache) < 48:
        cache.append(libc.malloc(65536))


def scratch(request):       # a buffer freed before the request ends
    libc.free(libc.malloc(262144))


def handle(request):
    remember(request)
    cached(request)
    scratch(request)


for i in range(400):
    handle(i)
    time.sleep(0.005)
