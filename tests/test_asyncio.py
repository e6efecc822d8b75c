"""asyncio task frames (docs/asyncio.md), end to end.

A real asyncio program, whose named tasks burn CPU in known proportions in
short interleaved steps, is recorded by pyperf-record (cpu mode, real perf)
and merged by pymerge's python view.  It proves, per interpreter and with
asyncio's C accelerator on and off:
  - each task's share of the samples under task frames is, within 3
    points, the share of CPU time the program itself measured in that task;
  - tasks gathered by another task appear under that task's frame, which
    is under the frame of the task that awaits it in turn (await task);
    on 3.11+ so does a TaskGroup's child under the group's owner;
  - a task that nobody awaits has only its own frame;
  - the mixed view keeps the native frames of the interpreter under the
    coroutines (task_step of the accelerator above the task frames).
Run by /usr/bin/python3 (meson suite "asyncio") with PYPERF_SCRIPTS,
PYMERGE and PYPERFMAP_PATH set; TEST_PYTHONS lists the interpreters.
"""
import json
import os
import unittest
from collections import Counter

from harness import RECORD, PYMERGE, PYTHONS, SharedScratch, run


# Each task burns its CPU seconds in 2 ms steps and yields between them, so
# that all of them interleave; it measures its own CPU time (process_time
# around each burn) and the program prints the totals.  "gath" gathers g1
# and g2; "outer" awaits gath; main (asyncio.run's task, named after its
# coroutine) gathers outer, then shields "shielded" (whose callbacks lead
# back to itself); "solo" is awaited by nobody; "late" runs alone until main
# awaits it, after the gather, so its chain changes while it runs.  On
# 3.11+, "owner", gathered by main too, runs "child" in a TaskGroup.
PROGRAM = r"""
import json, os, sys, time
if os.environ.get("NO_ACCEL") == "1":
    sys.modules["_asyncio"] = None
import asyncio
assert (asyncio.Task.__module__ == "_asyncio") != (os.environ.get("NO_ACCEL") == "1")

spent = {}

def burn(name, sec):
    t0 = time.process_time()
    end = t0 + sec
    while time.process_time() < end:
        pass
    spent[name] = spent.get(name, 0.0) + time.process_time() - t0

async def work(name, sec):
    for _ in range(int(sec / 0.002)):
        burn(name, 0.002)
        await asyncio.sleep(0)

async def gath():
    await work("gath", 0.06)
    await asyncio.gather(asyncio.create_task(work("g1", 0.36), name="g1"),
                         asyncio.create_task(work("g2", 0.18), name="g2"))

async def outer():
    await asyncio.create_task(gath(), name="gath")

async def owner():
    async with asyncio.TaskGroup() as tg:
        tg.create_task(work("child", 0.12), name="child")

async def main():
    solo = asyncio.create_task(work("solo", 0.3), name="solo")
    late = asyncio.create_task(work("late", 0.7), name="late")
    tasks = [asyncio.create_task(outer(), name="outer")]
    if sys.version_info >= (3, 11):
        tasks.append(asyncio.create_task(owner(), name="owner"))
    await asyncio.gather(*tasks)
    await late
    await asyncio.shield(asyncio.create_task(work("shielded", 0.06), name="shielded"))
    while not solo.done():
        await asyncio.sleep(0.01)

asyncio.run(main())
print(json.dumps(spent))
"""

# The task frames each task's samples may sit under, outermost first.
CHAINS = {
    "solo": [("solo",)],
    "late": [("late",), ("main", "late")],
    "gath": [("main", "outer", "gath")],
    "g1": [("main", "outer", "gath", "g1")],
    "g2": [("main", "outer", "gath", "g2")],
    "child": [("main", "owner", "child")],
    "shielded": [("main", "shielded")],
}


def version(py):
    return tuple(int(x) for x in run([py, "-c", "import sys; print('%d %d' % sys.version_info[:2])"])
                 .stdout.split())


