"""The C allocator reached other than through the PLT: keeper keeps 200
blocks of 64 KiB from malloc, churner allocates and frees 600 more (three
for each of keeper's), and the program ends with keeper's still allocated.

    python native_keeper.py [HOW [LIBRARY]]

HOW says where malloc and free come from:
  libc      ctypes.CDLL("libc.so.6"): dlsym on libc's own handle, which
            finds libc's definitions, not the global scope's (the default)
  cffi      cffi's dlopen of libc, the same lookup through cffi
  deepbind  LIBRARY (tests/memory/deepbind_alloc.c), loaded after start-up
            with RTLD_DEEPBIND: its own calls bind to the definitions of
            its dependencies (libc) before the global scope's

It prints the bytes keeper keeps and churner allocated:

    keeper BYTES churner BYTES
"""
import ctypes
import os
import sys

BLOCK = 65536
KEPT = []


def functions(how):
    """malloc and free, taking and returning addresses as ints."""
    if how == "cffi":
        import cffi
        ffi = cffi.FFI()
        ffi.cdef("void *malloc(size_t); void free(void *);")
        libc = ffi.dlopen("libc.so.6")
        return (lambda n: int(ffi.cast("uintptr_t", libc.malloc(n))),
                lambda p: libc.free(ffi.cast("void *", p)))
    if how == "deepbind":
        lib = ctypes.CDLL(sys.argv[2], mode=os.RTLD_DEEPBIND | os.RTLD_LOCAL)
        malloc, free = lib.deepbind_malloc, lib.deepbind_free
    else:
        libc = ctypes.CDLL("libc.so.6")
        malloc, free = libc.malloc, libc.free
    malloc.restype = ctypes.c_void_p
    malloc.argtypes = [ctypes.c_size_t]
    free.argtypes = [ctypes.c_void_p]
    return malloc, free


def keeper(malloc):
    KEPT.append(malloc(BLOCK))


def churner(malloc, free):
    free(malloc(BLOCK))


def main(how):
    malloc, free = functions(how)
    for _ in range(200):
        keeper(malloc)
        churner(malloc, free)
        churner(malloc, free)
        churner(malloc, free)
    assert all(KEPT)
    print("keeper", 200 * BLOCK, "churner", 600 * BLOCK)


main(sys.argv[1] if len(sys.argv) > 1 else "libc")
