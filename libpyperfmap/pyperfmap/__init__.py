"""Make Python functions visible to Linux perf, on CPython 3.8 and later.

While enabled, every Python function runs through its own tiny native
trampoline, and /tmp/perf-<pid>.map names each trampoline
``py::<qualname>:<filename>``, so ``perf record``/``perf report`` (and pymerge)
show Python frames among the native and kernel ones.

    import pyperfmap
    pyperfmap.enable()            # or: with pyperfmap.enabled(): ...

``python -m pyperfmap script.py`` runs a whole program that way, and so does
``PYPERFMAP=1`` for an interpreter where pyperfmap is installed.
"""
import contextlib
import os

from . import _pyperfmap
from ._spans import current_span, span
from ._web import asgi_middleware, wsgi_middleware

__all__ = ["enable", "disable", "is_enabled", "map_path", "enabled", "sample_allocations", "span",
           "current_span", "wsgi_middleware", "asgi_middleware"]

#: Where the map goes: perf reads /tmp; pymerge can read any folder (--map-dir).
MAP_DIR_ENV = "PYPERFMAP_MAP_DIR"
#: Set to 1: enable() keeps call paths (pyperf-record sets it for small copies).
PATHS_ENV = "PYPERFMAP_PATHS"
#: Bytes between sampled allocations (pyperf-record --mode alloc/leaks sets it).
ALLOC_RATE_ENV = "PYPERFMAP_ALLOC_RATE"
#: Set to 1: also report the frees of sampled blocks (--mode leaks).
ALLOC_FREES_ENV = "PYPERFMAP_ALLOC_FREES"
#: Set to "always": the standard markers fire at every call, traced or not
#: (docs/markers.md: bcc on an interpreter with markers of its own).
MARKERS_ENV = "PYPERFMAP_MARKERS"
#: Set to 0: no asyncio task frames (docs/asyncio.md).
TASKS_ENV = "PYPERFMAP_TASKS"


def enable(paths=None):
    """Turn trampolines on (idempotent).

    paths: also keep each call's call path in its trampoline frame, from
    which pymerge completes DWARF stacks that a small stack copy cut off
    (README: "Call paths").  It costs 24 instructions more per
    Python call.  None: as ``PYPERFMAP_PATHS=1`` in the environment says.

    Returns True when Python functions will be named in the perf map.  When
    the map cannot be written (say /tmp is not writable) it prints one
    warning and returns False; the program runs on unprofiled.  Raises
    RuntimeError if another eval-frame hook (CPython's ``-X perf``, a
    debugger) is installed, and changes nothing then.
    """
    if paths is None:
        paths = os.environ.get(PATHS_ENV) == "1"
    _pyperfmap._task_frames(os.environ.get(TASKS_ENV) != "0")
    if os.environ.get(MARKERS_ENV) == "always" and hasattr(_pyperfmap, "_markers_always"):
        _pyperfmap._markers_always(True)
    on = _pyperfmap.enable(os.environ.get(MAP_DIR_ENV) or "/tmp", bool(paths))
    rate = os.environ.get(ALLOC_RATE_ENV)
    if rate:
        try:
            sample_allocations(int(rate), os.environ.get(ALLOC_FREES_ENV) == "1")
        except (ValueError, RuntimeError) as e:   # the program runs on, unsampled
            import sys
            sys.stderr.write("pyperfmap: warning: %s=%s: allocations are not sampled: %s\n"
                             % (ALLOC_RATE_ENV, rate, e))
    return on


def sample_allocations(rate, frees=False):
    """Sample Python's allocations by bytes, one per ``rate`` bytes on
    average (Poisson, as tcmalloc and Go do), each reported to the static
    probe pyperfmap:alloc with its weight, the bytes it stands for; with
    ``frees``, the frees of the sampled blocks too (pyperfmap:free).  The
    installed allocators are wrapped, as tracemalloc does, so this works in
    a running program.  ``rate`` 0 stops; a negative one is a ValueError.
    """
    _pyperfmap.heap_sample(int(rate), bool(frees))


def disable():
    """Turn trampolines off.  Functions already running finish normally."""
    _pyperfmap.disable()


def is_enabled():
    """True while trampolines are on."""
    return _pyperfmap.is_enabled()


def map_path():
    """This process's perf map (str), or None before the first enable()."""
    return _pyperfmap.map_path()


@contextlib.contextmanager
def enabled():
    """Trampolines on inside the block; the state before it is restored after."""
    was = is_enabled()
    enable()
    try:
        yield
    finally:
        if not was:
            disable()
