"""Off-CPU, wall-clock, system-call and field weights, end to end.

Real programs are recorded by pyperf-record --mode (real perf, real
tracepoints, as root: tracefs is mounted by pyperf-record when missing) and
merged by pymerge; every figure is checked against what the program itself
measured.  Run by /usr/bin/python3 (meson suite "modes") with PYPERF_SCRIPTS,
PYMERGE, PYPERFMAP_PATH, and SPEEDSCOPE_SCHEMA set; TEST_PYTHONS lists the
interpreters for the GIL test.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict

import harness
from harness import (RECORD, PYMERGE, SCRIPTS, SharedScratch, assert_users_frames_only, child_env,
                     python, run, spin)

sys.path.insert(0, SCRIPTS)
from pyperfrecord.probes import probes_lock  # noqa: E402

SCHEMA = os.environ.get("SPEEDSCOPE_SCHEMA", "")
APP = os.environ.get("SPEEDSCOPE_APP", "")
CHROMIUM = shutil.which("chromium")

# Opens the app on a profile in a frame of the same origin, switches it to
# the Sandwich view (key 3: a table, where the flame charts are canvas) and
# writes the page's text into its own DOM, which --dump-dom prints.
APP_PAGE = """<!DOCTYPE html><html><body><pre id="result">not loaded</pre>
<iframe id="app" src="index.html#profileURL=%s" width="1200" height="800"></iframe>
<script>
var tries = 0, switched = false, waited = 0;
function poll() {
  var d = document.getElementById('app').contentDocument, w = d && d.defaultView;
  var text = d && d.body ? d.body.innerText : '';
  if (w && !switched && text.indexOf('Sandwich') >= 0 && d.title.indexOf('speedscope') >= 0
      && d.title.indexOf(' - ') >= 0) {
    [].slice.call(d.querySelectorAll('div')).forEach(function (e) {
      if (e.children.length <= 1 && /^\\S*Sandwich$/.test(e.textContent)) e.click();
    });
    w.dispatchEvent(new w.KeyboardEvent('keydown', {key: '3', bubbles: true}));
    switched = true;
  }
  /* The table's list sizes itself from its box, which may not be laid
   * out yet when the view switches: ask it to measure again */
  if (switched && ++waited %% 10 == 0) {
    w.dispatchEvent(new w.Event('resize'));
    w.dispatchEvent(new w.KeyboardEvent('keydown', {key: '3', bubbles: true}));
  }
  /* the table's first rows are there once a weight follows its header */
  if ((switched && /Symbol Name\\n[\\s\\S]*\\d+(\\.\\d+)?[a-z]*s \\(/.test(text)) || ++tries > 120) {
    document.getElementById('result').textContent = JSON.stringify({title: d ? d.title : '', text: text});
    return;
  }
  setTimeout(poll, 500);
}
setTimeout(poll, 500);
</script></body></html>"""
PYTHON = python("3.12")
# A probe of this test's own, group and event: perf probe refuses an event
# name that any group of the system has, and test_events and
# pyperf-record's alloc modes (other suites, run meanwhile) probe malloc.
PROBE_MALLOC = "pmmodes{0}:malloc{0}".format(os.getpid())
PYTHONS = os.environ.get("TEST_PYTHONS", PYTHON).split(":")

# The main thread runs four timed phases, each through a few nested calls;
# helper threads hold a lock and feed a pipe late.  It prints what it
# measured, per phase, with time.perf_counter.
PHASES = spin("spin") + r"""
import json, os, sys, threading, time

def cpu_inner(): return spin(CPU_N)
def cpu_phase(): return cpu_inner()

def sleep_inner(): time.sleep(0.3)
def sleep_phase(): sleep_inner()

def lock_inner(lock):
    with lock:
        pass
def lock_phase(lock): lock_inner(lock)

def pipe_inner(r): return os.read(r, 1)
def pipe_phase(r): return pipe_inner(r)

def holder(lock, go):
    with lock:
        go.set()
        time.sleep(0.3)

def feeder(w):
    time.sleep(0.3)
    os.write(w, b"x")

def main():
    lock, go = threading.Lock(), threading.Event()
    r, w = os.pipe()
    took = {}
    t = time.perf_counter(); cpu_phase(); took["cpu_phase"] = time.perf_counter() - t
    t = time.perf_counter(); sleep_phase(); took["sleep_phase"] = time.perf_counter() - t
    h = threading.Thread(target=holder, args=(lock, go)); h.start(); go.wait()
    t = time.perf_counter(); lock_phase(lock); took["lock_phase"] = time.perf_counter() - t
    f = threading.Thread(target=feeder, args=(w,)); f.start()
    t = time.perf_counter(); pipe_phase(r); took["pipe_phase"] = time.perf_counter() - t
    h.join(); f.join()
    print(json.dumps(took))

CPU_N = int(sys.argv[1])
main()
"""

GIL = spin("burn", "i") + r"""
import sys, threading
both = threading.Barrier(2)
def worker():
    both.wait()         # neither burns alone while the other starts
    burn(int(sys.argv[1]))
ts = [threading.Thread(target=worker) for _ in range(2)]
for t in ts: t.start()
for t in ts: t.join()
"""

WRITES = r"""
import os
fd = os.open(os.devnull, os.O_WRONLY)
def writer_a():
    for _ in range(300):
        os.write(fd, b"a")
def writer_b():
    for _ in range(700):
        os.write(fd, b"bb")
writer_a()
writer_b()
"""

# Attached to with -p: CPU work and naps in turn, each through a nested
# call, until the stop file appears.
ATTACHED = spin("spin_inner", "i") + r"""
import os, sys, time

def spin(): spin_inner(100000)

def nap_inner(): time.sleep(0.02)
def nap(): nap_inner()

print("ready", flush=True)
deadline = time.monotonic() + 120
while not os.path.exists(sys.argv[1]) and time.monotonic() < deadline:
    spin()
    nap()
"""

# Run in a private mount namespace without tracefs: pyperf-record must
# mount it, and unmount it when it ends, and when it is sent SIGTERM.
TRACEFS_SH = r"""
t=/sys/kernel/tracing
rm -f "$D/ns-term.pid"
while mountpoint -q $t; do umount $t || exit 1; done
test -d $t/events && echo "tracefs still there"
"$RECORD" --mode syscalls -o "$D/ns-writes" -- "$PY" "$D/writes.py" || echo "record failed"
mountpoint -q $t && echo "left mounted"
"$RECORD" --mode offcpu -o "$D/ns-term" -- "$PY" "$D/ns-term.py" "$D/ns-term.pid" &
i=0; while [ ! -s "$D/ns-term.pid" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
sleep 1
kill -TERM $!
wait $!
mountpoint -q $t && echo "left mounted after SIGTERM"
sleep 1
kill -0 "$(cat "$D/ns-term.pid")" 2>/dev/null && echo "program still running"
echo done
"""

TERM_ME = r"""
import os, sys, time
def idle(): time.sleep(0.05)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
for _ in range(2400): idle()
"""
TRACEFS = "/sys/kernel/tracing"
# Blocks of 64 KiB from libc itself (not a preloaded sanitizer's malloc):
# keeper keeps 200, freer frees its 600.
KEEP_FREE = """
import ctypes
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
kept = []
def keeper(n):
    for _ in range(n):
        kept.append(libc.malloc(65536))
def freer(n):
    for _ in range(n):
        libc.free(libc.malloc(65536))
for _ in range(100):
    keeper(2)
    freer(6)
"""


def folded(text):
    """[(frames, weight)] of folded output."""
    return [(stack.split(";"), w) for stack, w in harness.folded(text)]


def cut_by_z(data):
    """Whether perf 6.1's -z cut the last compressed record of data short,
    losing its last events, as pymerge says."""
    return "compressed data ends inside a record" in run([PYMERGE, data]).stderr


class Modes(SharedScratch):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # The pipe-mode and uprobe tests run perf themselves: its
        # tracepoints need tracefs, which a fresh machine may not mount.
        cls.mounted = (not os.path.isdir(os.path.join(TRACEFS, "events"))
                       and subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS]).returncode == 0)

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        if cls.mounted:
            subprocess.run(["umount", TRACEFS])

    @classmethod
    def record(cls, name, mode, body, *args, python=PYTHON, opts=()):
        """Records body as a script in mode (with pyperf-record's options
        opts); returns (folder, program stdout, seconds).  Every recording's
        python and mixed views hold none of pyperfmap's own frames (a wall
        recording's off-CPU weight too)."""
        script = os.path.join(cls.dir, name + ".py")
        with open(script, "w") as f:
            f.write(body)
        out = os.path.join(cls.dir, name)
        t = time.monotonic()
        r = run([RECORD, "--mode", mode, "-o", out] + list(opts) + ["--", python, script] + list(args))
        took = time.monotonic() - t
        if r.returncode != 0:
            raise AssertionError("pyperf-record failed: " + r.stderr)
        for weight in (("--mode", "offcpu"), ()) if mode == "wall" else ((),):
            assert_users_frames_only(out + "/perf.data", *weight)
        return out, r.stdout, took

    def merge(self, *args):
        r = run([PYMERGE] + list(args))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("lost", r.stderr)
        return r

    @classmethod
    def wall_recording(cls):
        if not hasattr(cls, "_wall"):
            folder, stdout, _ = cls.record("phases", "wall", PHASES, "1500000")
            cls._wall = folder, json.loads(stdout)
        return cls._wall

    def main_thread(self, stacks):
        """The stacks of the recorded program's main thread (--tid roots
        comm-PID/TID: the main thread's TID is its PID)."""
        mine = []
        for frames, w in stacks:
            m = re.match(r".*-(\d+)/(\d+)$", frames[0])
            if m and m.group(1) == m.group(2) and any("phases.py" in f for f in frames):
                mine.append((frames, w))
        pids = {s[0][0] for s in mine}
        self.assertEqual(len(pids), 1, pids)
        root = pids.pop()
        return [(f, w) for f, w in stacks if f[0] == root]

    def test_wall_phases_match_what_the_program_measured(self):
        folder, took = self.wall_recording()
        stacks = self.main_thread(folded(self.merge("--tid", "--view", "python",
                                                    folder + "/perf.data").stdout))
        wall = Counter()
        for frames, w in stacks:
            for phase in took:
                if any(f.startswith(phase + " ") for f in frames):
                    wall[phase] += w
        measured = sum(took.values())
        recorded = sum(wall.values())
        # Both sides measure the same four phases of the same thread.
        for phase, secs in took.items():
            want, got = 100 * secs / measured, 100 * wall[phase] / recorded
            self.assertLess(abs(want - got), 3, "%s: measured %.1f%%, wall view %.1f%% (%s vs %s)"
                            % (phase, want, got, took, dict(wall)))
        # Nothing counted twice: the thread's wall time is about the phases'
        # plus the interpreter's start and exit.
        total = sum(w for _, w in stacks)
        self.assertGreater(total, 1e9 * measured * 0.97)
        self.assertLess(total, 1e9 * (measured + 2.0))

    def test_offcpu_view_shows_the_lock_wait_under_the_waiter(self):
        folder, took = self.wall_recording()
        stacks = folded(self.merge("--mode", "offcpu", "--view", "python", folder + "/perf.data").stdout)
        waits = [(f, w) for f, w in stacks if "lock_inner (phases.py)" in f]
        self.assertTrue(waits, stacks)
        inner = sum(w for f, w in waits
                    if f[f.index("lock_inner (phases.py)") - 1] == "lock_phase (phases.py)"
                    and f[-1] in ("[off-cpu: lock]", "[GIL wait]"))
        self.assertGreater(inner, 0.8 * 1e9 * took["lock_phase"], waits)
        self.assertLess(inner, 1.1 * 1e9 * took["lock_phase"] + 5e6, waits)
        # the lock holder's sleep is in its own thread's stacks, not the waiter's
        sleeps = [f for f, _ in stacks if "holder (phases.py)" in f]
        self.assertTrue(all("lock_inner (phases.py)" not in f for f in sleeps))

    def test_attach_to_a_running_program(self):
        """pyperf-record -p PID --mode wall: the CPU work sampled, the naps
        under the function that napped, no more time than the window."""
        script = os.path.join(self.dir, "attached.py")
        with open(script, "w") as f:
            f.write(ATTACHED)
        stop = os.path.join(self.dir, "attached.stop")
        out = os.path.join(self.dir, "attached")
        proc = subprocess.Popen([PYTHON, "-m", "pyperfmap", script, stop], stdout=subprocess.PIPE,
                                env=child_env(), universal_newlines=True)
        try:
            self.assertEqual(proc.stdout.readline(), "ready\n")
            t = time.monotonic()
            r = run([RECORD, "--mode", "wall", "-p", str(proc.pid), "--duration", "3", "-o", out])
            window = time.monotonic() - t
            self.assertEqual(r.returncode, 0, r.stderr)
        finally:
            open(stop, "w").close()
            proc.communicate(timeout=120)
        data = out + "/perf.data"
        stacks = folded(self.merge("--view", "python", data).stdout)
        naps = sum(w for f, w in stacks if f[-2:] == ["nap_inner (attached.py)", "[off-cpu: sleep]"])
        self.assertGreater(naps, 0.2e9, stacks)
        cpu = sum(w for f, w in folded(self.merge("--view", "python", "--weight", "cpu-ns", data).stdout)
                  if "spin_inner (attached.py)" in f)
        self.assertGreater(cpu, 0.1e9, stacks)
        # one thread, so no more wall time than the recording lasted
        self.assertLess(sum(w for _, w in stacks), window * 1e9)
        self.assertGreater(sum(w for _, w in stacks), 0.5e9)

    @unittest.skipUnless(shutil.which("unshare") and os.geteuid() == 0, "needs root and unshare")
    def test_tracefs_mounted_when_missing_and_unmounted_after(self):
        """In a mount namespace of its own without tracefs, pyperf-record
        mounts tracefs, records, and unmounts it at the end, also when it is
        sent SIGTERM, which ends the recorded program too."""
        for name, body in (("writes.py", WRITES), ("ns-term.py", TERM_ME)):
            with open(os.path.join(self.dir, name), "w") as f:
                f.write(body)
        # recorded again when perf 6.1's -z cut a last record (record_writes)
        for _ in range(3):
            r = run(["unshare", "--mount", "--propagation", "private", "sh", "-c", TRACEFS_SH],
                    env={"RECORD": RECORD, "PY": PYTHON, "D": self.dir})
            self.assertEqual(r.stdout, "done\n", r.stdout + r.stderr)
            if not any(cut_by_z(self.dir + d) for d in ("/ns-writes/perf.data", "/ns-term/perf.data")):
                break
        counts = Counter()
        for frames, w in folded(self.merge("--view", "python", self.dir + "/ns-writes/perf.data").stdout):
            if frames[-1] == "[syscall write]":
                counts[frames[-2]] += w
        self.assertEqual(counts["writer_b (writes.py)"], 700, counts)
        # what was recorded until SIGTERM is a whole recording
        stacks = folded(self.merge("--view", "python", self.dir + "/ns-term/perf.data").stdout)
        self.assertTrue(any(f[-2:] == ["idle (ns-term.py)", "[off-cpu: sleep]"] for f, _ in stacks), stacks)

    def test_gil_wait_under_the_python_frame(self):
        for python in PYTHONS:
            with self.subTest(python=python):
                ver = os.path.basename(python)
                folder, _, _ = self.record("gil-" + ver, "wall", GIL, "3000000", python=python)
                stacks = folded(self.merge("--tid", "--view", "python", folder + "/perf.data").stdout)
                per_thread = defaultdict(lambda: [0, 0])   # [not preempted, GIL wait]
                for frames, w in stacks:
                    if not any(f.startswith("burn (") for f in frames):
                        continue
                    if frames[-1] == "[GIL wait]":
                        self.assertTrue(frames[-2].startswith("burn ("), frames)
                        per_thread[frames[0]][1] += w
                    if frames[-1] != "[off-cpu: R]":
                        per_thread[frames[0]][0] += w
                self.assertEqual(len(per_thread), 2, dict(per_thread))
                # Two threads, one GIL, burning at once: each waits while
                # the other runs, about half of its time, more when other
                # programs preempt the one that holds the GIL; never all of
                # it.  The thread's own preempted time is left out: on a
                # busy machine it is most of the wall time, and says
                # nothing of the GIL.
                for thread, (unpreempted, gil) in per_thread.items():
                    self.assertGreater(gil / unpreempted, 0.2, (thread, unpreempted, gil))
                    self.assertLess(gil / unpreempted, 0.95, (thread, unpreempted, gil))

    def record_writes(self, name):
        """WRITES recorded in the syscalls mode: (perf.data, seconds).  perf
        6.1's -z now and then cuts its last compressed record short, losing
        the last events, which pymerge says (and self.merge fails on): such
        a recording is made again, at most three times."""
        for _ in range(3):
            folder, _, took = self.record(name, "syscalls", WRITES)
            data = folder + "/perf.data"
            if not cut_by_z(data):
                break
        return data, took

    def test_syscall_counts_are_exact_and_latencies_add_up(self):
        data, took = self.record_writes("writes")
        counts = Counter()
        for frames, w in folded(self.merge("--view", "python", data).stdout):
            if frames[-1] == "[syscall write]":
                counts[frames[-2]] += w
        self.assertEqual(counts["writer_a (writes.py)"], 300, counts)
        self.assertEqual(counts["writer_b (writes.py)"], 700, counts)
        lat = Counter()
        for frames, w in folded(self.merge("--view", "python", "--weight", "latency-ns", data).stdout):
            self.assertTrue(frames[-1].startswith("[syscall "), frames)
            lat[frames[-2]] += w
        self.assertGreater(lat["writer_a (writes.py)"], 0)
        self.assertGreater(lat["writer_b (writes.py)"], 0)
        self.assertLess(sum(lat.values()), took * 1e9)

    def test_weight_by_a_tracepoint_field(self):
        data, _ = self.record_writes("writes2")
        # raw_syscalls:sys_enter's id is the call's number: compare with perf's own decoding
        script = subprocess.run(["perf", "script", "-i", data, "-F", "event,trace"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                universal_newlines=True).stdout
        ids = [int(m.group(1)) for m in re.finditer(r"sys_enter:\s+NR (\d+)", script)]
        self.assertGreater(len(ids), 1000)
        r = self.merge("--event", "raw_syscalls:sys_enter", "--weight", "id", data)
        self.assertEqual(sum(w for _, w in folded(r.stdout)), sum(ids))
        r = run([PYMERGE, "--event", "raw_syscalls:sys_enter", "--weight", "nosuch", data])
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("nosuch", r.stderr)
        self.assertIn("numeric fields: id", r.stderr)
        # an array is not a number
        r = run([PYMERGE, "--event", "raw_syscalls:sys_enter", "--weight", "args", data])
        self.assertEqual(r.returncode, 2, r.stderr)

    def test_events_lists_counts_and_fields(self):
        data, _ = self.record_writes("writes3")
        r = self.merge("--events", data)
        script = subprocess.run(["perf", "script", "-i", data, "-F", "event"], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, universal_newlines=True).stdout
        counts = Counter(line.strip().rstrip(":") for line in script.splitlines())
        for ev in ("raw_syscalls:sys_enter", "raw_syscalls:sys_exit"):
            self.assertIn("%s: %d samples" % (ev, counts[ev]), r.stdout)
        self.assertRegex(r.stdout, r"\n  id +long  \(numeric\)\n  args +unsigned long\[6\]\n")
        self.assertRegex(r.stdout, r"\n  ret +long  \(numeric\)")

    def test_pipe_mode(self):
        """perf record -o - | pymerge -: the formats arrive as a record."""
        script = os.path.join(self.dir, "writes.py")
        with open(script, "w") as f:
            f.write(WRITES)
        perf = subprocess.Popen(["perf", "record", "-q", "-o", "-", "-m", "128M", "-e", "raw_syscalls:sys_enter",
                                 "-e", "raw_syscalls:sys_exit/call-graph=no/", "--call-graph", "dwarf,16384",
                                 "--", PYTHON, "-m", "pyperfmap", script],
                                stdout=subprocess.PIPE, env=child_env())
        r = subprocess.run([PYMERGE, "--view", "python", "-"], stdin=perf.stdout, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
        perf.stdout.close()
        self.assertEqual(perf.wait(), 0)
        self.assertEqual(r.returncode, 0, r.stderr)
        counts = Counter()
        for frames, w in folded(r.stdout):
            if frames[-1] == "[syscall write]":
                counts[frames[-2]] += w
        self.assertEqual(counts, Counter({"writer_a (writes.py)": 300, "writer_b (writes.py)": 700}))

    def test_uprobe_fields(self):
        """perf probe -x libc 'malloc size=%di:u64': an argument as a weight.
        perf probe reads every event of the system, which the recordings
        of other suites add and remove meanwhile (ENOENT): under
        pyperf-record's lock, as they do theirs."""
        libc = "/lib/x86_64-linux-gnu/libc.so.6"
        probe = ["perf", "probe", "-q", "-x", libc, PROBE_MALLOC + "=malloc size=%di:u64"]
        with probes_lock():
            subprocess.run(["perf", "probe", "-q", "-d", PROBE_MALLOC], stderr=subprocess.DEVNULL)
            r = subprocess.run(probe, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        self.assertEqual(r.returncode, 0, r.stdout)
        try:
            data = os.path.join(self.dir, "malloc.data")
            code = ("import ctypes\nlibc = ctypes.CDLL(None)\n"
                    "libc.malloc.restype = ctypes.c_void_p\nlibc.malloc.argtypes = [ctypes.c_size_t]\n"
                    "libc.free.argtypes = [ctypes.c_void_p]\n"
                    "for n in range(1, 201): libc.free(libc.malloc(n * 1000))")
            # The program loads nothing of ours: under the sanitizer runs its
            # preloaded malloc would take the calls away from libc's.
            env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
            r = subprocess.run(["perf", "record", "-q", "-e", PROBE_MALLOC, "-o", data, "--",
                                PYTHON, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True, env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
        finally:
            with probes_lock():
                subprocess.run(["perf", "probe", "-q", "-d", PROBE_MALLOC], stderr=subprocess.DEVNULL)
        self.assertRegex(self.merge("--events", data).stdout, r"\n  size +u64  \(numeric\)")
        script = subprocess.run(["perf", "script", "-i", data, "-F", "trace"], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, universal_newlines=True).stdout
        sizes = [int(m.group(1), 0) for m in re.finditer(r"size=(\w+)", script)]
        self.assertGreater(sum(sizes), sum(n * 1000 for n in range(1, 201)))
        r = self.merge("--event", PROBE_MALLOC, "--weight", "size", data)
        self.assertEqual(sum(w for _, w in folded(r.stdout)), sum(sizes))

    def alloc_group(self, folder):
        with open(os.path.join(folder, "recording.txt")) as f:
            return re.search(r"^probes: (\S+)$", f.read(), re.M).group(1)

    def assert_no_probes(self, group):
        listed = subprocess.run(["perf", "probe", "-l"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                universal_newlines=True).stdout
        self.assertNotIn(group + ":", listed)

    def test_alloc_bytes_by_python_function(self):
        """--exact: keeper and freer malloc 64 KiB blocks in a ratio of 1 to
        3: the merged stacks weigh them so, every call counted, nothing is
        lost, the probes are gone."""
        folder, _, _ = self.record("keepfree", "alloc", KEEP_FREE, opts=["--exact"])
        group = self.alloc_group(folder)
        self.assert_no_probes(group)
        # pymerge tells the mode from the probes, and weighs by bytes
        by = self.by_function(self.merge("--view", "python", folder + "/perf.data"))
        self.assertAlmostEqual(by["keeper"] / (100 * 2 * 65536), 1, delta=0.05)
        self.assertAlmostEqual(by["freer"] / (100 * 6 * 65536), 1, delta=0.05)
        self.assertAlmostEqual(by["freer"] / by["keeper"], 3, delta=3 * 0.05)
        calls = self.by_function(self.merge("--weight", "count", "--view", "python", folder + "/perf.data"),
                                 "malloc")
        # the interpreter's own small mallocs under them too (ctypes' call)
        self.assertAlmostEqual(calls["keeper"] / 200, 1, delta=0.05)
        self.assertAlmostEqual(calls["freer"] / 600, 1, delta=0.05)
        # the growth plot is a leaks recording's: one line saying so, exit 2
        r = run([PYMERGE, "--format", "growth", folder + "/perf.data"])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stderr.splitlines(),
                         ["pymerge: --format growth plots a leaks recording (pyperf-record --mode leaks)"])

    @staticmethod
    def by_function(r, leaf=None):
        """The weights of keeper's and freer's stacks (KEEP_FREE), those
        ending in leaf if given (keeper's list also grows by realloc)."""
        by = Counter()
        for frames, w in folded(r.stdout):
            for fn in ("keeper", "freer"):
                if any(f.startswith(fn + " ") for f in frames) and leaf in (None, frames[-1]):
                    by[fn] += w
        return by

    def test_exact_leaks_frees_whose_allocation_was_lost(self):
        """--exact -m 1: no malloc entry (an 8 KiB stack copy) fits perf's
        one-page buffer, so every allocation's record is lost and the frees
        come without them.  They are frees whose allocation was lost (the
        program's exec is in the recording: its heap began empty), not of
        blocks allocated before the recording; pymerge's lost count is
        perf report's, and the folded output ends with the [lost] stack."""
        folder, _, _ = self.record("keepfree-lost", "leaks", KEEP_FREE, opts=["--exact", "-m", "1"])
        data = folder + "/perf.data"
        r = run([PYMERGE, "-v", data])
        self.assertEqual(r.returncode, 0, r.stderr)
        m = re.search(r"; 0 frees of blocks allocated before the recording or lost \(not counted\),"
                      r" (\d+) frees whose allocation was lost", r.stderr)
        self.assertTrue(m, r.stderr)
        # Some of the free records are lost too, freer's among them: each
        # counted free is one that perf recorded.
        events = subprocess.run(["perf", "script", "-F", "event", "-i", data], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, universal_newlines=True).stdout
        frees = sum(line.strip().endswith(":free:") for line in events.splitlines())
        self.assertGreater(int(m.group(1)), 0)
        self.assertLessEqual(int(m.group(1)), frees)
        stats = subprocess.run(["perf", "report", "--stats", "-i", data], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, universal_newlines=True).stdout
        # the lost samples of each event (after the aggregated counts of records)
        per_event = "".join(re.split(r"^\S.* stats:$", stats, flags=re.M)[2:])
        perf_lost = sum(int(n) for n in re.findall(r"^\s*LOST_SAMPLES events:\s+(\d+)", per_event, re.M))
        self.assertIn(", %d lost," % perf_lost, r.stderr)
        self.assertIn("[lost];[lost %d records] " % perf_lost, r.stdout)
        # pyperf-top's format: the [lost] stack in each of its three views
        live = run([PYMERGE, "--format", "live", data])
        self.assertEqual(live.returncode, 0, live.stderr)
        fid = re.search(r"^f (\d+) \w \[lost %d records\]$" % perf_lost, live.stdout, re.M)
        self.assertTrue(fid, live.stdout[-2000:])
        stack = re.search(r"^s \d+ .*\b%s\b.*$" % fid.group(1), live.stdout, re.M)
        self.assertTrue(stack, live.stdout[-2000:])
        self.assertEqual([v.split() for v in stack.group(0).split(" ", 2)[2].split("|")],
                         [[fid.group(1)]] * 3)

    def test_exact_buffer_for_its_rate(self):
        """--exact without -m gives perf 1 GiB per CPU (what a program
        making a million mallocs in seconds needs to lose none), less
        where a quarter of the available memory cannot hold that."""
        def available():
            with open("/proc/meminfo") as f:
                return int(re.search(r"^MemAvailable:\s+(\d+) kB", f.read(), re.M).group(1)) << 10
        # The memory available moves while other programs run: pyperf-record
        # read it somewhere between these two readings.
        before = available()
        r = run([RECORD, "--mode", "leaks", "--exact", "-o", os.path.join(self.dir, "exact-m"), "--",
                 PYTHON, "-c", "pass"])
        after = available()
        self.assertEqual(r.returncode, 0, r.stderr)
        m = re.search(r" -m (\d+)M ", r.stderr)
        self.assertTrue(m, r.stderr)
        size, cpus = int(m.group(1)) << 20, os.cpu_count()
        low, high = min(before, after), max(before, after)
        fits = size * cpus <= high // 4
        largest = size == 1 << 30 or 2 * size * cpus > low // 4
        self.assertTrue(fits and largest, (size, before, after))

    def test_leaks_live_bytes_by_python_function(self):
        """--exact: keeper keeps its 200 blocks of 64 KiB, freer frees its
        600: what is live at the end is keeper's, growing over the run;
        nothing is lost, the probes are gone."""
        folder, _, _ = self.record("keepfree-leaks", "leaks", KEEP_FREE, opts=["--exact"])
        self.assert_no_probes(self.alloc_group(folder))
        data = folder + "/perf.data"
        r = self.merge("--view", "python", data)
        live = self.by_function(r)
        self.assertAlmostEqual(live["keeper"] / (100 * 2 * 65536), 1, delta=0.05)
        self.assertLess(live["freer"], 0.01 * 100 * 6 * 65536)
        self.assertRegex(r.stderr, r"still live at the end of the program's code of \d+ allocated; 0 frees of blocks allocated before")
        self.assertEqual(self.by_function(self.merge("--weight", "count", "--view", "python", data),
                                          "malloc")["keeper"], 200)
        allocated = self.by_function(self.merge("--weight", "bytes", "--view", "python", data))
        self.assertAlmostEqual(allocated["freer"] / allocated["keeper"], 3, delta=3 * 0.05)
        # The growth table: keeper's malloc row, its live bytes never
        # shrinking, all of them at the end (its list's realloc is live
        # too: the end is before finalization frees the module's globals).
        table = self.merge("--format", "table", "--view", "python", data).stdout.splitlines()
        self.assertIn("live bytes of the blocks allocated at", table[0])
        rows = [line.split() for line in table[1:] if "keeper (keepfree-leaks.py);malloc" in line]
        self.assertEqual(len(rows), 1, table)
        columns = [int(c) for c in rows[0][:6]]
        self.assertEqual(columns, sorted(columns))
        self.assertAlmostEqual(columns[-1] / (100 * 2 * 65536), 1, delta=0.05)
        self.assertFalse(any("freer" in line for line in table))
        # The growth plot draws the same: keeper's line only rises (SVG y
        # falls), ending at what it kept; freer has none.
        svg = ET.fromstring(self.merge("--format", "growth", "--view", "python", data).stdout)
        ns = "{http://www.w3.org/2000/svg}"
        lines = {g.find(ns + "title").text: g.find(ns + "path") for g in svg.iter(ns + "g")}
        keeper = [path for title, path in lines.items() if "keeper (keepfree-leaks.py);malloc" in title]
        self.assertEqual(len(keeper), 1, list(lines))
        self.assertEqual(int(keeper[0].get("data-live")), columns[-1])
        ys = [float(v) for v in re.findall(r"V([\d.]+)", keeper[0].get("d"))]
        self.assertGreater(len(ys), 100)
        self.assertEqual(ys, sorted(ys, reverse=True))
        self.assertFalse(any("freer" in title for title in lines))
        # Its byte axis: one unit for every label, even round steps from 0,
        # a top above keeper's end.
        axis = [t.text.split() for t in svg.iter(ns + "text") if t.get("text-anchor") == "end"]
        self.assertEqual(len({unit for _, unit in axis}), 1, axis)
        values = [float(v) for v, _ in axis]
        steps = {round(b - a, 6) for a, b in zip(values, values[1:])}
        self.assertEqual((values[0], len(steps)), (0, 1), axis)
        scale = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[axis[0][1]]
        self.assertGreaterEqual(values[-1] * scale, columns[-1])

    def test_leaks_probes_removed_after_sigint(self):
        group, _ = self.interrupt_a_recording("leaks", "free", "--exact")
        self.assert_no_probes(group)

    def interrupt_a_recording(self, mode, last_probe, *opts):
        """Records a sleeping program in mode and interrupts pyperf-record
        (SIGINT) once its probes, the last being last_probe, are in place;
        returns (the probe group, the folder)."""
        script = os.path.join(self.dir, "sleeper.py")
        ready = os.path.join(self.dir, "sleeper-%s.ready" % mode)
        with open(script, "w") as f:
            f.write("import sys, time\nopen(sys.argv[1], 'w').close()\nwhile True: time.sleep(0.1)\n")
        env = child_env()
        out = os.path.join(self.dir, "sigint-" + mode)
        proc = subprocess.Popen([RECORD, "--mode", mode, "-o", out] + list(opts) + ["--", PYTHON, script, ready],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        group = "pyperf_%d" % proc.pid
        # Interrupt once the probes are in place and the program runs under
        # them (however slow the machine: a sanitized build starts slowly).
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            listed = subprocess.run(["perf", "probe", "-l"], stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, universal_newlines=True).stdout
            if group + ":" + last_probe in listed and os.path.exists(ready):
                break
            time.sleep(0.2)
        else:
            proc.kill()
            self.fail("the probes never appeared, or the program never started")
        time.sleep(1)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=300)
        return group, out

    def test_alloc_probes_removed_after_sigint(self):
        group, _ = self.interrupt_a_recording("alloc", "aligned_alloc", "--exact")
        self.assert_no_probes(group)

    def test_speedscope_in_time_order(self):
        folder, took = self.wall_recording()
        r = self.merge("--format", "speedscope", "--view", "python", folder + "/perf.data")
        doc = json.loads(r.stdout)
        if SCHEMA and os.path.exists(SCHEMA):
            import jsonschema
            with open(SCHEMA) as f:
                jsonschema.validate(doc, json.load(f))
        elif os.environ.get("CI") == "true":
            self.fail("no speedscope schema at %r" % SCHEMA)
        names = [f["name"] for f in doc["shared"]["frames"]]
        profiles = [p for p in doc["profiles"]
                    if any("cpu_phase (phases.py)" in [names[i] for i in s] for s in p["samples"])]
        self.assertEqual(len(profiles), 1)
        p = profiles[0]
        self.assertEqual(p["unit"], "nanoseconds")
        order = []
        for s in p["samples"]:
            for phase in ("cpu_phase", "sleep_phase", "lock_phase", "pipe_phase"):
                if phase + " (phases.py)" in [names[i] for i in s] and (not order or order[-1] != phase):
                    order.append(phase)
        # the phases as they ran, each one contiguous
        self.assertEqual(order, ["cpu_phase", "sleep_phase", "lock_phase", "pipe_phase"])
        # the Sandwich table lists functions by self time: ours has the most
        self.check_in_the_app(r.stdout, ["spin (phases.py)", "[off-cpu: sleep]"])

    def check_in_the_app(self, profile, names):
        """The real speedscope app, from its npm package, served on
        localhost in headless Chromium, shows the frames by name."""
        if not (APP and os.path.exists(os.path.join(APP, "index.html")) and CHROMIUM):
            if os.environ.get("CI") == "true":
                self.fail("no speedscope app at %r or no chromium: .ci/run installs both" % APP)
            self.skipTest("no speedscope app (npm pack speedscope, as .ci/run does) or chromium")
        import http.server
        import threading
        site = tempfile.mkdtemp(prefix="speedscope-", dir=self.dir)
        for name in os.listdir(APP):
            os.symlink(os.path.join(APP, name), os.path.join(site, name))
        with open(os.path.join(site, "profile.json"), "w") as f:
            f.write(profile)
        handler = lambda *a: http.server.SimpleHTTPRequestHandler(*a, directory=site)
        http.server.SimpleHTTPRequestHandler.log_message = lambda *a: None
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            base = "http://127.0.0.1:%d/" % server.server_address[1]
            with open(os.path.join(site, "probe.html"), "w") as f:
                f.write(APP_PAGE % (base + "profile.json"))
            env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
            r = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                                "--user-data-dir=" + os.path.join(self.dir, "chromium-profile"),
                                "--virtual-time-budget=90000", "--dump-dom", base + "probe.html"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True,
                               timeout=180, env=env)
        finally:
            server.shutdown()
            server.server_close()
        m = re.search(r'<pre id="result">([^<]*)</pre>', r.stdout)
        self.assertTrue(m and m.group(1) != "not loaded", r.stdout[-2000:])
        import html
        seen = json.loads(html.unescape(m.group(1)))
        self.assertIn("speedscope", seen["title"])
        for name in names:
            self.assertIn(name, seen["text"])


if __name__ == "__main__":
    unittest.main()
