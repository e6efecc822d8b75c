"""pyperfmap switched on in a running CPython, and off again: code run at
a safe point of its main thread, queued through ptrace (inject.py, on
x86-64) or gdb (3.8-3.13), or sys.remote_exec (3.14+)."""
import atexit
import glob
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

from pyperfrecord import PROG, RecordError, warn
from pyperfrecord.command import PYTHON_NAME, pyperfmap_package
from pyperfrecord.procs import own_map
from pyperfrecord import inject as ptrace_inject
from pyperfrecord import signals


# Attaching to a process started without pyperfmap.  The injected code runs
# as a pending call: CPython's main thread runs it between two bytecodes,
# with the GIL held, as it runs a signal handler.  It must never raise (a
# pending call that fails turns into an exception in whatever the program
# was running; a SystemExit would end it) and never touch the program's
# names: it runs in a fresh namespace, and all it leaves behind is the
# pyperfmap module and one line in STATUS (a file the caller reads).
ATTACH_ON = """\
import sys
try:
    if 'pyperfmap' not in sys.modules:
        sys.path.insert(0, PKG)
        try:
            import pyperfmap
        finally:
            sys.path.remove(PKG)
    import pyperfmap
    if pyperfmap.is_enabled():
        msg = 'enabled-before'
    else:
        on = pyperfmap.enable(**({'paths': True} if PATHS else {}))
        msg = 'enabled' if on else 'error: pyperfmap.enable() failed (see the program\\'s stderr)'
        pyperfmap._attached = msg == 'enabled'
    if SAMPLE:
        pyperfmap.sample_allocations(*SAMPLE)
except BaseException as e:
    msg = 'error: %s: %s' % (type(e).__name__, e)
with open(STATUS, 'w') as f:
    f.write(msg)
"""
ATTACH_OFF = """\
import sys
m = sys.modules.get('pyperfmap')
try:
    if getattr(m, '_attached', False):
        m._attached = False
        m.disable()
    if SAMPLE and m:
        m.sample_allocations(0)
    msg = 'disabled'
except BaseException as e:
    msg = 'error: %s: %s' % (type(e).__name__, e)
with open(STATUS, 'w') as f:
    f.write(msg)
"""
# What gdb runs inside the process (with its own Python): a page of memory
# from mmap (a system call wrapper: no lock, unlike malloc, which the
# stopped thread may hold), the code written there, and a pending call of
# PyRun_SimpleString on it.  int (*)(const char *) and int (*)(void *) are
# called alike on every ABI CPython supports.
GDB_SCRIPT = """\
import gdb
def run():
    pid, page, text = PID, PAGE, TEXT
    for t in gdb.selected_inferior().threads():
        if t.ptid[1] == pid:
            t.switch()
    try:
        gdb.parse_and_eval('(long)&Py_AddPendingCall')
    except gdb.error:
        return 'not-cpython'
    if page == 0:
        page = int(gdb.parse_and_eval(
            '(long)((void*(*)(void*,unsigned long,int,int,int,long))mmap)(0,%d,3,0x22,-1,0)' % len(text)))
        if page < 0 or page % 4096:
            return 'error: mmap in the process failed (%d)' % page
        gdb.selected_inferior().write_memory(page, text)
    r = int(gdb.parse_and_eval(
        '((int(*)(void*,void*))Py_AddPendingCall)((void*)PyRun_SimpleString,(void*)%d)' % page))
    return 'queued %d' % page if r == 0 else 'error: Py_AddPendingCall failed (its queue is full)'
try:
    print('PYPERF-ATTACH', run())
except gdb.error as e:
    print('PYPERF-ATTACH error: gdb:', str(e).replace('\\n', ' '))
"""
# How code gets into a running CPython, by version: PEP 768's
# sys.remote_exec from 3.14; before, a pending call queued through ptrace
# (x86-64) or gdb, which needs only Py_AddPendingCall and PyRun_SimpleString.
REMOTE_EXEC = (3, 14)
GDB_TIMEOUT = 60     # seconds for gdb to attach, call and detach, on a loaded machine
SAFE_POINT_WAIT = 10  # seconds for the main thread to reach a safe point


