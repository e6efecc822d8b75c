"""What every test runs programs with: the paths meson gives the tests,
the environment of a recorded program, run(), which runs a command to its
end with its output captured, scratch folders, the shared workloads
(program()) and spin(), the hot leaf of the programs the tests record.

The environment of a recorded program is the build's pyperfmap on
PYTHONPATH (PYPERFMAP_PATH) and, in a sanitized build, the sanitizer
runtimes preloaded (PYMERGE_CHILD_PRELOAD, which meson sets there: the
extension is instrumented, the interpreter is not)."""
import os
import shutil
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.environ.get("PYPERF_SCRIPTS") or os.path.join(HERE, "..", "perf-scripts")
RECORD = os.path.join(SCRIPTS, "pyperf-record")
PYMERGE = os.environ.get("PYMERGE") or shutil.which("pymerge") or "pymerge"
PYPATH = os.environ.get("PYPERFMAP_PATH", "")
PYTHONS = [p for p in os.environ.get("TEST_PYTHONS", "").split(":") if p]
# A bound on any one command, never reached when things work: a hang is
# a failure, not a stuck CI job.
TIMEOUT = 600


def python(version):
    """The CPython of version ("3.12"): the one of TEST_PYTHONS (meson's
    list) named pythonVERSION, else pyenv's newest of that version, else
    pythonVERSION on PATH (not a pyenv shim, a shell script that perf would
    record instead).  An AssertionError when there is none."""
    import glob
    name = "python" + version
    found = [p for p in PYTHONS if os.path.basename(p) == name]
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    found += sorted(glob.glob(os.path.join(root, "versions", version + ".*", "bin", name)),
                    key=lambda p: [int(x) for x in p.split("/")[-3].split(".") if x.isdigit()],
                    reverse=True)
    found += [p for p in [shutil.which(name)] if p and "/shims/" not in p]
    if not found:
        raise AssertionError("no CPython %s: not in TEST_PYTHONS, on PATH or in %s" % (version, root))
    return found[0]


def child_env(extra=None, base=None):
    """base (default: this process's environment) with the build's
    pyperfmap on PYTHONPATH, the sanitizer runtimes preloaded in a
    sanitized build, and extra's variables last."""
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = PYPATH or env.get("PYTHONPATH", "")
    if os.environ.get("PYMERGE_CHILD_PRELOAD"):
        env.update(LD_PRELOAD=os.environ["PYMERGE_CHILD_PRELOAD"], ASAN_OPTIONS="detect_leaks=0")
    env.update(extra or {})
    return env


def run(args, env=None, base=None, timeout=TIMEOUT, check=False, **kw):
    """args run to its end in child_env(env, base), its output text
    (undecodable bytes kept as surrogates); the CompletedProcess.  check:
    an AssertionError with the command and its stderr unless it exits 0."""
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    p = subprocess.run([str(a) for a in args], env=child_env(env, base), timeout=timeout,
                       errors="surrogateescape", **kw)
    if check and p.returncode != 0:
        raise AssertionError("%s exited %d: %s" % (" ".join(map(str, args)), p.returncode, p.stderr))
    return p


