"""pymerge --format pprof, read back by the reference reader, go tool pprof.

A real Python program is recorded by pyperf-record (CPU, wall and alloc modes); go
tool pprof -raw of pymerge's pprof must give exactly the stacks and weights
of pymerge's folded output of the same recording, -top the same hottest
functions.  Run by /usr/bin/python3 (meson suite "pprof") with
PYPERF_SCRIPTS, PYMERGE and PYPERFMAP_PATH set; needs `go` (golang-go).
"""
import gzip
import json
import os
import re
import subprocess
import time
import unittest
from collections import Counter

from harness import RECORD, PYMERGE, SharedScratch, folded_sums, go_env, python, run, spin

PYTHON = python("3.12")

# Two hot functions of different weight and a sleeping one, for the wall view.
BURN = spin("spin") + r"""
import time

def hot(): return spin(300000)
def warm(): return spin(100000)
def nap(): time.sleep(0.02)

t = time.monotonic()
while time.monotonic() - t < 1.5:
    hot(); warm(); nap()
"""

# Allocations through libc itself (ctypes), which reach its allocator's
# probes even where a preloaded allocator (the sanitizers' runtime, in CI's
# sanitized pass) serves the interpreter's own: four functions of
# different weight, a few hundred calls a second.
ALLOC_BURN = r"""
import ctypes, time
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]

def big(): libc.free(libc.malloc(65536))
def mid(): libc.free(libc.malloc(16384))
def small(): libc.free(libc.malloc(1024))
def tiny(): libc.free(libc.malloc(64))

t = time.monotonic()
while time.monotonic() - t < 1.5:
    big(); mid(); small(); tiny()
    time.sleep(0.005)
"""

# A Go program that profiles itself with runtime/pprof: two hot functions,
# one about three times the other (no modules: the standard library only).
GO_BURN = r"""
package main

import (
	"os"
	"runtime/pprof"
	"time"
)

//go:noinline
func spinHot(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i % 7
	}
	return s
}

//go:noinline
func spinWarm(n int) int { return spinHot(n) }

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		panic(err)
	}
	s, t := 0, time.Now()
	for time.Since(t) < 1500*time.Millisecond {
		s += spinHot(3000000)
		s += spinWarm(1000000)
	}
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		panic(err)
	}
	if s == 42 {
		println(s)
	}
}
"""


def folded_stacks(text):
    """{stack without its root label: weight} of folded text."""
    return folded_sums(text, key=lambda stack: tuple(stack.split(";")[1:]))


RAW_SAMPLE = re.compile(r"^\s+(\d+(?:\s+\d+)*): ((?:\d+ )*\d*)\s*$")
# name file:line s=start (file:line:column since Go 1.26), then (system
# name) when it differs: pymerge sets none; an inlined location has more
# lines, the caller last.  Names have spaces ("f (x.py)"), files only
# CPython's "<frozen mod>": the shortest name that leaves a file is the
# right split.
RAW_LINE = r"(.*?) (<frozen [^>]*>|\S*?):-?\d+(?::-?\d+)? s=\d+(?:\(.*\))?$"
# M=N names the location's mapping (native code's DSO); Python frames have none.
RAW_LOCATION = re.compile(r"^\s*(\d+): 0x[0-9a-f]+ (?:M=\d+ )?" + RAW_LINE)
RAW_INLINED = re.compile(r"^\s+" + RAW_LINE)


def raw_stacks(text):
    """{stack root first: default-type weight} of go tool pprof -raw."""
    lines = text.splitlines()
    header = lines.index("Samples:") + 1
    types = lines[header].split()
    dflt = [i for i, t in enumerate(types) if t.endswith("[dflt]")]
    dflt = dflt[0] if dflt else len(types) - 1     # pprof's default: the last
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
            if m:
                loc = names[int(m.group(1))] = [m.group(2)]
            else:
                m = RAW_INLINED.match(line)
                assert m, line
                loc.append(m.group(1).strip())
    out = Counter()
    for w, ids in samples:
        if w:
            out[tuple(n for i in ids for n in names[i])[::-1]] += w
    return out


def top_names(text, n):
    """The first n function names of go tool pprof -top."""
    # (a wide value, 25520.32kB, fills the column: no leading blank; a tiny
    # share is in e-notation, 9.9e-05%, as malloc's beside the sanitizers'
    # terabytes of shadow)
    rows = [l for l in text.splitlines()
            if re.match(r"^\s*[\d.]+\w*\s+[\d.]+(?:e[-+]\d+)?%", l)]
    return [re.split(r"\s+", r.strip(), 5)[5] for r in rows[:n]]


