"""The program pyperf-record runs: which interpreter runs it (a python
command, a console script's #! line, under unshare), and the environment
that enables pyperfmap in it and in every Python process it starts."""
import importlib.machinery
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

from pyperfrecord import PROG, RecordError

# Bytes of user stack per sample: ~50 Python calls on 3.11+.  Deeper stacks
# are completed by pymerge from other samples of the same call (stitching);
# with that, 24 KiB gave 99.5-100% complete stacks on a Django request loop
# and `import numpy`, where 16 KiB gave 65% and 97% (README: DWARF unwinding).
DEFAULT_DWARF = 24576
# Modes that record every event copy less: at 32 KiB perf lost most of
# 1,000 ctypes mallocs (3,302 of 4,059 events, 128 MiB buffers), and 24 KiB
# lost 76% of 50,000 write()s a second; 8 KiB, with the call paths that
# complete what the copy cuts off, lost none of either.
EVENT_DWARF = 8192
# A sample's stack is copied up to Python's innermost trampoline frame, and
# the call path kept there gives the rest: on a program churning dicts
# beside bytearrays, 4 KiB left 0.8% of the sampled bytes truncated (8 KiB:
# 0.2%, 2 KiB: all), at half the bytes of 8 KiB.
SAMPLED_DWARF = 4096
# A context switch copies the largest stack perf takes: a thread waiting
# inside a C function that keeps large arrays on its stack (select.select():
# 49 KB) needs it to reach its Python caller (the pages under such a frame
# are mapped by pyperfmap, stackpages.h).  perf reserves the whole size in
# its buffer for every record, so samples on the CPU keep the default.
SWITCH_DWARF = 65528


def dwarf_copy(mode, dwarf=None, exact=False):
    """The bytes of stack each DWARF sample of a mode copies, dwarf when
    asked for."""
    if dwarf:
        return dwarf
    if mode in ("alloc", "leaks"):
        return EVENT_DWARF if exact else SAMPLED_DWARF
    return EVENT_DWARF if mode == "syscalls" else DEFAULT_DWARF


def keeps_paths(mode, copy, use_fp):
    """Whether the program's pyperfmap keeps call paths: for DWARF copies
    smaller than the default, which cut off many stacks that the paths
    complete (24 instructions more per Python call), and for waits: a
    sample taken under a large C frame (a signal handler run inside
    select.select()) reaches its callers only through its path."""
    return not use_fp and mode != "calls" and (copy < DEFAULT_DWARF or mode in ("offcpu", "wall"))

PYTHON_ARG_OPTS = {"-X", "-W", "--check-hash-based-pycs"}
PYTHON_NAME = re.compile(r"python(\d+(\.\d+)?)?$")


# Capabilities that lift perf_event_paranoid's limits (CAP_SYS_ADMIN,
# CAP_PERFMON), as bits of /proc/self/status's CapEff.
PERF_CAPS = (1 << 21) | (1 << 38)


def perf_privileged():
    """Whether perf may record anything here: root, or a capability that
    lifts perf_event_paranoid."""
    if os.geteuid() == 0:
        return True
    try:
        with open("/proc/self/status") as f:
            caps = [l.split()[1] for l in f if l.startswith("CapEff:")]
        return bool(int(caps[0], 16) & PERF_CAPS)
    except (OSError, IndexError, ValueError):
        return False