def ptrace_denied(pid):
    return ("cannot attach to PID %d: ptrace is not permitted; run as root, or as its user with"
            " kernel.yama.ptrace_scope 0 (sudo sysctl kernel.yama.ptrace_scope=0; see"
            " /proc/sys/kernel/yama/ptrace_scope), or give CAP_SYS_PTRACE"
            " (a container: --cap-add SYS_PTRACE)" % pid)


def python_version_of(pid):
    """(major, minor) of the CPython running as pid, or None: from the
    libpython it maps or its executable's name (python3.X), else by asking
    the executable itself."""
    try:
        with open("/proc/%d/maps" % pid) as f:
            m = re.search(r"/libpython(\d+)\.(\d+)[^/\s]*\.so", f.read())
        exe = os.path.realpath("/proc/%d/exe" % pid)
    except OSError:
        return None
    m = m or re.match(r"python(\d+)\.(\d+)$", os.path.basename(exe))
    if m:
        return int(m.group(1)), int(m.group(2))
    if not PYTHON_NAME.match(os.path.basename(exe)):
        return None
    r = subprocess.run(["/proc/%d/exe" % pid, "-S", "-c", "import sys; print(*sys.version_info[:2])"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True)
    parts = r.stdout.split() if r.returncode == 0 else []
    return (int(parts[0]), int(parts[1])) if len(parts) == 2 else None


def target(pid, paths=False, sample=None):
    """(an Attach for PID, its executable), after checking that PID is a
    CPython 3.8+ this user may trace; raises RecordError otherwise.  paths
    and sample: what the attached pyperfmap keeps (Attach)."""
    if not os.path.exists("/proc/%d" % pid):
        raise RecordError("no process with PID %d" % pid)
    try:
        # Readable only by whoever may ptrace it, which attaching needs anyway.
        exe = os.readlink("/proc/%d/exe" % pid)
    except PermissionError:
        raise RecordError(ptrace_denied(pid))
    except OSError:
        raise RecordError("no process with PID %d" % pid)
    version = python_version_of(pid)
    if version is None:
        raise RecordError("PID %d (%s) is not a CPython process" % (pid, exe))
    if version < (3, 8):
        raise RecordError("PID %d runs CPython %d.%d; pyperfmap needs 3.8 or later" % ((pid,) + version))
    return Attach(pid, version, paths, sample), exe


def same_dir(a, b):
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


class CannotAttach(Exception):
    """No way into the process (no gdb, no ptrace): fatal only when it was
    not started with pyperfmap."""


class Attach:
    """pyperfmap turned on in a running process, and off again by off()."""

    def __init__(self, pid, version, paths=False, sample=None):
        """sample: (rate, frees) to sample Python's allocations while on."""
        self.pid, self.version = pid, version
        pkg = pyperfmap_package()
        # (one started with pyperfmap has it loaded already: no build needed)
        if not own_map(pid) and \
                not glob.glob(os.path.join(pkg, "_pyperfmap.cpython-%d%d-*.so" % version)):
            raise RecordError("PID %d runs CPython %d.%d, and %s has no pyperfmap build for that version;"
                              " build one (meson setup -Dpythons=/path/to/python%d.%d)" % ((pid,) + version + (pkg,) + version))
        # In the process's own /tmp (a container's is private), which it
        # sees without the /proc/PID/root prefix.
        root = "/proc/%d/root" % pid
        self.dir = tempfile.mkdtemp(prefix="pyperf-attach-", dir=root + "/tmp")
        atexit.register(shutil.rmtree, self.dir, ignore_errors=True)
        inside = self.dir[len(root):]
        st = os.stat("/proc/%d" % pid)
        os.chmod(self.dir, 0o755)
        lib = os.path.dirname(pkg)
        if not same_dir(lib, root + lib):
            # A root of its own (a container) hides this pyperfmap: lend it
            # a copy of what it imports, in its own /tmp.
            lib = os.path.join(self.dir, "lib")
            os.makedirs(os.path.join(lib, "pyperfmap"))
            for f in glob.glob(os.path.join(pkg, "*.py")) + \
                    glob.glob(os.path.join(pkg, "_pyperfmap.cpython-%d%d-*.so" % version)):
                shutil.copy(f, os.path.join(lib, "pyperfmap"))
            for d, _, _ in os.walk(lib):
                os.chmod(d, 0o755)
            lib = lib[len(root):]
        self.status = {}
        code = {}
        for what, body in (("on", ATTACH_ON), ("off", ATTACH_OFF)):
            path = self.status[what] = os.path.join(self.dir, what)
            open(path, "w").close()
            if os.geteuid() == 0:
                os.chown(path, st.st_uid, st.st_gid)  # the process writes it as itself
            # One statement that cannot raise, whatever the program's state.
            code[what] = ("try:\n exec(%r, {'__name__': '__pyperf_attach__', 'PKG': %r, 'STATUS': %r,"
                          " 'PATHS': %r, 'SAMPLE': %r})\nexcept BaseException:\n pass\n"
                          % (body, lib, os.path.join(inside, what), paths, sample))
        self.code, self.inside = code, inside
        self.page = 0  # where "off" waits in the process (ptrace and gdb)
        self.queued = set()  # what inject() has queued in the process

    def inject(self, what):
        """Queues code[what] as a pending call; returns a problem or None."""
        if self.version >= REMOTE_EXEC:
            return self.remote_exec(what)
        if what == "on":
            # Both texts go into one page now: "off" is then one call, no mmap.
            text = self.code["on"].encode().ljust(2048, b"\0")
            off = self.code["off"].encode() + b"\0"
            if len(text) > 2048 or len(off) > 2048:
                raise AssertionError("injected code does not fit its page")
            text, page = text + off, 0
        else:
            text, page = b"", self.page + 2048
        if platform.machine() == "x86_64":
            return self.queue_by_ptrace(what, page, text)
        return self.queue_by_gdb(what, page, text)

    def queue_by_ptrace(self, what, page, text):
        try:
            page = ptrace_inject.pending_call(self.pid, page, text)
        except PermissionError:
            raise CannotAttach(ptrace_denied(self.pid))
        except LookupError:
            raise RecordError("PID %d (%s) is not a CPython process (no Py_AddPendingCall in it)"
                              % (self.pid, os.path.realpath("/proc/%d/exe" % self.pid)))
        except (ptrace_inject.Failed, OSError) as e:
            if not os.path.exists("/proc/%d" % self.pid):
                raise RecordError("PID %d exited" % self.pid)
            return str(e)
        self.page = self.page or page
        self.queued.add(what)
        return None

    def queue_by_gdb(self, what, page, text):
        gdb = shutil.which("gdb")
        if not gdb:
            raise CannotAttach("gdb is not installed, and attaching to a process started without"
                               " pyperfmap needs it (Debian: apt-get install gdb); or start the"
                               " program with PYPERFMAP=1")
        script = os.path.join(self.dir, "gdb-%s.py" % what)
        with open(script, "w") as f:
            f.write(GDB_SCRIPT.replace("PID, PAGE, TEXT", "%d, %d, %r" % (self.pid, page, text)))
        # Not a sanitizer preload meant for the program (CI runs the tests so).
        env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        env["DEBUGINFOD_URLS"] = ""
        try:
            # --readnever: the symbol tables are all it needs, and skipping
            # the debug info shortens the stop from ~1.5 s to ~0.4 s.
            # A session of its own: Ctrl-C at the terminal must not stop gdb
            # in the middle of a call it makes in the process.
            r = subprocess.run([gdb, "-nx", "-batch", "--readnever", "-iex", "set debuginfod enabled off",
                                "-iex", "set auto-load no", "-ex", "set unwindonsignal on",
                                "-p", str(self.pid), "-x", script],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                               universal_newlines=True, env=env, timeout=GDB_TIMEOUT)
        except subprocess.TimeoutExpired:
            return "gdb did not finish within %d s" % GDB_TIMEOUT
        out = r.stdout
        m = re.search(r"^PYPERF-ATTACH (.*)$", out, re.M)
        if m is None:
            if not os.path.exists("/proc/%d" % self.pid):
                raise RecordError("PID %d exited" % self.pid)
            if "ptrace: Operation not permitted" in out:
                raise CannotAttach(ptrace_denied(self.pid))
            last = [line for line in out.splitlines() if line.strip()][-1:] or ["no output"]
            return "gdb failed: %s" % last[0]
        res = m.group(1)
        if res == "not-cpython":
            raise RecordError("PID %d (%s) is not a CPython process (no Py_AddPendingCall in it)"
                              % (self.pid, os.path.realpath("/proc/%d/exe" % self.pid)))
        if res.startswith("queued "):
            self.page = self.page or int(res.split()[1])
            self.queued.add(what)
            return None
        return res

    def remote_exec(self, what):
        """PEP 768 (3.14+): the interpreter runs the file at its next safe point."""
        name = "%s.py" % what
        with open(os.path.join(self.dir, name), "w") as f:
            f.write(self.code[what])
        os.chmod(os.path.join(self.dir, name), 0o644)
        r = subprocess.run(["/proc/%d/exe" % self.pid, "-c", "import sys; sys.remote_exec(%d, %r)"
                            % (self.pid, os.path.join(self.inside, name))], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True, start_new_session=True)
        if r.returncode == 0:
            self.queued.add(what)
            return None
        if "ermission" in r.stdout or "not permitted" in r.stdout:
            raise CannotAttach("cannot attach to PID %d: remote debugging is not permitted; run as"
                               " root or give CAP_SYS_PTRACE (%s)"
                               % (self.pid, r.stdout.strip().splitlines()[-1]))
        return "sys.remote_exec failed: %s" % (r.stdout.strip().splitlines() or ["?"])[-1]

    def wait(self, what):
        """The status the injected code wrote, or None if it has not run
        within SAFE_POINT_WAIT seconds (or, for "on", before an interrupt)."""
        end = time.monotonic() + SAFE_POINT_WAIT
        while True:
            with open(self.status[what]) as f:
                msg = f.read()
            if msg or time.monotonic() > end or (what == "on" and signals.first()):
                return msg or None
            if not os.path.exists("/proc/%d" % self.pid):
                raise RecordError("PID %d exited" % self.pid)
            time.sleep(0.02)

    def on(self):
        """Enables pyperfmap; returns whether it was enabled already.  A
        Ctrl-C, SIGTERM or SIGHUP meanwhile waits (signals.hold()) until the
        injection is done (stopping it during its call in the process could
        break the process); then pyperfmap goes off again, and pyperf-record ends."""
        before = self.enable()
        if signals.first():
            self.off()
            raise RecordError("interrupted while enabling pyperfmap in PID %d" % self.pid, 128 + signals.first())
        return before

    def enable(self):
        started = time.monotonic()
        try:
            problem = self.inject("on")
        except CannotAttach as e:
            return self.as_it_is(str(e))
        if problem:
            raise RecordError("cannot enable pyperfmap in PID %d: %s" % (self.pid, problem))
        msg = self.wait("on")
        if signals.first():
            return False
        if msg == "enabled":
            sys.stderr.write(PROG + ": enabled pyperfmap in PID %d (%.2f s)\n"
                             % (self.pid, time.monotonic() - started))
        if msg is None:
            sys.stderr.write(PROG + ": PID %d's main thread reached no safe point in %d s (it is in a"
                             " long C call: sleep, join, read...); recording anyway, Python functions are"
                             " named from when it does\n" % (self.pid, SAFE_POINT_WAIT))
        elif msg.startswith("error"):
            return self.as_it_is("cannot enable pyperfmap in PID %d: %s" % (self.pid, msg[len("error: "):]))
        return msg == "enabled-before"

    def as_it_is(self, problem):
        """A process that cannot be switched on is recorded as it is when it
        writes a perf map already (started with pyperfmap, or with 3.12's
        -X perf, whose hook keeps pyperfmap out); an error otherwise."""
        if not own_map(self.pid):
            raise RecordError(problem)
        sys.stderr.write(PROG + ": %s; PID %d has a perf map: recording it as it is\n"
                         % (problem, self.pid))
        return True

    def off(self):
        """Turns the trampolines off again; queued after "on", so they run in
        that order even when the main thread has reached neither yet."""
        if "on" not in self.queued or not os.path.exists("/proc/%d" % self.pid):
            return
        started = time.monotonic()
        try:
            problem = self.inject("off")
        except CannotAttach as e:
            problem = str(e)
        msg = None if problem else self.wait("off")
        if msg == "disabled":
            sys.stderr.write(PROG + ": turned pyperfmap off in PID %d (%.2f s)\n"
                             % (self.pid, time.monotonic() - started))
        if problem or (msg and msg.startswith("error")):
            warn("could not turn pyperfmap off in PID %d: %s" % (self.pid, problem or msg))
        elif msg is None:
            sys.stderr.write(PROG + ": PID %d's main thread reached no safe point in %d s;"
                             " pyperfmap goes off when it does\n" % (self.pid, SAFE_POINT_WAIT))
