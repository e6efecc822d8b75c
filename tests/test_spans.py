"""pyperfmap.span recorded by pyperf-record and read by pymerge
(docs/spans.md): a WSGI server under a known load, and every misuse."""
import json
import os
import re
import sys
import unittest
from collections import Counter, defaultdict
from decimal import Decimal

from harness import PYMERGE, RECORD, SharedScratch, go_env, program, python, run

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_modes  # noqa: E402  (the speedscope schema and app)

PYTHON = python("3.12")


def span_rows(text):
    """--format spans as {name: (count, p50-ms, cpu-ms)}."""
    rows = {}
    for line in text.splitlines()[1:]:
        f = line.split(None, 9)
        rows[f[9]] = (int(f[0]), float(f[3]), float(f[7]))
    return rows


class Spans(SharedScratch):
    def record(self, name, *args, python=PYTHON):
        script = os.path.join(self.dir, name)
        with open(script, "w") as f:
            f.write(program(name))
        out = os.path.join(self.dir, "rec-" + name)
        r = run([RECORD, "-m", "64M", "-o", out, "--", python, script] + list(args))
        self.assertEqual(r.returncode, 0, r.stderr)
        return out + "/perf.data", r

    def merge(self, *args):
        r = run([PYMERGE] + list(args))
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def assert_nested(self, spans, what):
        """spans, (begin, end, name) of one track, lie inside one another
        or apart, never across."""
        open_ = []
        for begin, end, name in sorted(spans, key=lambda s: (s[0], -s[1])):
            while open_ and begin >= open_[-1][1]:
                open_.pop()
            self.assertTrue(not open_ or end <= open_[-1][1], (what, name, begin, end, open_[-1:]))
            open_.append((begin, end, name))

    def trace_tracks(self, data, *args):
        """--format trace, its structure checked strictly: the spans'
        complete events per (pid, tid) track, each track nesting, each
        named by a thread_name and its process by a process_name."""
        r = self.merge("--format", "trace", *args, data)
        doc = json.loads(r.stdout, parse_float=Decimal)
        self.assertEqual(set(doc), {"traceEvents", "displayTimeUnit", "otherData"})
        named, tracks = set(), defaultdict(list)
        for e in doc["traceEvents"]:
            self.assertIn(e["ph"], ("X", "M"), e)
            self.assertIsInstance(e["pid"], int)
            self.assertIsInstance(e["tid"], int)
            self.assertTrue(0 < e["tid"] < 2 ** 31, e)
            if e["ph"] == "M":
                self.assertIn(e["name"], ("process_name", "thread_name"))
                self.assertIsInstance(e["args"]["name"], str)
                named.add((e["name"], e["pid"], e["tid"]))
            elif e.get("cat") == "span":
                self.assertTrue(isinstance(e["ts"], Decimal) and e["ts"] >= 0, e)
                self.assertTrue(isinstance(e["dur"], Decimal) and e["dur"] >= 0, e)
                self.assertTrue(all(isinstance(v, str) for v in e.get("args", {}).values()), e)
                tracks[e["pid"], e["tid"]].append(e)
        for pid, tid in tracks:
            self.assertIn(("thread_name", pid, tid), named)
            self.assertIn(("process_name", pid, pid), named)
            self.assert_nested([(e["ts"], e["ts"] + e["dur"], e["name"]) for e in tracks[pid, tid]],
                               (pid, tid))
        return r.stdout, tracks

    def speedscope_tracks(self, data, *args):
        """--format speedscope, valid against speedscope's schema: its
        evented profiles (the span tracks), each one's events in time
        order, every close the innermost open span's.  Returns the file and
        {profile index: Counter of span names}."""
        r = self.merge("--format", "speedscope", *args, data)
        doc = json.loads(r.stdout)
        if test_modes.SCHEMA and os.path.exists(test_modes.SCHEMA):
            import jsonschema
            with open(test_modes.SCHEMA) as f:
                jsonschema.validate(doc, json.load(f))
        elif os.environ.get("CI") == "true":
            self.fail("no speedscope schema at %r" % test_modes.SCHEMA)
        names = [f["name"] for f in doc["shared"]["frames"]]
        tracks = {}
        for i, prof in enumerate(doc["profiles"]):
            if prof["type"] != "evented":
                continue
            stack, at, seen = [], prof["startValue"], Counter()
            for e in prof["events"]:
                self.assertGreaterEqual(e["at"], at, e)
                at = e["at"]
                if e["type"] == "O":
                    stack.append(e["frame"])
                    seen[names[e["frame"]]] += 1
                else:
                    self.assertEqual(stack.pop(), e["frame"], (prof["name"], e))
            self.assertEqual((stack, prof["endValue"]), ([], at), prof["name"])
            tracks[i] = seen
        return doc, tracks

    def test_wsgi_server_per_endpoint(self):
        """Under wsgi_middleware, each endpoint's span count is exact, its
        share of the spans' CPU within 3 points of the server's own thread
        CPU timing, and its p50 within 10% of the server's own median."""
        timing = os.path.join(self.dir, "timing.json")
        data, _ = self.record("spans_wsgi.py", timing)
        with open(timing) as f:
            own = json.load(f)
        rows = span_rows(self.merge("--format", "spans", data).stdout)
        self.assertEqual({k: v[0] for k, v in rows.items()},
                         {"GET /light": 30, "GET /users/{id}": 20, "GET /heavy": 10})
        own_cpu = sum(t["cpu"] for t in own.values())
        span_cpu = sum(r[2] for r in rows.values())
        for name, t in own.items():
            share, want = 100 * rows[name][2] / span_cpu, 100 * t["cpu"] / own_cpu
            self.assertLess(abs(share - want), 3, (name, share, want))
            wall = sorted(t["wall"])
            median = wall[(len(wall) + 1) // 2 - 1] * 1e3
            self.assertLess(abs(rows[name][1] - median), 0.1 * median, (name, rows[name], median))
        folded = self.merge("--view", "python", data).stdout
        self.assertTrue(re.search(r"(?m)^python3\.12;\[span GET /heavy\];.*;app \(spans_wsgi", folded))
        self.assertNotIn("[span", self.merge("--no-spans", "--view", "python", data).stdout)
        only = self.merge("--span", "heavy", "--view", "python", data).stdout
        self.assertTrue(only and all("[span GET /heavy]" in line for line in only.splitlines()))
        slow = span_rows(self.merge("--slowest", "50", "--format", "spans", data).stdout)
        self.assertTrue(all(slow[n][0] <= rows[n][0] // 2 + 1 for n in slow), slow)
        each = os.path.join(self.dir, "each")
        self.merge("--by-span", each, "--view", "python", data)
        self.assertEqual(sorted(os.listdir(each)),
                         ["GET__heavy.folded", "GET__light.folded", "GET__users__id_.folded"])
        with open(os.path.join(each, "GET__light.folded")) as f:
            self.assertEqual(set(re.findall(r"\[span [^;]*\]", f.read())), {"[span GET /light]"})
        bad = run([PYMERGE, "--span", "(", data])
        self.assertEqual((bad.returncode, bad.stderr.count("\n")), (1, 1), bad.stderr)
        self.check_timelines(data, rows)

    def check_timelines(self, data, rows):
        """The trace and speedscope formats show the server's spans on a
        track of their own, one span each, as many of each name as the
        spans table counts, with their status; --slowest keeps the same
        spans there as in the table; the speedscope app and its trace
        importer show them."""
        trace, tracks = self.trace_tracks(data)
        self.assertEqual(len(tracks), 1, list(tracks))
        spans = next(iter(tracks.values()))
        self.assertEqual(Counter(e["name"] for e in spans), {n: r[0] for n, r in rows.items()})
        self.assertEqual({e["args"]["status"] for e in spans}, {"200"})
        slow = span_rows(self.merge("--slowest", "50", "--format", "spans", data).stdout)
        _, tracks = self.trace_tracks(data, "--slowest", "50")
        self.assertEqual(Counter(e["name"] for t in tracks.values() for e in t),
                         {n: r[0] for n, r in slow.items()})
        doc, tracks = self.speedscope_tracks(data, "--no-spans")
        self.assertEqual(list(tracks.values()), [{n: r[0] for n, r in rows.items()}])
        # the app shows its active profile: the span track's, whose frames
        # (with --no-spans) are nowhere else
        doc["activeProfileIndex"] = next(iter(tracks))
        test_modes.Modes.check_in_the_app(self, json.dumps(doc), list(rows))
        test_modes.Modes.check_in_the_app(self, trace, list(rows))

    def test_misuse(self):
        """A thread or the program ending inside a span, bad and long
        names, 100,000 names, fork, a span closed in another thread: each
        warned about in the program and in pymerge, the profile right."""
        data, r = self.record("spans_bad.py")
        for what in ("cut to 200", "closed in another thread", "more than 1000 distinct"):
            self.assertIn(what, r.stderr)
        m = self.merge("--format", "spans", data)
        self.assertIn("2 spans were never closed", m.stderr)
        self.assertIn("1 spans were closed in another thread", m.stderr)
        rows = span_rows(m.stdout)
        for name in ("thread-dies", "never-closed", "child", "forked", "crossed", "after-crossed"):
            self.assertEqual(rows[name][0], 1, name)
        self.assertIn("[other]", rows)
        # the cap: the 1000th distinct name of the parent is its last
        self.assertFalse([n for n in rows if re.match(r"distinct-\d{4,}$", n)])
        long = [n for n in rows if n.startswith("long-")]
        self.assertEqual([len(n) for n in long], [200])
        self.assertIn("bytes-\ufffd\ufffd", rows)
        # CPU where it burned: 50 ms in the dying thread and in the child
        self.assertGreater(rows["thread-dies"][2], 30)
        self.assertGreater(rows["child"][2], 30)
        folded = self.merge("--view", "python", data).stdout
        self.assertNotIn("[span forked];[span child]", folded)
        self.assertTrue(re.search(r"(?m)^python3\.12;\[span child\];", folded))
        self.assertNotIn("[span crossed];[span after-crossed]", folded)
        # pprof: the span with a trace_id labels its samples, read by go tool pprof
        pb = os.path.join(self.dir, "bad.pb.gz")
        self.merge("--format", "pprof", "-o", pb, data)
        tags = run(["go", "tool", "pprof", "-tags", pb], base=go_env(os.path.join(self.dir, "gohome")))
        self.assertEqual(tags.returncode, 0, tags.stderr)
        for want in ("span: ", "after-crossed", "trace_id: ", "%032x" % 7, "span_id: ", "%016x" % 9):
            self.assertIn(want, tags.stdout)
        # the labels, as entered (a line break a space) and as set while it ran (the later value)
        _, tracks = self.trace_tracks(data)
        crossed = [e for t in tracks.values() for e in t if e["name"] == "after-crossed"]
        self.assertEqual([e["args"] for e in crossed], [{"trace_id": "%032x" % 7, "span_id": "%016x" % 9,
                                                         "note": "two lines", "status": "500"}])

    def test_asgi_interleaved(self):
        """Under uvicorn, with requests to /a and /b interleaved on one
        event loop, each handler's samples are under its own request's
        span only (the task steps' span__switch), and every request has
        its span."""
        data, r = self.record("spans_asgi.py", python=SYSTEM_PYTHON)
        rows = span_rows(self.merge("--format", "spans", data).stdout)
        self.assertEqual({k: v[0] for k, v in rows.items()}, {"GET /a": 6, "GET /b": 6})
        seen = {"work_a": 0, "work_b": 0}
        for line in self.merge("--view", "python", data).stdout.splitlines():
            for work, want in (("work_a", "GET /a"), ("work_b", "GET /b")):
                if ";%s (" % work in line:
                    spans = [f[6:-1] for f in line.split(";") if f.startswith("[span ")]
                    self.assertEqual(spans, [want], line)
                    seen[work] += int(line.rsplit(" ", 1)[1])
        # 6 requests x 8 slices x 4 ms of CPU each: ~190 ms of samples per path
        self.assertGreater(min(seen.values()), 100e6, seen)
        # interleaved, the requests' spans cannot nest on one track: each
        # track of the event loop's thread nests, and all of them hold
        # every request once
        _, tracks = self.trace_tracks(data)
        self.assertGreater(len(tracks), 1, list(tracks))
        self.assertEqual(Counter(e["name"] for t in tracks.values() for e in t), {"GET /a": 6, "GET /b": 6})
        _, tracks = self.speedscope_tracks(data)
        self.assertEqual(sum(tracks.values(), Counter()), {"GET /a": 6, "GET /b": 6})

    def test_pytest_plugin(self):
        """pytest --pyperfmap on a real suite with pytest-benchmark: each
        test's span holds its own functions and no other test's, setup
        and teardown have spans of their own, the benchmark's rounds are
        inside its test's span; without --pyperfmap, no spans."""
        suite = os.path.join(self.dir, "suite")
        os.makedirs(suite, exist_ok=True)
        with open(os.path.join(suite, "test_suite.py"), "w") as f:
            f.write(SUITE)
        out = os.path.join(self.dir, "rec-suite")
        cmd = [SYSTEM_PYTHON, "-m", "pytest", "-q", "-p", "pyperfmap._pytest", "-p", "no:cacheprovider",
               suite]
        r = run([RECORD, "-o", out, "--"] + cmd + ["--pyperfmap"], cwd=self.dir)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        folded = self.merge("--view", "python", out + "/perf.data").stdout
        under = {}
        for line in folded.splitlines():
            spans = [f[6:-1] for f in line.split(";") if f.startswith("[span ") and f.endswith("]")]
            funcs = set(re.findall(r"\b(work_\w+|setup_work|teardown_work) \(", line))
            if spans and funcs:
                under.setdefault(spans[-1].split("::")[-1], set()).update(funcs)
        self.assertEqual(under, {"test_a": {"work_a"}, "test_b": {"work_b"},
                                 "test_bench": {"work_bench"},
                                 "test_fixture [setup]": {"setup_work"},
                                 "test_fixture": {"work_fixture"},
                                 "test_fixture [teardown]": {"teardown_work"}})
        r = run(cmd, cwd=self.dir)      # test_current checks there is no span
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


SYSTEM_PYTHON = "/usr/bin/python3"
SUITE = """
import time
import pytest
import pyperfmap


def burn(s):
    end = time.thread_time() + s
    while time.thread_time() < end:
        pass


def work_a(): burn(0.05)
def work_b(): burn(0.05)
def work_bench(): burn(0.002)
def work_fixture(): burn(0.05)
def setup_work(): burn(0.05)
def teardown_work(): burn(0.05)


@pytest.fixture
def heavy():
    setup_work()
    yield
    teardown_work()


def test_a(): work_a()
def test_b(): work_b()
def test_bench(benchmark): benchmark.pedantic(work_bench, rounds=20, iterations=1)
def test_fixture(heavy): work_fixture()


def test_current(request):
    on = request.config.getoption("pyperfmap")
    assert pyperfmap.current_span() == (request.node.nodeid if on else None)
"""


if __name__ == "__main__":
    unittest.main()