def perf_refusal(perf, events):
    """Why perf cannot record events (user space only) here as this user,
    in perf's own words, or None when it can: a recording of `true`."""
    with tempfile.TemporaryDirectory(prefix="pyperf-record-") as d:
        p = subprocess.run([perf, "record", "-q", "--all-user", "-o", os.path.join(d, "probe.data")]
                           + events + ["--", "true"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode == 0:
        return None
    lines = [l.strip() for l in p.stderr.splitlines() if l.strip()] or ["exit status %d" % p.returncode]
    said = [l.split(None, 1)[1] for l in lines if l.startswith("Error:") and " " in l]
    return (said or lines)[0]


def check_perf(mode, events):
    """perf's path, and whether it records user space only: what
    kernel.perf_event_paranoid leaves an ordinary user (from 2, the common
    default, perf records a user's own processes without kernel frames).
    The cpu mode's events are tried as perf would record them, so that only
    what perf itself refuses is refused; the tracing modes need tracefs
    and probes, which are root's."""
    perf = shutil.which("perf")
    if not perf:
        raise RecordError("perf is not installed (Debian: apt-get install linux-perf)")
    if perf_privileged():
        return perf, False
    try:
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            level = int(f.read())
    except (OSError, ValueError):
        level = 2
    if mode != "cpu":
        what = "uprobes" if mode in ("alloc", "leaks", "calls") else "kernel tracepoints"
        raise RecordError("--mode %s records %s, which only root may set up; run %s as root"
                          " (sudo), or use --mode cpu" % (mode, what, PROG))
    why = perf_refusal(perf, events)
    if why:
        raise RecordError("perf cannot record %s as this user (perf_event_paranoid is %d): %s; fix: run"
                          " %s as root (sudo)%s" % (" ".join(events), level, why, PROG,
                                                   ", or sudo sysctl kernel.perf_event_paranoid=2"
                                                   if level > 2 else ""))
    if level >= 2:
        sys.stderr.write("%s: recording user space only (perf_event_paranoid is %d);"
                         " for kernel frames too: sudo sysctl kernel.perf_event_paranoid=1, or run"
                         " as root\n" % (PROG, level))
    return perf, level >= 2


def split_python_command(cmd):
    """Returns (interpreter, its options, the rest) of a `python ...` command."""
    i = 1
    while i < len(cmd) and cmd[i].startswith("-") and cmd[i] not in ("-m", "-c", "-"):
        i += 2 if cmd[i] in PYTHON_ARG_OPTS else 1
    return cmd[0], cmd[1:i], cmd[i:]


def not_python(cmd, what):
    raise RecordError("%s is not a Python program (%s); if it starts Python later, run it with PYPERFMAP=1"
                      " in its environment and attach to that process: pyperf-record -p PID" % (cmd, what))


def find_command(name, root="/"):
    """Where this process reaches name, a path or a command on PATH, when
    the command runs with root as its root directory (unshare --root); None
    when it is not there."""
    if "/" not in name:
        path = os.environ.get("PATH", os.defpath)
        if root != "/":
            path = os.pathsep.join(os.path.join(root, d.lstrip("/")) for d in path.split(os.pathsep))
        return shutil.which(name, path=path)
    path = os.path.join(root, name.lstrip("/")) if name.startswith("/") else name
    return path if os.path.isfile(path) else None


def command_interpreter(cmd, root="/"):
    """(interpreter, its options) that will run a command: the command itself
    when it is named python*, else the Python interpreter of its #! line
    (a console script such as hg, pytest, gunicorn).  Paths are the ones
    this process reaches, under root."""
    path = find_command(cmd[0], root)
    if not path:
        raise RecordError("command not found: %s" % cmd[0])
    if PYTHON_NAME.match(os.path.basename(cmd[0])):
        _, opts, _ = split_python_command(cmd)
        return path, opts
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError as e:
        raise RecordError("cannot read %s: %s" % (path, e.strerror))
    if not head.startswith(b"#!"):
        not_python(cmd[0], "an ELF executable" if head.startswith(b"\x7fELF") else "no #! line")
    words = head[2:].split(b"\n")[0].decode(errors="replace").split()
    if words and os.path.basename(words[0]) == "env":  # #!/usr/bin/env [-S] python3 ...
        words = [w for w in words[1:] if w != "-S"]
    if not words or not PYTHON_NAME.match(os.path.basename(words[0])):
        not_python(cmd[0], "a script for %s" % (words[0] if words else "nothing"))
    return find_command(words[0], root) or words[0], words[1:]


# unshare's options (util-linux) that take their value as the next word;
# the others take none, or an optional one after "=".
UNSHARE_VALUE_OPTS = {"--setuid", "--setgid", "--root", "--wd", "--map-user", "--map-group",
                      "--map-users", "--map-groups", "--propagation", "--setgroups",
                      "--monotonic", "--boottime"}
UNSHARE_VALUE_SHORT = "SGRw"


def unwrap_unshare(cmd):
    """(the command, its root directory) of `unshare [OPTIONS] CMD ...`,
    the way a program is put in namespaces of its own (a container); None
    for any other command."""
    if os.path.basename(cmd[0]) != "unshare":
        return None
    i, root = 1, "/"
    while i < len(cmd) and cmd[i].startswith("-") and cmd[i] != "-":
        word = name = cmd[i]
        value = None
        i += 1
        if word == "--":
            break
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            if name in UNSHARE_VALUE_OPTS and not eq and i < len(cmd):
                value, i = cmd[i], i + 1
        else:  # a cluster of short options: -fp, -R DIR, -RDIR
            for k, c in enumerate(word[1:], 1):
                if c in UNSHARE_VALUE_SHORT:
                    name, value = "-" + c, word[k + 1:]
                    if not value and i < len(cmd):
                        value, i = cmd[i], i + 1
                    break
        if name in ("--root", "-R") and value:
            root = value
    if i >= len(cmd):
        raise RecordError("unshare runs no command here (it would start a shell); give it the Python command")
    return cmd[i:], root


def pyperfmap_package():
    """The folder of the pyperfmap package this script finds (its own
    interpreter's, or PYTHONPATH's): it is lent to the program's interpreter."""
    spec = importlib.util.find_spec("pyperfmap")
    devenv = os.environ.get("PYPERFMAP_DEVENV_PATH")
    if spec is None and devenv:
        # meson devenv's build, whose PYTHONPATH one given on the command line replaced
        spec = importlib.machinery.PathFinder.find_spec("pyperfmap", [devenv])
    if spec is None or not spec.submodule_search_locations:
        raise RecordError("cannot import pyperfmap here; install it (pip install ., meson install -C build)"
                          " or run under `meson devenv -C build`")
    return spec.submodule_search_locations[0]


def interpreter_facts(python, opts, env):
    """(version, has frame pointers) of an interpreter that imports pyperfmap
    with env; None when it cannot import it."""
    if any(o.startswith("-") and not o.startswith("--") and set(o[1:]) & set("EIS") for o in opts):
        raise RecordError("%s runs with %s, which keeps pyperfmap's start hook out (PYTHONPATH or site);"
                          " run it without that option" % (python, " ".join(opts)))
    probe = ("import sys, sysconfig, pyperfmap\n"
             "f = ' '.join(str(sysconfig.get_config_var(v) or '') for v in ('CFLAGS', 'PY_CFLAGS', 'CONFIG_ARGS'))\n"
             "print('%d.%d' % sys.version_info[:2], int('-fno-omit-frame-pointer' in f"
             " or '--enable-frame-pointers' in f))")
    try:
        p = subprocess.run([python, "-c", probe], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, env=env)
    except OSError as e:
        raise RecordError("cannot run %s: %s" % (python, e.strerror))
    if p.returncode != 0:
        return None
    ver, fp = p.stdout.split()
    return ver, fp == "1"


def python_environment(python, opts, hook):
    """The environment in which python runs with pyperfmap enabled, from its
    start and in every Python process it starts (spawned, forkserver and
    subprocess children too): PYPERFMAP=1, and hook, a folder holding the
    start hook (sitecustomize.py), first on PYTHONPATH.  The interpreter's own
    pyperfmap is used when it has one, else this script's is lent to it
    through the hook folder.  Returns (env, version, has frame pointers)."""
    pkg = pyperfmap_package()
    os.symlink(os.path.join(pkg, "hook", "sitecustomize.py"), os.path.join(hook, "sitecustomize.py"))
    path = os.environ.get("PYTHONPATH")
    env = dict(os.environ, PYPERFMAP="1", PYTHONPATH=hook + (":" + path if path else ""))
    facts = interpreter_facts(python, opts, env)
    if facts is None:
        os.symlink(pkg, os.path.join(hook, "pyperfmap"))
        facts = interpreter_facts(python, opts, env)
    if facts is None:
        p = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        if p.returncode != 0:  # not an interpreter that runs (a pyenv shim without that version)
            err = (p.stderr.strip().splitlines() or ["exit status %d" % p.returncode])[0]
            raise RecordError("%s does not run: %s" % (python, err))
        ver = p.stdout.strip()
        raise RecordError("%s (Python %s) cannot import pyperfmap: %s has no build for that version;"
                          " build it for that interpreter (meson setup -Dpythons=%s)" % (python, ver, pkg, python))
    return (env,) + facts
