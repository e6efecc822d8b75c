"""pyperfmap's start hook for interpreters that do not read pyperfmap.pth.

A .pth file only works in a site-packages folder, so under `meson devenv`
(PYTHONPATH) or for an interpreter pyperfmap is not installed in, nothing
would enable pyperfmap in a fresh Python process: a spawned or forkserver
multiprocessing worker, a subprocess.  Python imports `sitecustomize` from
sys.path at start, so pyperf-record and `meson devenv` put this folder on
PYTHONPATH.  It does what pyperfmap.pth does (through this
folder, pyperfmap itself can be imported), then steps aside: it leaves
sys.path as it was without it and runs the sitecustomize it hides (Debian's,
a virtualenv's), so the program sees no difference.
"""
import os
import sys


def _register(path):
    """Appends this process's PID to path, pyperf-record's list of the
    processes whose perf maps its recording keeps (PYPERFMAP_PIDS), which
    spares it a pass over all of perf.data when the recording ends."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, b"%d\n" % os.getpid())
        finally:
            os.close(fd)
    except OSError:
        pass    # its map is then left out: its frames keep their addresses


def _start():
    # pyperf-record's perf ignores hangups (it cannot handle one): the
    # program it starts takes them as on its own; its children inherit that.
    if os.environ.pop("PYPERFMAP_SIGHUP_DEFAULT", None):
        import signal
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
    if os.environ.get("PYPERFMAP", "") not in ("", "0"):
        try:
            import pyperfmap._autostart  # noqa: F401
        except ImportError as e:  # never stop a program from starting
            sys.stderr.write("pyperfmap: warning: PYPERFMAP is set but pyperfmap"
                             " cannot be imported: %s\n" % e)
        pids = os.environ.get("PYPERFMAP_PIDS")
        if pids:
            _register(pids)
            # a forked child writes a map of its own (a pre-fork server's workers)
            os.register_at_fork(after_in_child=lambda: _register(pids))
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    # The sitecustomize this one hides, found now that this folder is gone.
    me = sys.modules.pop("sitecustomize")
    try:
        import sitecustomize  # noqa: F401
    except ImportError as e:
        if e.name != "sitecustomize":
            raise
        sys.modules["sitecustomize"] = me  # none: the import system expects one


_start()