def task_chains(folded_text):
    """Counter {tuple of task names, outermost first: samples} and the
    total of samples, from pymerge's folded output."""
    chains, total = Counter(), 0
    for line in folded_text.splitlines():
        stack, _, weight = line.rpartition(" ")
        if not stack:
            continue
        frames = stack.split(";")
        total += int(weight)
        names = tuple(f[len("[task "):-1] for f in frames if f.startswith("[task ") and f.endswith("]"))
        chains[names] += int(weight)
    return chains, total


class TaskFrames(SharedScratch):
    def record(self, py, no_accel, tasks="1"):
        script = os.path.join(self.dir, "tasks.py")
        with open(script, "w") as f:
            f.write(PROGRAM)
        out = os.path.join(self.dir, "rec-%s-%d-%s" % (os.path.basename(py), no_accel, tasks))
        env = {"NO_ACCEL": "1" if no_accel else "0"}
        if tasks != "1":
            env["PYPERFMAP_TASKS"] = tasks
        r = run([RECORD, "-F", "999", "-o", out, "--", py, script], env)
        self.assertEqual(r.returncode, 0, "pyperf-record failed: " + r.stderr)
        return out, json.loads(r.stdout.strip().splitlines()[-1])

    def merge(self, folder, view):
        r = run([PYMERGE, "--view", view, os.path.join(folder, "perf.data")])
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def check(self, py, no_accel):
        folder, spent = self.record(py, no_accel)
        chains, total = task_chains(self.merge(folder, "python"))
        if version(py) < (3, 11):
            self.assertNotIn("child", spent)
        # samples by innermost task; each must come with its whole chain
        by_task = Counter()
        for names, n in chains.items():
            if names:
                by_task[names[-1]] += n
                want = CHAINS.get(names[-1])
                if want is not None:
                    self.assertIn(names, want, "a sample of %s under %s" % (names[-1], names))
        # "late" has about 60% of its samples before main awaits it, and 40% after
        for chain in CHAINS["late"]:
            self.assertGreater(chains[chain], 0.15 * by_task["late"],
                               "a chain that changed while its task ran: %s" % chains)
        in_tasks = sum(n for t, n in by_task.items() if t in spent)
        self.assertGreater(in_tasks, 0.7 * total, "task frames on too few samples: %s" % chains)
        truth = sum(spent.values())
        for name, sec in spent.items():
            got, want = 100.0 * by_task[name] / in_tasks, 100.0 * sec / truth
            self.assertLess(abs(got - want), 3.0, "%s: %.1f%% of task samples, %.1f%% of task CPU time"
                            " (%s)" % (name, got, want, dict(by_task)))
        return folder

    def test_pythons(self):
        """Every interpreter, accelerator on; the oldest and the newest with it off too."""
        self.assertTrue(PYTHONS, "TEST_PYTHONS is empty")
        for i, py in enumerate(PYTHONS):
            for no_accel in ((False, True) if i in (0, len(PYTHONS) - 1) else (False,)):
                with self.subTest(python=py, accelerator=not no_accel):
                    folder = self.check(py, no_accel)
                    if not no_accel:
                        self.check_mixed(folder)

    def test_switched_off(self):
        """Task frames are on by default (test_pythons sets nothing);
        PYPERFMAP_TASKS=0 in the program's environment leaves them out."""
        folder, _ = self.record(PYTHONS[-1], False, tasks="0")
        chains, total = task_chains(self.merge(folder, "python"))
        self.assertGreater(total, 0)
        self.assertEqual(list(chains), [()], chains)

    def check_mixed(self, folder):
        """The mixed view has the accelerator's task_step (or task_step_impl, as
    it is inlined) above the task frames."""
        mixed = self.merge(folder, "mixed")
        lines = [l for l in mixed.splitlines() if "[task g1]" in l]
        self.assertTrue(lines)
        heavy = max(lines, key=lambda l: int(l.rpartition(" ")[2]))
        frames = heavy.rpartition(" ")[0].split(";")
        above = frames[:frames.index("[task main]")]
        self.assertTrue(any(f.startswith("task_step") for f in above), heavy)


if __name__ == "__main__":
    unittest.main()