def go_env(home):
    """The environment `go` runs in: HOME under home, nothing fetched (no
    modules), no sanitizer preload (CI's sanitized runs preload it for the
    interpreters, not for go), and the machine's own build cache, where
    `go tool pprof` (which Go ships as source) is built on first use: a
    cache of each test's own would build it again, a CPU minute each."""
    env = dict(os.environ, HOME=home, GOFLAGS="", GOPROXY="off", GO111MODULE="off")
    env.pop("LD_PRELOAD", None)
    cache = subprocess.run(["go", "env", "GOCACHE"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           universal_newlines=True, env=dict(env, HOME=os.environ.get("HOME", home)))
    path = cache.stdout.strip()
    env["GOCACHE"] = path if cache.returncode == 0 and os.path.isabs(path) else os.path.join(home, "gocache")
    return env


def output(args, **kw):
    """The standard output of args, which must exit 0."""
    return run(args, check=True, **kw).stdout


def folded(text):
    """[(stack, weight)] of folded text, a pair per line in order.  A line
    that is not "STACK WEIGHT" is an AssertionError naming it; the stack
    may be empty (py-spy writes its idle samples so)."""
    out = []
    for line in text.splitlines():
        stack, sep, w = line.rpartition(" ")
        if not sep or not w.lstrip("-").isdigit():
            raise AssertionError("bad folded line %r" % line)
        out.append((stack, int(w)))
    return out


def folded_sums(text, key=lambda stack: stack):
    """{key(stack): the summed weight of its lines} of folded text."""
    import collections
    out = collections.Counter()
    for stack, w in folded(text):
        out[key(stack)] += w
    return out


def shares(stacks):
    """{frame: its inclusive share of the total weight, 0 to 1} of
    [(frames, weight)]: a stack counts once under each frame it holds,
    however often it holds it."""
    stacks = list(stacks)
    total = sum(w for _, w in stacks)
    on = {}
    for frames, w in stacks:
        for f in set(frames):
            on[f] = on.get(f, 0) + w
    return {f: w / total for f, w in on.items()} if total else {}


def program(name):
    """The source of tests/programs/name: a workload that tests record and
    benchmarks measure, each with its own arguments."""
    with open(os.path.join(HERE, "programs", name)) as f:
        return f.read()


def spin(name, step="i * i"):
    """The source, at the left margin, of a function name(n) that keeps the
    interpreter busy in its own frame for n turns of a loop adding step, and
    returns the sum: a hot frame with a known name, and no call below it
    that a sample could land in instead."""
    return ("def %s(n):\n    s = 0\n    for i in range(n):\n        s += %s\n    return s\n"
            % (name, step))


def check_recorded_maps(test, folder):
    """The perf maps a recording folder holds, and their originals in /tmp
    while they are there, are their entries and nothing else: each line
    "START SIZE name" with its newline, no blank line and no NUL, so that
    each file's size is the sum of its lines (libpyperfmap/mapfile.h),
    however the program ended.  Returns how many maps there were."""
    maps = [f for f in os.listdir(folder) if f.startswith("perf-") and f.endswith(".map")]
    test.assertTrue(maps, "no perf map in %s" % folder)
    for name in maps:
        for path in (os.path.join(folder, name), os.path.join("/tmp", name)):
            if not os.path.exists(path):
                continue
            with open(path, "rb") as f:
                raw = f.read()
            lines = raw.split(b"\n")
            test.assertEqual(lines.pop(), b"", "%s: the last line has no newline" % path)
            bad = [l for l in lines if len(l.split(b" ", 2)) != 3 or not l.split(b" ")[0]
                   or b"\0" in l]
            test.assertEqual(bad[:3], [], "%s: %d of %d lines are not entries" % (path, len(bad), len(lines)))
    return len(maps)


class Scratch(unittest.TestCase):
    """A test with a folder of its own (self.dir) and a list of the perf
    maps its programs write (self.maps), both removed after each test."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="pyperf-test-")
        self.maps = []

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        # each map's line file too (docs/lines.md)
        for m in self.maps + [m[:-len(".map")] + ".lines" for m in self.maps if m.endswith(".map")]:
            try:
                os.unlink(m)
            except OSError:
                pass

    def path(self, name):
        return os.path.join(self.dir, name)

    def write(self, name, text, mode=0o644):
        """The file name in self.dir, holding text; its path."""
        path = self.path(name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, mode)
        return path


class SharedScratch(unittest.TestCase):
    """Tests sharing one folder (cls.dir), made before the first of them
    and removed after the last: for recordings that several tests read."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="pyperf-%s-" % cls.__name__.lower())

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)


def _own_functions():
    """The functions of pyperfmap's own sources (libpyperfmap/*.c) as the
    built extensions' and interposer's symbol tables have them, less the
    names libc defines too (the interposer's malloc is also libc's, which
    a user's stack may rightly hold)."""
    import glob
    import re
    built = glob.glob(os.path.join(PYPATH, "pyperfmap", "*.so"))
    if not built:
        raise AssertionError("no built pyperfmap under %r" % PYPATH)
    src = ""
    for path in glob.glob(os.path.join(HERE, "..", "libpyperfmap", "*.[ch]")):
        with open(path) as f:
            src += f.read()
    written = set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", src))
    nm = subprocess.run(["nm", "--defined-only"] + built, stdout=subprocess.PIPE,
                        universal_newlines=True, check=True).stdout
    defined = {m.group(1) for m in re.finditer(r"^\S+ [tTW] ([A-Za-z_]\w*)", nm, re.M)}
    ldd = subprocess.run(["ldd", built[0]], stdout=subprocess.PIPE, universal_newlines=True).stdout
    libc = re.search(r"libc\.so\.6 => (\S+)", ldd).group(1)
    nm = subprocess.run(["nm", "-D", "--defined-only", libc], stdout=subprocess.PIPE,
                        universal_newlines=True, check=True).stdout
    libc_names = {m.group(1) for m in re.finditer(r"^\S+ \w ([A-Za-z_]\w*)", nm, re.M)}
    own = (defined & written) - libc_names
    if "pyperfmap_first_call" not in own or "sampled_native_alloc" not in own:
        raise AssertionError("pyperfmap's functions not found in %s" % built)
    return own


_OWN = []


def assert_users_frames_only(data, *args):
    """pymerge's python and mixed views of recording data (pymerge's
    arguments args before it) hold no frame of pyperfmap's own sources:
    the mixed view gathers pyperfmap's own work under one [pyperfmap]
    frame, the python view has not even that under a Python frame (the
    time is the caller's)."""
    import re
    if not _OWN:
        _OWN.append(_own_functions())
    for view in ("python", "mixed"):
        r = run([PYMERGE, "--view", view] + list(args) + [data], check=True)
        bad = []
        for line in r.stdout.splitlines():
            frames = line.rsplit(" ", 1)[0].split(";")
            python = any(re.search(r" \([^()]*\)$", f) for f in frames)
            for f in frames:
                m = re.fullmatch(r"([A-Za-z_]\w*)(\.\w+)*", f)
                if (m and m.group(1) in _OWN[0]) or (view == "python" and python and f == "[pyperfmap]"):
                    bad.append(line)
                    break
        if bad:
            raise AssertionError("pyperfmap's own frames in the %s view of %s %s:\n%s"
                                 % (view, " ".join(args), data, "\n".join(bad[:10])))