def record_burn(tmp, name, *args, program=BURN):
    """pyperf-record ARGS of the BURN program (or another) into tmp/name:
    (its perf.data, when the recording started and ended, wall-clock
    seconds)."""
    script = os.path.join(tmp, "burn.py" if program is BURN else name + ".py")
    with open(script, "w") as f:
        f.write(program)
    out = os.path.join(tmp, name)
    started = time.time()
    r = run([RECORD] + list(args) + ["-o", out, "--", PYTHON, script])
    if r.returncode != 0:
        raise AssertionError("pyperf-record failed: " + r.stderr)
    return os.path.join(out, "perf.data"), started, time.time()


class PymergeCase(SharedScratch):
    """pymerge and go tool pprof, each asserted to succeed (self.env: go_env),
    in a folder shared by the class's tests."""

    def pymerge(self, *args):
        r = run([PYMERGE] + list(args))
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def go_pprof(self, *args):
        r = run(["go", "tool", "pprof"] + list(args), base=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout


class PprofTest(PymergeCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.env = go_env(cls.dir)
        cls.recordings = {mode: record_burn(cls.dir, mode, "--mode", mode)
                          for mode in ("cpu", "wall")}
        cls.recordings["alloc"] = record_burn(cls.dir, "alloc", "--mode", "alloc", "--exact", program=ALLOC_BURN)

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
                self.assertGreater(len(folded), 3)
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
                fifth = ranked[min(4, len(ranked) - 1)]     # ties may reorder the rows
                # (an allocation profile may have fewer than five leaves, and
                # under the sanitizers their runtime's mmaps of terabytes of
                # shadow make every other leaf less than -top's default 0.5%
                # node fraction: all nodes are shown)
                top = self.go_pprof("-top", "-nodefraction=0", pb)
                # the main mapping is the program's executable, in every view
                self.assertIn("\nFile: %s\n" % os.path.basename(os.path.realpath(PYTHON)),
                              "\n" + top, top[:300])
                for name in top_names(top, min(5, len(ranked))):
                    self.assertGreaterEqual(self_w[name], fifth, (name, self_w.most_common(6)))
                self.assertIn(top_names(top, 1)[0],
                              [n for n, w in self_w.items() if w == ranked[0]])

    def test_cpu_recording_agrees_with_go_tool_pprof(self):
        self.check_agreement("cpu", ["mixed", "python", "native"])

    def test_wall_recording_agrees_with_go_tool_pprof(self):
        self.check_agreement("wall", ["mixed", "python"])

    def test_alloc_recording_agrees_with_go_tool_pprof(self):
        """Bytes asked of libc's allocators (uprobes), by merged stack."""
        self.check_agreement("alloc", ["mixed", "python"])

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
        self.assertRegex(raw, r" hot \(burn\.py\) \S*burn\.py:0(?::0)? s=0")
        self.assertRegex(raw, r" <module> \(burn\.py\) ")

    def go_profile(self):
        """A CPU profile written by a real Go program's runtime/pprof."""
        if not hasattr(PprofTest, "_go"):
            src = os.path.join(self.dir, "goburn")
            os.makedirs(src, exist_ok=True)
            with open(os.path.join(src, "main.go"), "w") as f:
                f.write(GO_BURN)
            exe, pb = os.path.join(src, "goburn"), os.path.join(self.dir, "go.pb.gz")
            r = run(["go", "build", "-o", exe, "main.go"], cwd=src, base=self.env)
            self.assertEqual(r.returncode, 0, r.stderr)
            # On a busy machine the runtime's signal preemption puts
            # runtime.asyncPreempt on top of spinHot in many samples.
            r = run([exe, pb], base=self.env, env={"GODEBUG": "asyncpreemptoff=1"})
            self.assertEqual(r.returncode, 0, r.stderr)
            PprofTest._go = pb
        return PprofTest._go

    def test_input_pprof_reads_a_go_runtime_pprof_profile(self):
        pb = self.go_profile()
        folded = self.pymerge("--input", "pprof", pb).stdout
        stacks = folded_stacks(folded)
        # the reference reader sees the same stacks and weights (cpu, in ns)
        self.assertEqual(stacks, raw_stacks(self.go_pprof("-raw", pb)))
        self_w = Counter()
        for stack, w in stacks.items():
            self_w[stack[-1]] += w
        self.assertEqual(self_w.most_common(1)[0][0], "main.spinHot", self_w)
        self.assertTrue(any(st[-2:] == ("main.spinWarm", "main.spinHot") for st in stacks), stacks)
        # the root is the program, pprof's main mapping
        self.assertTrue(all(l.startswith("goburn;") for l in folded.splitlines()), folded[:300])
        # every other format and diff work on it
        svg = self.pymerge("--input", "pprof", "--format", "svg", pb).stdout
        self.assertIn("main.spinHot", svg)
        sc = json.loads(self.pymerge("--input", "pprof", "--format", "speedscope", pb).stdout)
        self.assertEqual(sc["profiles"][0]["unit"], "nanoseconds")
        table = self.pymerge("diff", "--format", "table", pb, pb).stdout
        self.assertIn("main.spinHot", table)
        samples = self.pymerge("--input", "pprof", "--weight", "samples", pb).stdout
        self.assertLess(sum(folded_stacks(samples).values()), sum(stacks.values()))

    def test_round_trip_through_pprof_keeps_the_folded_output(self):
        """pprof written and read back gives the folded stacks of the
        recording, gzip'd or bare, recognized by its bytes without
        --input, as folded text is."""
        for mode in ("cpu", "wall"):
            with self.subTest(mode=mode):
                data = self.recordings[mode][0]
                pb = os.path.join(self.dir, "rt-%s.pb.gz" % mode)
                self.pymerge("--format", "pprof", "-o", pb, data)
                self.assertEqual(self.pymerge("--input", "pprof", pb).stdout,
                                 self.pymerge(data).stdout)
                # not gzip'd: the bare message reads too
                bare = pb[:-3]
                with gzip.open(pb) as f, open(bare, "wb") as g:
                    g.write(f.read())
                self.assertEqual(self.pymerge("--input", "pprof", bare).stdout,
                                 self.pymerge(data).stdout)
                # told by its bytes, gzip'd or bare, and so is folded text
                folded = os.path.join(self.dir, "rt-%s.folded" % mode)
                with open(folded, "w") as f:
                    f.write(self.pymerge(data).stdout)
                for path in (pb, bare, folded):
                    self.assertEqual(self.pymerge(path).stdout, self.pymerge(data).stdout)
                # diff tells pprof from folded and perf.data by its magic
                r = self.pymerge("diff", "--format", "table", "--fail-above", "0.01", data, pb)
                self.assertEqual(r.returncode, 0)

    def test_bad_pprof_is_one_line_and_exit_2(self):
        pb = self.go_profile()
        with open(pb, "rb") as f:
            good = f.read()
        raw = gzip.decompress(good)
        bad = {
            "empty": b"",
            "truncated-gzip": good[:len(good) // 2],
            "corrupt-gzip": good[:20] + bytes(b ^ 0x55 for b in good[20:60]) + good[60:],
            "wrong-magic": b"PK\x03\x04" + good[4:],
            "truncated-message": gzip.compress(raw[:len(raw) // 2]),
            "garbage-message": gzip.compress(bytes(range(256)) * 8),
            "text": b"this is not a profile\n",
        }
        for name, data in bad.items():
            with self.subTest(name=name):
                path = os.path.join(self.dir, "bad-" + name)
                with open(path, "wb") as f:
                    f.write(data)
                for args in (["--input", "pprof"], ["--input", "pprof", "--format", "svg"]):
                    r = run([PYMERGE] + args + [path])
                    self.assertEqual(r.returncode, 2, (args, r.stdout[:200], r.stderr))
                    self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                    self.assertTrue(r.stderr.startswith("pymerge: " + path + ": "), r.stderr)

    def test_write_error_is_one_line_and_exit_2(self):
        data = self.recordings["cpu"][0]
        with open("/dev/full", "w") as full:
            r = subprocess.run([PYMERGE, "--format", "pprof", data], stdout=full,
                               stderr=subprocess.PIPE, text=True, timeout=120)
        self.assertEqual(r.returncode, 2)
        # a loaded machine can lose records while recording: that warning
        # may come first, and the write error must be the one line after it
        lines = [l for l in r.stderr.splitlines() if "were lost while recording" not in l]
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("write error", lines[0])

    def test_gzip_holds_a_protobuf_with_the_file_names(self):
        pb = os.path.join(self.dir, "plain.pb.gz")
        self.pymerge("--format", "pprof", "-o", pb, self.recordings["cpu"][0])
        with gzip.open(pb) as f:
            body = f.read()
        self.assertIn(b"burn.py", body)


if __name__ == "__main__":
    unittest.main()
