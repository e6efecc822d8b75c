"""pymerge --format pprof, read back by the reference reader, go tool pprof.

A real Python program is recorded by pyperf-record (CPU and wall modes); go
tool pprof -raw of pymerge's pprof must give exactly the stacks and weights
of pymerge's folded output of the same recording, -top the same hottest
functions.  Run by /usr/bin/python3 (meson suite "pprof") with
PYPERF_SCRIPTS, PYMERGE and PYPERFMAP_PATH set; needs `go` (golang-go).
"""
import gzip
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest
from collections import Counter

SCRIPTS = os.environ.get("PYPERF_SCRIPTS", os.path.join(os.path.dirname(__file__), "..", "perf-scripts"))
RECORD = os.path.join(SCRIPTS, "pyperf-record")
PYMERGE = os.environ.get("PYMERGE", "pymerge")
PYPATH = os.environ.get("PYPERFMAP_PATH", "")
PYTHON = "/root/.pyenv/versions/3.12.1/bin/python3.12"

# Two hot functions of different weight and a sleeping one, for the wall view.
BURN = r"""
import time

def spin(n):
    s = 0
    for i in range(n):
        s += i * i
    return s

def hot(): return spin(300000)
def warm(): return spin(100000)
def nap(): time.sleep(0.02)

t = time.monotonic()
while time.monotonic() - t < 1.5:
    hot(); warm(); nap()
"""


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          errors="surrogateescape", timeout=600, **kw)


def folded_stacks(text):
    """{stack without its root label: weight} of folded text."""
    out = Counter()
    for line in text.splitlines():
        stack, w = line.rsplit(" ", 1)
        out[tuple(stack.split(";")[1:])] += int(w)
    return out


RAW_SAMPLE = re.compile(r"^\s+(\d+(?:\s+\d+)*): ((?:\d+ )*\d*)\s*$")
# name file:line s=start, then (system name) when it differs: pymerge sets none
RAW_LOCATION = re.compile(r"^\s*(\d+): 0x[0-9a-f]+ M=\d+ (.*) (\S*):-?\d+ s=\d+(?:\(\))?$")


def raw_stacks(text):
    """{stack root first: default-type weight} of go tool pprof -raw."""
    lines = text.splitlines()
    header = lines.index("Samples:") + 1
    types = lines[header].split()
    dflt = [i for i, t in enumerate(types) if t.endswith("[dflt]")]
    dflt = dflt[0] if dflt else 0
    names, samples, section = {}, [], "samples"
    for line in lines[header + 1:]:
        if line == "Locations":
            section = "locations"
            continue
        if line == "Mappings":
            break
        if section == "samples":
            m = RAW_SAMPLE.match(line)
            if m:
                samples.append((int(m.group(1).split()[dflt]), [int(x) for x in m.group(2).split()]))
        else:
            m = RAW_LOCATION.match(line)
            assert m, line
            names[int(m.group(1))] = m.group(2)
    out = Counter()
    for w, ids in samples:
        if w:
            out[tuple(names[i] for i in reversed(ids))] += w
    return out


def top_names(text, n):
    """The first n function names of go tool pprof -top."""
    rows = [l for l in text.splitlines() if re.match(r"^\s+[\d.]+\w*\s+[\d.]+%", l)]
    return [re.split(r"\s+", r.strip(), 5)[5] for r in rows[:n]]


class PprofTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="pm-pprof-")
        # go keeps its cache under HOME; nothing is fetched (no modules)
        cls.env = dict(os.environ, HOME=cls.dir, GOCACHE=os.path.join(cls.dir, "gocache"),
                       GOFLAGS="", GOPROXY="off", GO111MODULE="off")
        # CI's sanitizer run preloads ASan for the interpreters, not for go
        cls.env.pop("LD_PRELOAD", None)
        script = os.path.join(cls.dir, "burn.py")
        with open(script, "w") as f:
            f.write(BURN)
        env = dict(os.environ, PYTHONPATH=PYPATH)
        cls.recordings = {}
        for mode in ("cpu", "wall"):
            out = os.path.join(cls.dir, mode)
            started = time.time()
            r = run([RECORD, "--mode", mode, "-o", out, "--", PYTHON, script], env=env)
            if r.returncode != 0:
                raise AssertionError("pyperf-record failed: " + r.stderr)
            cls.recordings[mode] = (os.path.join(out, "perf.data"), started, time.time())

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def pymerge(self, *args):
        r = run([PYMERGE] + list(args))
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def go_pprof(self, *args):
        r = run(["go", "tool", "pprof"] + list(args), env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def check_agreement(self, mode, views):
        data, started, ended = self.recordings[mode]
        for view in views:
            with self.subTest(mode=mode, view=view):
                pb = os.path.join(self.dir, "%s-%s.pb.gz" % (mode, view))
                self.pymerge("--view", view, "--format", "pprof", "-o", pb, data)
                with open(pb, "rb") as f:
                    self.assertEqual(f.read(2), b"\x1f\x8b")     # gzip
                folded = folded_stacks(self.pymerge("--view", view, data).stdout)
                raw = self.go_pprof("-raw", pb)
                got = raw_stacks(raw)
                self.assertGreater(len(folded), 10)
                self.assertEqual(got, folded)
                # the recording's span, in wall-clock time
                m = re.search(r"^Time: (.*)$", raw, re.M)
                self.assertTrue(m, raw[:500])
                dur = float(re.search(r"^Duration: ([\d.]+)", raw, re.M).group(1))
                self.assertGreater(dur, 1.0)
                self.assertLess(dur, ended - started + 1)
                # -top: the hottest functions by self weight, as folded says
                self_w = Counter()
                for stack, w in folded.items():
                    self_w[stack[-1]] += w
                ranked = sorted(self_w.values(), reverse=True)
                for name in top_names(self.go_pprof("-top", pb), 5):
                    self.assertGreaterEqual(self_w[name], ranked[4], (name, self_w.most_common(6)))
                self.assertIn(top_names(self.go_pprof("-top", pb), 1)[0],
                              [n for n, w in self_w.items() if w == ranked[0]])

    def test_cpu_recording_agrees_with_go_tool_pprof(self):
        self.check_agreement("cpu", ["mixed", "python", "native"])

    def test_wall_recording_agrees_with_go_tool_pprof(self):
        self.check_agreement("wall", ["mixed", "python"])

    def test_wall_value_types_and_labels(self):
        data = self.recordings["wall"][0]
        pb = os.path.join(self.dir, "wall-types.pb.gz")
        self.pymerge("--tid", "--format", "pprof", "-o", pb, data)
        raw = self.go_pprof("-raw", pb)
        header = raw.splitlines()[raw.splitlines().index("Samples:") + 1].split()
        self.assertIn("wall/nanoseconds[dflt]", header)
        self.assertIn("cpu/nanoseconds", header)
        self.assertIn("offcpu/nanoseconds", header)
        self.assertRegex(raw, r"thread_name:\[python3\.12\]")
        self.assertRegex(raw, r"pid:\[\d+\] tid:\[\d+\]")
        # python functions carry their file
        self.assertRegex(raw, r" hot \(burn\.py\) \S*burn\.py:0 s=0")
        self.assertRegex(raw, r" <module> \(burn\.py\) ")

    def test_write_error_is_one_line_and_exit_2(self):
        data = self.recordings["cpu"][0]
        with open("/dev/full", "w") as full:
            r = subprocess.run([PYMERGE, "--format", "pprof", data], stdout=full,
                               stderr=subprocess.PIPE, text=True, timeout=120)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertIn("write error", r.stderr)

    def test_gzip_holds_a_protobuf_with_the_file_names(self):
        pb = os.path.join(self.dir, "plain.pb.gz")
        self.pymerge("--format", "pprof", "-o", pb, self.recordings["cpu"][0])
        with gzip.open(pb) as f:
            body = f.read()
        self.assertIn(b"burn.py", body)


if __name__ == "__main__":
    unittest.main()
