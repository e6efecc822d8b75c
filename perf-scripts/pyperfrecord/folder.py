"""The recording folder: emptied of an earlier recording before perf
writes into it, completed afterwards with what pymerge needs to read it
anywhere (the perf maps of the sampled processes, kallsyms, the DSOs with
--archive) and recording.txt."""
import os
import shlex
import shutil
import signal
import sys
import time

from pyperfrecord.archive import archive_objects, save_kallsyms
from pyperfrecord import warn
from pyperfrecord.procs import descendants, map_of, sampled_pids


def new_folders(path):
    """The folders os.makedirs(path) creates, deepest first."""
    made = []
    while not os.path.lexists(path):
        made.append(path)
        path = os.path.dirname(path)
    return made


def drop_unrecorded(made, data):
    """After a run that recorded nothing (failed before perf wrote data):
    removes the folders it made, and perf's empty file, so that nothing
    is left that looks like a recording.  Others' files stay."""
    if not made or (os.path.exists(data) and os.path.getsize(data) > 0):
        return
    if os.path.exists(data):
        os.unlink(data)
    for d in made:
        try:
            os.rmdir(d)
        except OSError:
            return


def prepare(out):
    """Makes the folder out, drops what an earlier run left there (a folder
    holds one recording), and returns the path perf.data goes to."""
    os.makedirs(out, exist_ok=True)
    for old in os.listdir(out):
        if old.startswith(("perf.data", "perf-")) or old in ("kallsyms", "recording.txt"):
            os.unlink(os.path.join(out, old))
        elif old == ".build-id":
            shutil.rmtree(os.path.join(out, old))
    return os.path.join(out, "perf.data")


def copy_map(src, dst, since):
    """Copies the perf map src to dst; True if it did.  A map that is not
    this recording's is left out with a warning: PIDs are reused, and an
    earlier process with the same PID, perhaps another user's, may have
    left its map behind.  Since is when the recorded program started (None
    with -p, whose process may have written its map before)."""
    try:
        f = open(src, "rb")
    except FileNotFoundError:
        return False
    except OSError as e:
        warn("%s: %s (an earlier process of another user?); its Python functions stay unnamed"
             % (src, e.strerror))
        return False
    with f:
        # file times tick coarser than time.time(): a second's slack
        if since is not None and os.fstat(f.fileno()).st_mtime < since - 1:
            warn("%s is older than this recording (an earlier process with the same PID"
                 " left it); leaving it out" % src)
            return False
        with open(dst, "wb") as o:
            shutil.copyfileobj(f, o)
    return True


def finish(perf, data, out, meta, started, pid=None, boxes=None, archive=False):
    """Copies the perf maps of the processes sampled in data (pid's
    descendants too, for -p), kallsyms and, with archive, the DSOs into out,
    and writes recording.txt from meta.  Returns the maps' names."""
    pids = set(sampled_pids(perf, data))
    if pid is not None:
        pids.update(descendants(pid))
    maps = []
    for p in sorted(pids):
        src, dst = map_of(p), "perf-%d.map" % p  # named by the host's PID, as perf.data has it
        if boxes and boxes.copy(p, os.path.join(out, dst)):
            maps.append(dst)
        elif copy_map(src, os.path.join(out, dst), None if pid is not None else started):
            maps.append(dst)
    if boxes:
        boxes.close()
    meta["maps"] = " ".join(maps) or "(none)"
    meta["kallsyms"] = "kallsyms" if save_kallsyms(out) else "(not readable)"
    if archive:
        n, size = archive_objects(perf, data, out)
        meta["archive"] = ".build-id: %d files, %.1f MB" % (n, size / 1e6)
    meta["seconds"] = "%.1f" % (time.time() - started)
    with open(os.path.join(out, "recording.txt"), "w") as f:
        for k, v in meta.items():
            f.write("%s: %s\n" % (k, v))
    return maps


def sibling(name):
    """How to run the command name: by its name when PATH finds it, else by
    the path of the copy beside the running script (a venv's bin, not
    activated)."""
    if shutil.which(name):
        return name
    here = os.path.join(os.path.dirname(os.path.abspath(sys.argv[0])), name)
    return shlex.quote(os.path.relpath(here)) if os.access(here, os.X_OK) else name


def tell(prog, out, maps, sig=None):
    """Says where the recording is and how to look at it (and, on its first
    line, the signal sig that stopped it)."""
    rel = os.path.relpath(out)
    rel = out if rel.startswith("..") else rel
    how = "stopped by %s; " % signal.Signals(sig).name if sig else ""
    sys.stderr.write("%s: %swrote %s (%d perf maps)\n" % (prog, how, rel, len(maps)))
    sys.stderr.write("  look at it:  %s %s -o %s/flame.svg\n" % (sibling("pyperf-flamegraph"), rel, rel))
    sys.stderr.write("  or:          %s %s/perf.data > %s/stacks.folded\n" % (sibling("pymerge"), rel, rel))
