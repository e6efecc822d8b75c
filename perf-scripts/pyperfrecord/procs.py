"""Facts about processes, from /proc and perf.data: which were sampled,
where each one's perf map is, when it started, and its descendants."""
import functools
import os
import re
import signal
import subprocess


def file_key(path):
    """What tells a file or directory from another: (device, inode); None
    when it cannot be seen."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def sampled_pids(perf, data, kallsyms=None):
    """The PIDs with samples in data.  perf script prints one field and
    resolves nothing (perf report sorts by pid through every sample's
    symbols: 3x the time); kallsyms, a copy of /proc/kallsyms, spares it
    reading the kernel's own, which takes longer than the rest on a short
    recording."""
    cmd = [perf, "script", "-i", data, "-F", "pid", "-G"] + (["--kallsyms", kallsyms] if kallsyms else [])
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True).stdout
    return sorted({int(w) for w in out.split()})


def nspid(pid):
    """pid's PID in its innermost PID namespace (NSpid in /proc/PID/status):
    pid itself outside of one, None when the process is gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            ids = next((line.split()[1:] for line in f if line.startswith("NSpid:")), [])
    except OSError:
        return None
    return int(ids[-1]) if ids else pid


def map_of(pid):
    """Where a process's perf map is: /tmp/perf-PID.map, or, for a process
    in a PID namespace (a container) or with a /tmp of its own (systemd's
    PrivateTmp), the map it named by its PID there, in its own /tmp, seen
    through /proc/PID/root."""
    ns, tmp = nspid(pid), "/proc/%d/root/tmp" % pid
    if ns is None or (ns == pid and file_key(tmp) in (None, file_key("/tmp"))):
        return "/tmp/perf-%d.map" % pid
    return "%s/perf-%d.map" % (tmp, ns)


def stat_fields(pid):
    """The fields of /proc/PID/stat after comm (state, ppid...), or None
    when the process is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return None
    # comm may hold spaces and parentheses: fields resume after the last ')'
    return stat[stat.rindex(")") + 2:].split()


@functools.lru_cache(maxsize=None)
def boot_time():
    """When the machine booted, in whole seconds since the epoch (btime):
    read once, as ContainerMaps asks for every process it sees."""
    with open("/proc/stat") as f:
        return int(re.search(r"^btime (\d+)", f.read(), re.M).group(1))


def started_at(pid, fields=None):
    """When pid started, in seconds since the epoch (to a clock tick, on
    top of btime's whole seconds), or None when it is gone."""
    fields = fields or stat_fields(pid)
    if not fields:
        return None
    return boot_time() + int(fields[19]) / os.sysconf("SC_CLK_TCK")


def own_map(pid):
    """Whether pid has written a perf map of its own.  Maps stay after
    their process exits, and PIDs come round again: a CI machine had 5,338
    maps in /tmp for 32,768 PIDs, so an existing map may be a dead
    process's.  Its own was written after it started (btime has whole
    seconds, hence the second's slack)."""
    try:
        return os.stat(map_of(pid)).st_mtime >= started_at(pid) - 1
    except (OSError, TypeError):
        return False


def descendants(pid):
    """pid and every process below it, from /proc (ps is not needed, and a
    ps that inherits a sanitizer preload can hang)."""
    kids = {}
    for entry in os.listdir("/proc"):
        fields = stat_fields(int(entry)) if entry.isdigit() else None
        if fields:
            kids.setdefault(int(fields[1]), []).append(int(entry))
    todo, seen = [pid], []
    while todo:
        p = todo.pop()
        seen.append(p)
        todo.extend(kids.get(p, []))
    return seen


def stop(proc):
    """Asks perf to finish its file (SIGINT), insisting if it does not."""
    for sig, grace in ((signal.SIGINT, 60), (signal.SIGTERM, 10), (signal.SIGKILL, None)):
        proc.send_signal(sig)
        try:
            return proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            continue
