"""The recording folder: emptied of an earlier recording before perf
writes into it, completed afterwards with what pymerge needs to read it
anywhere (the perf maps of the sampled processes, kallsyms, the DSOs with
--archive) and recording.txt; the program's maps in /tmp are removed once
copied, and put back on demand (--restore-maps)."""
import contextlib
import filecmp
import os
import re
import shlex
import shutil
import signal
import sys
import time

from pyperfrecord.archive import archive_objects, save_kallsyms
from pyperfrecord import PROG, RecordError, contract, warn
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
    removes the folders it made, perf's empty file and the kallsyms copied
    while perf started, so that nothing is left that looks like a
    recording.  Others' files stay."""
    if os.path.exists(data) and os.path.getsize(data) > 0:
        return
    for name in (data, os.path.join(os.path.dirname(data), "kallsyms")):
        if os.path.exists(name):
            os.unlink(name)
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
        if old.startswith((contract.FILE_DATA, contract.FILE_MAP_PREFIX)) or old in ("kallsyms", "recording.txt"):
            os.unlink(os.path.join(out, old))
        elif old == contract.DIR_BUILD_ID:
            shutil.rmtree(os.path.join(out, old))
    return os.path.join(out, contract.FILE_DATA)


def copy_map(src, dst, since):
    """Copies the perf map src to dst; the os.stat_result of what it copied,
    or None when it did not.  A map that is not
    this recording's is left out with a warning: PIDs are reused, and an
    earlier process with the same PID, perhaps another user's, may have
    left its map behind.  Since is when the recorded program started (None
    with -p, whose process may have written its map before)."""
    try:
        f = open(src, "rb")
    except FileNotFoundError:
        return None
    except OSError as e:
        warn("%s: %s (an earlier process of another user?); its Python functions stay unnamed"
             % (src, e.strerror))
        return None
    with f:
        # file times tick coarser than time.time(): a second's slack
        if since is not None and os.fstat(f.fileno()).st_mtime < since - 1:
            warn("%s is older than this recording (an earlier process with the same PID"
                 " left it); leaving it out" % src)
            return None
        with open(dst, "wb") as o:
            shutil.copyfileobj(f, o)
        return os.fstat(f.fileno())


def lines_of(map_path):
    """The line file libpyperfmap writes beside a perf map (docs/lines.md)."""
    return map_path[:-len(contract.FILE_MAP_SUFFIX)] + contract.FILE_LINES_SUFFIX


def copy_lines(src, dst, map_st, since):
    """Copies the line file of the perf map src (copied to dst, map_st its
    os.stat_result) beside dst, quietly: only pyperfmap's processes have
    one.  A line file of another owner, or last written before the
    recorded program started (since, as for copy_map), is an earlier
    process's with the same PID, left out (pymerge then says the frames
    have no lines).  Not the map's own time: a map also gets entries that
    have no lines (task names), long after the last code object's."""
    try:
        f = open(lines_of(src), "rb")
    except OSError:
        return
    with f:
        st = os.fstat(f.fileno())
        if st.st_uid != map_st.st_uid or (since is not None and st.st_mtime < since - 1):
            return
        with open(lines_of(dst), "wb") as o:
            shutil.copyfileobj(f, o)


def same_file(a, b):
    return (a.st_dev, a.st_ino, a.st_size, a.st_mtime_ns) == (b.st_dev, b.st_ino, b.st_size, b.st_mtime_ns)


# Seconds the program's last processes get to end before their maps are
# left in /tmp as those of running processes.
LINGER = 2.0


def drop_originals(copied):
    """Removes the maps in /tmp that copied ({pid: (path, os.stat_result at
    the copy)}) holds, of processes that have exited: the program's, which
    pyperf-record started.  CPython leaves them for ever (a CI run left
    over a thousand), and the folder has them; restore_maps() puts them
    back for perf report.  A map whose process still runs, or that changed
    since the copy (its PID came round again), stays.  The helpers a
    program leaves (multiprocessing's resource tracker and forkserver) end
    just after it, on their pipe's end: they get a moment."""
    deadline = time.monotonic() + LINGER
    while time.monotonic() < deadline and any(os.path.exists("/proc/%d" % pid) for pid in copied):
        time.sleep(0.05)
    for pid, (src, copied_st) in copied.items():
        try:
            now = os.stat(src)
        except OSError:
            continue
        if os.path.exists("/proc/%d" % pid) or not same_file(now, copied_st):
            continue
        with contextlib.suppress(OSError):
            os.unlink(src)
        with contextlib.suppress(OSError):
            os.unlink(lines_of(src))


