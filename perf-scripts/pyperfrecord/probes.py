"""What the tracing modes need from the kernel: tracefs mounted, and
uprobes on the C allocator (alloc, leaks) or on pyperfmap's static probes
(calls), in a group of this process's own; and perf record's events for
each mode."""
import contextlib
import fcntl
import os
import re
import shutil
import struct
import subprocess
import tempfile
import time

from pyperfrecord import RecordError, contract

TRACEFS = "/sys/kernel/tracing"


@contextlib.contextmanager
def probes_lock():
    """One recording at a time adds or removes probes: perf probe reads the
    system's whole list of events, and one that another perf probe -d
    removes meanwhile made perf probe -n fail (ENOENT, EEXIST) when
    recordings ran side by side."""
    with open("/tmp/.pyperf-record-probes.lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield
# Tracepoints are recorded at every event (no -F: pairing needs them all),
# with buffers big enough for bursts of DWARF stacks: an interpreter's start
# and 1000 write(2) calls in a row, with 32 KiB stacks, are ~64 MB of samples
# that perf may not drain in time (measured here: 64 MiB lost 128 of them,
# 16 MiB most).  Locked per CPU, as root.
TRACE_BUFFER = "128M"
# pyperfmap's probes beside CPython's standard function markers
# (libpyperfmap/markers.h): the event each becomes and its arguments, the
# trampoline's address and, at an entry, whether it is a call or a
# resumption (the names pymerge's calls mode reads).
CALL_PROBES = (("pyperfmap:call__entry", "function__entry", (contract.FIELD_TRAMP, "kind")),
               ("pyperfmap:call__return", "function__return", (contract.FIELD_TRAMP,)))
# uprobes on the C allocator, x86-64 argument registers (rdi, rsi, rdx).
# The requested size is the same field ({b}: FIELD_BYTES) in each, so that
# one --weight reads them all; {p} is the pointer (FIELD_PTR); calloc also
# keeps its element count.
ALLOC_PROBES = tuple((f, spec.format(p=contract.FIELD_PTR, b=contract.FIELD_BYTES)) for f, spec in (
    ("malloc", "{b}=%di:u64"),
    ("calloc", "nmemb=%di:u64 {b}=%si:u64"),
    ("realloc", "{p}=%di:u64 {b}=%si:u64"),
    ("posix_memalign", "{b}=%dx:u64"),
    ("aligned_alloc", "{b}=%si:u64"),
))
# The leaks mode: the entries (with stacks), the pointers they return and
# what free releases (no stacks: the entry's, or none, says it all).
# posix_memalign returns its pointer through memory no return probe reads.
LEAK_RETURNS = ("malloc", "calloc", "realloc", "aligned_alloc")
LEAK_PROBES = tuple(p for p in ALLOC_PROBES if p[0] in LEAK_RETURNS) + tuple(
    (f + "%return", contract.FIELD_PTR + "=$retval:u64") for f in LEAK_RETURNS) + (
    ("free", contract.FIELD_PTR + "=%di:u64"),)


def mount_tracefs():
    """Mounts tracefs when it is missing; returns whether we did (and so
    must unmount it)."""
    if os.path.isdir(os.path.join(TRACEFS, "events")):
        return False
    if os.geteuid() != 0:
        raise RecordError("tracefs is not mounted, and tracepoints need it;"
                          " fix: sudo mount -t tracefs nodev %s" % TRACEFS)
    r = subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if r.returncode != 0:
        raise RecordError("cannot mount tracefs at %s: %s" % (TRACEFS, r.stdout.strip()))
    return True


def libc_of(python=None, pid=None):
    """The C library the process uses: from /proc/PID/maps, or from what
    the dynamic loader gives the interpreter."""
    if pid is not None:
        with open("/proc/%d/maps" % pid) as f:
            found = re.search(r"\s(/\S*/libc(?:[.-]\S*)?\.so\S*)$", f.read(), re.M)
    else:
        out = subprocess.run(["ldd", python], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             universal_newlines=True).stdout
        found = re.search(r"^\s*libc\.so\S*\s+=>\s+(\S+)", out, re.M)
    if not found:
        raise RecordError("cannot tell which C library %s uses" % ("PID %d" % pid if pid is not None else python))
    return os.path.realpath(found.group(1))


def function_offsets(path, names):
    """{name: file offset} of the functions names defined in the dynamic
    symbol table of the ELF64 file path (little-endian, as on x86-64)."""
    with open(path, "rb") as f:
        elf = f.read()
    if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        raise RecordError("%s is not a 64-bit little-endian ELF file" % path)
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", elf, 0x3a)
    sections = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    found = {}
    for sh in sections:
        if sh[1] != 11:                 # SHT_DYNSYM; its sh_link names the strings
            continue
        strtab = sections[sh[6]]
        for off in range(sh[4], sh[4] + sh[5], 24):
            st_name, st_info, _, st_shndx, st_value, _ = struct.unpack_from("<IBBHQQ", elf, off)
            end = elf.index(b"\0", strtab[4] + st_name)
            name = elf[strtab[4] + st_name:end].decode()
            if name in names and st_info & 0xf == 2 and 0 < st_shndx < len(sections):   # STT_FUNC
                home = sections[st_shndx]
                found.setdefault(name, st_value - home[3] + home[4])   # sh_addr -> sh_offset
    return found


class AllocProbes:
    """The allocator uprobes of one recording, in a group named after this
    process so that recordings running side by side never share one.  They
    are written to tracefs at each function's own address: perf probe -x
    with arguments also probes PLT stubs it names after the function (in
    Debian 12's libc it names realloc's stub calloc@plt, whose calls then
    count as callocs)."""

    def __init__(self, perf, libc, probes=ALLOC_PROBES):
        self.perf, self.libc, self.group = perf, libc, contract.PROBE_GROUP_PREFIX + str(os.getpid())
        self.probes = probes
        self.events = []

    def write(self, name, definition):
        """Adds the uprobe group/name (a line of uprobe_events without its "p:")."""
        # os.write: a Python file in append mode seeks to the end, which tracefs refuses
        try:
            fd = os.open(os.path.join(TRACEFS, "uprobe_events"), os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, (definition + "\n").encode())
            finally:
                os.close(fd)
        except OSError as e:
            raise RecordError("cannot add the uprobe %s:%s: %s" % (self.group, name, e.strerror))
        self.events.append("%s:%s" % (self.group, name))

    def add(self):
        offsets = function_offsets(self.libc, {func.split("%")[0] for func, _ in self.probes})
        for func, args in self.probes:
            name = func.split("%")[0]
            if name not in offsets:
                raise RecordError("%s defines no function %s" % (self.libc, name))
            # named as perf probe names a return probe: malloc%return -> malloc__return
            kind, name = ("r", name + "__return") if func.endswith("%return") else ("p", name)
            self.write(name, "%s:%s/%s %s:0x%x %s" % (kind, self.group, name, self.libc, offsets[func.split("%")[0]], args))

    def remove(self):
        if self.events:
            with probes_lock():
                subprocess.run([self.perf, "probe", "-q", "-d", self.group + ":*"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.events = []


class StaticProbes(AllocProbes):
    """pyperfmap's static probes (USDT) in the files a program loads, as
    uprobes of a group named after this process.  perf's own SDT events
    (sdt_python:function__entry) have one name on the whole system,
    which recordings side by side, or extensions of two CPythons, would
    share: perf computes each probe's definition (address, semaphore,
    argument registers) and this writes it under the group's name, with
    the arguments named.  probes: (file, PROVIDER:NAME, event name,
    argument names) each; an argument named None is not recorded (the
    function markers' strings)."""

    def __init__(self, perf, probes):
        AllocProbes.__init__(self, perf, None, probes)

    def cache(self, path, env):
        """perf reads SDT notes from its build-id cache only."""
        r = subprocess.run([self.perf, "buildid-cache", "--add", path], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True, env=env)
        if r.returncode != 0:
            raise RecordError("perf buildid-cache --add %s failed: %s" % (path, r.stdout.strip()))

    def definition(self, path, sdt, env):
        """perf's definition of probe sdt in path: (location, ["argN=REG"...]),
        or (None, perf's output).  -f: perf refuses a dry run (EEXIST)
        while any event of the system has the SDT event's name, which
        another tool may have made (perf probe -a sdt_...).  Asked up to
        five times, a second apart: perf probe -n reads every event of the
        system, which other tools may add and remove meanwhile."""
        for attempt in range(5):
            if attempt:
                time.sleep(1)
            r = subprocess.run([self.perf, "probe", "-n", "-f", "-v", "-x", path, "%sdt_" + sdt],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                               env=env)
            m = re.search(r"^Writing event: p:\S+ (\S+:0x[0-9a-f]+\(0x[0-9a-f]+\))((?: arg\d+=\S+)*)$",
                          r.stdout, re.M)
            if m:
                return m.group(1), m.group(2).split()
        return None, r.stdout

    def add(self):
        # perf takes SDT definitions from the user's build-id cache, which
        # names every copy of a build it was given (a deleted pip build of
        # the same extension makes perf probe fail with ENOENT) and which
        # two perf commands cannot update at once: a cache of its own
        # (perf's is $HOME/.debug), for this recording only.
        home = tempfile.mkdtemp(prefix="pyperf-sdt-")
        try:
            with probes_lock():
                self.add_from(dict(os.environ, HOME=home))
        finally:
            shutil.rmtree(home, ignore_errors=True)

    def add_from(self, env):
        cached = set()
        for path, sdt, event, args in self.probes:
            if path not in cached:
                self.cache(path, env)
                cached.add(path)
            where, regs = self.definition(path, sdt, env)
            if where is None or len(regs) != len(args):
                last = (regs.strip().splitlines() or ["nothing"])[-1] if where is None else "its arguments differ"
                raise RecordError("%s has no static probe %s (a build without systemtap-sdt-dev's"
                                  " sys/sdt.h, or -Dusdt=disabled; perf probe said: %s)" % (path, sdt, last))
            fields = "".join(" %s=%s" % (a.split(":")[0], fetch(a, reg.split("=", 1)[1]))
                             for a, reg in zip(args, regs) if a)
            self.write(event, "p:%s/%s %s%s" % (self.group, event, where, fields))


def fetch(arg, reg):
    """perf's fetch of an argument (%r14:u64); an argument named NAME:string
    is a C string it points to."""
    if arg.endswith(":string"):
        return "+0(%s):string" % reg.split(":")[0]
    return reg


def call_probes(perf, ext):
    """The calls mode's: pyperfmap's call__entry and call__return, fired
    beside CPython's standard function markers, with the trampoline's
    address."""
    return StaticProbes(perf, [(ext, sdt, event, args) for sdt, event, args in CALL_PROBES])


# pyperfmap.span's probes (libpyperfmap/spans.h): the event each becomes
# and its arguments, as pymerge reads them (merge/modes/spans.c).
SPAN_PROBES = (("pyperfmap:span__enter", "span__enter", ("id", "parent", "name:string", "labels:string")),
               ("pyperfmap:span__exit", "span__exit", ("id", "parent", "labels:string")),
               ("pyperfmap:span__switch", "span__switch", ("id",)))


def span_probes(perf, ext):
    """pyperfmap.span's enter and exit probes in extension ext."""
    return StaticProbes(perf, [(ext, sdt, event, args) for sdt, event, args in SPAN_PROBES])


def finalize_probe(ext):
    """The probe at the end of the program's own code in extension ext."""
    return (ext, "pyperfmap:finalize", contract.EVENT_FINALIZE, ())


def sampled_probes(perf, ext, preload, frees):
    """The sampled alloc and leaks modes': Python's allocations (py_alloc)
    and, when preload (the interposer) is given, the C allocator's
    (c_alloc), each with its pointer, the bytes asked for and the weight
    (bytes it stands for); with frees, the frees of those blocks (py_free,
    c_free) and the end of the program's own code (finalize)."""
    fields = (contract.FIELD_PTR, contract.FIELD_BYTES, contract.FIELD_WEIGHT)
    probes = [(ext, "pyperfmap:alloc", contract.EVENT_PY_ALLOC, fields)]
    if preload:
        probes.append((preload, "pyperfmap:native_alloc", contract.EVENT_C_ALLOC, fields))
    if frees:
        probes.append((ext, "pyperfmap:free", contract.EVENT_PY_FREE, (contract.FIELD_PTR,)))
        if preload:
            probes.append((preload, "pyperfmap:native_free", contract.EVENT_C_FREE, (contract.FIELD_PTR,)))
        probes.append(finalize_probe(ext))
    return StaticProbes(perf, probes)


class Probes:
    """Two sets of probes of one recording, added and removed together."""

    def __init__(self, *sets):
        self.sets = sets
        self.group = sets[0].group

    @property
    def events(self):
        return [e for p in self.sets for e in p.events]

    def add(self):
        for p in self.sets:
            p.add()

    def remove(self):
        for p in self.sets:
            p.remove()


def preload_library():
    """pyperfmap's malloc interposer, beside its extensions."""
    from pyperfrecord.command import pyperfmap_package
    path = os.path.join(pyperfmap_package(), "libpyperfmap-preload.so")
    if not os.path.exists(path):
        raise RecordError("%s is missing: pyperfmap was built without sys/sdt.h (systemtap-sdt-dev), which"
                          " sampled allocations need; use --exact" % path)
    return path


def pyperfmap_extension(python=None, env=None, pid=None):
    """The _pyperfmap extension that the program's interpreter imports (the
    one mapped in process pid)."""
    if pid is not None:
        with open("/proc/%d/maps" % pid) as f:
            found = re.search(r"\s(/\S*/_pyperfmap\.\S*\.so)$", f.read(), re.M)
        if not found:
            raise RecordError("PID %d has not loaded pyperfmap's extension" % pid)
        return found.group(1)
    return subprocess.run([python, "-c", "import pyperfmap._pyperfmap as m; print(m.__file__)"],
                          stdout=subprocess.PIPE, env=env, universal_newlines=True, check=True).stdout.strip()


# Events whose stacks say nothing: a return or a free is paired with what
# made the block, the end of the program's code is a time.
NO_STACK = (":free", "__return", ":" + contract.EVENT_PY_FREE, ":" + contract.EVENT_C_FREE,
            ":" + contract.EVENT_FINALIZE)


# The kernel puts the build ids of the objects sampled in the mmap
# records, where pymerge and --archive (perf buildid-list) find them, so
# perf does not read its whole file again when it stops (a second for 12
# MB of a 2 s recording, after --duration ran out).
BUILDID_MMAP = ["--buildid-mmap"]
# perf's own compression, for the modes that copy stacks at every switch
# or system call: one program's copies are much alike.  Not the cpu mode:
# with -z, perf 6.1's -p recordings of a busy thread sometimes kept a few
# samples or none (pyperf-top's sessions, and one CI run's attach test,
# whose 2 s of a spinning target held no stack).
COMPRESS = ["-z"] + BUILDID_MMAP


def mode_events(mode, event, freq, probes=None, syscalls=False, exact=False, switch_copy=None, live=False):
    """perf record's event options for a mode; switch_copy: the bytes of
    stack each context switch copies, with DWARF call graphs; live: for
    pyperf-top's pipe, where the build ids need not be kept."""
    if mode == "calls":
        opts = []
        # no stacks: the entries and returns make them
        for e in probes.events + ["raw_syscalls:sys_enter", "raw_syscalls:sys_exit"][:2 * syscalls]:
            opts += ["-e", e]
        # The switches time the end of what was still running when the
        # recording stopped (a thread's last entry may be long before).
        return opts + ["--switch-events", "-m", TRACE_BUFFER]
    if mode in ("alloc", "leaks"):
        opts = []
        # exact: mmap calls are system calls; sampled: the interposer's
        for e in probes.events + ["syscalls:sys_enter_mmap"][:exact and mode == "alloc"]:
            opts += ["-e", e + "/call-graph=no/" if e.endswith(NO_STACK) else e]
        return opts + ["-m", TRACE_BUFFER]
    if mode == "cpu":
        return ["-e", event, "-F", str(freq)] + ([] if live else BUILDID_MMAP)
    # Waits copy whole stacks (command.py), much of them pages the thread
    # never wrote: zstd takes a 3 s select() loop's 25 MB to 0.2 MB, and 8 s
    # of gunicorn under load from 443 MB to 10 MB.
    switch = ["-e", "sched:sched_switch", "--switch-events", "-m", TRACE_BUFFER] + COMPRESS
    if switch_copy:
        switch[1] += "/call-graph=dwarf,stack-size=%d/" % switch_copy
    if mode == "offcpu":
        return switch
    if mode == "wall":
        return ["-e", "cpu-clock/freq=%d/" % freq] + switch
    # sys_exit only closes the call: its stack would double the data for
    # nothing.  A busy program's copies are much alike and compress well:
    # 5 s of 50,000 write()s a second (8 KiB copies) take 8 MB with -z.
    return ["-e", "raw_syscalls:sys_enter",
            "-e", "raw_syscalls:sys_exit/call-graph=no/", "-m", TRACE_BUFFER] + COMPRESS