def restore_maps(out):
    """Puts the perf maps of the folder out back in /tmp, where perf report
    looks for them; a different map already there (a later process with
    the same PID) stays, and makes the exit status 1."""
    if not os.path.isfile(os.path.join(out, "recording.txt")):
        raise RecordError("%s is not a recording folder (it has no recording.txt)" % out)
    names = sorted(n for n in os.listdir(out) if re.fullmatch(r"perf-\d+\.map", n))
    put, other = 0, []
    for name in names:
        src, dst = os.path.join(out, name), os.path.join("/tmp", name)
        try:
            fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            if not filecmp.cmp(src, dst, shallow=False):
                other.append(dst)
            continue
        with open(fd, "wb") as o, open(src, "rb") as f:
            shutil.copyfileobj(f, o)
        put += 1
    sys.stderr.write("%s: %d perf maps put back in /tmp, %d there already; perf report -i %s names their"
                     " Python functions\n" % (PROG, put, len(names) - put, os.path.join(out, contract.FILE_DATA)))
    if other:
        warn("%s: another process with the same PID wrote %s since; perf report would name that"
             " process's functions (pymerge reads the folder's)" % (out, " ".join(other)))
        return 1
    return 0


def kallsyms(out, meta):
    """Copies /proc/kallsyms into out (the kernel makes it up as it is read:
    a fifth of a second), saying so in meta.  Done while perf records, so
    that the end of a --duration waits for none of it."""
    meta["kallsyms"] = "kallsyms" if save_kallsyms(out) else "(not readable)"


def finish(perf, data, out, meta, started, pid=None, boxes=None, archive=False, pids=None):
    """Copies the perf maps of pids, or of the processes sampled in data
    (pid's descendants too, for -p), kallsyms (unless kallsyms() did) and,
    with archive, the DSOs into out, and writes recording.txt from meta.
    Returns the maps' names."""
    if "kallsyms" not in meta:
        kallsyms(out, meta)
    copy = os.path.join(out, "kallsyms")
    if pids is None:
        pids = set(sampled_pids(perf, data, copy if os.path.exists(copy) else None))
    if pid is not None:
        pids.update(descendants(pid))
    maps, copied = [], {}
    for p in sorted(pids):
        # named by the host's PID, as perf.data has it
        src, dst = map_of(p), contract.FILE_MAP_PREFIX + str(p) + contract.FILE_MAP_SUFFIX
        if boxes and boxes.copy(p, os.path.join(out, dst)):
            maps.append(dst)
            boxes.copy(p, os.path.join(out, lines_of(dst)), contract.FILE_LINES_SUFFIX)
            continue
        st = copy_map(src, os.path.join(out, dst), None if pid is not None else started)
        if st:
            maps.append(dst)
            copied[p] = (src, st)
            copy_lines(src, os.path.join(out, dst), st, None if pid is not None else started)
    if boxes:
        boxes.close()
    meta["maps"] = " ".join(maps) or "(none)"
    if archive:
        n, size = archive_objects(perf, data, out)
        meta["archive"] = ".build-id: %d files, %.1f MB" % (n, size / 1e6)
    meta["seconds"] = "%.1f" % (time.time() - started)
    with open(os.path.join(out, "recording.txt"), "w") as f:
        for k, v in meta.items():
            f.write("%s: %s\n" % (k, v))
    if pid is None and not boxes:
        drop_originals(copied)
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
    # (the folder is complete: a terminal gone meanwhile, EIO, changes nothing)
    with contextlib.suppress(OSError):
        sys.stderr.write("%s: %swrote %s (%d perf maps)\n" % (prog, how, rel, len(maps)))
        sys.stderr.write("  look at it:  %s %s -o %s/flame.svg\n" % (sibling("pyperf-flamegraph"), rel, rel))
        sys.stderr.write("  or:          %s %s/perf.data > %s/stacks.folded\n" % (sibling("pymerge"), rel, rel))
        sys.stderr.flush()
