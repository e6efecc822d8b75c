"""pymerge diff --runs, the CI gate of docs/ci.md, on its worked example:
tests/programs/gate_bench, a pytest suite recorded under pytest
--pyperfmap several times on each side, as CI would."""
import os
import re
import subprocess
import unittest
import xml.etree.ElementTree as ET

from harness import PYMERGE, RECORD, SharedScratch, run

HERE = os.path.dirname(os.path.abspath(__file__))
SUITE = os.path.join(HERE, "programs", "gate_bench")
SYSTEM_PYTHON = "/usr/bin/python3"
# Runs a side, and samples a second (bench/bench_gate.py measured the
# gate's catch and false-alarm rates with the same, docs/ci.md).
RUNS = 5
FREQ = "2999"


class Gate(SharedScratch):
    @classmethod
    def setUpClass(cls):
        """RUNS recordings of the suite as it is (base), with parse_fields
        30% slower (slow), and as it is again (same), and 2 without
        test_hash (nohash), interleaved so that the machine's load falls
        on every side alike."""
        super().setUpClass()
        cls.runs = {"base": [], "slow": [], "same": [], "nohash": []}
        for i in range(RUNS):
            for side, slowdown, only in (("base", "1", []), ("slow", "1.3", []), ("same", "1", []),
                                         ("nohash", "1", ["-k", "not test_hash"])):
                if side == "nohash" and i >= 2:
                    continue
                out = os.path.join(cls.dir, "%s%d" % (side, i))
                cmd = [RECORD, "-F", FREQ, "-m", "128M", "-o", out, "--", SYSTEM_PYTHON, "-m", "pytest",
                       "-q", "-p", "pyperfmap._pytest", "-p", "no:cacheprovider", "--pyperfmap", SUITE] + only
                r = run(cmd, env={"GATE_SLOWDOWN": slowdown}, cwd=cls.dir)
                if r.returncode:
                    raise AssertionError("%s: %s" % (" ".join(cmd), r.stdout + r.stderr))
                cls.runs[side].append(out)

    def diff(self, new, *options):
        # --min-change 15: in unchanged comparisons here a function against
        # the rest of its span moved by up to 11% (Holm p 0.064); the 30%
        # slowdown moved parse_fields by 22% at least (docs/ci.md).
        return run([PYMERGE, "diff", "--runs", str(RUNS), "--normalize", "--min-change", "15"] + list(options)
                   + self.runs["base"] + self.runs[new])

    def test_slowdown_caught_and_named(self):
        """A 30% slowdown of one function of one benchmark exits 3, and
        its one line names the benchmark (test_parse), the function
        (parse_fields), the size of the change and the evidence (runs,
        p-values); the table marks that span slower and no other."""
        r = self.diff("slow")
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        said = [l for l in r.stderr.splitlines() if "slower" in l]
        self.assertEqual(len(said), 1, r.stderr)
        self.assertRegex(said[0], r"test_parse is .*% slower: .* per call \(means of 5 and 5 runs; "
                                  r"Welch p \S+, Holm p \S+\); grown parse_fields \(test_bench\.py\): "
                                  r"\+\S+ ms per call, \+\S+% against the rest")
        slower = [l for l in r.stdout.splitlines() if re.search(r"\bslower\b", l)]
        self.assertEqual(len(slower), 1, r.stdout)
        self.assertTrue(slower[0].endswith("::test_parse"), r.stdout)

    def test_unchanged_passes(self):
        """The same suite without the slowdown exits 0: no span slower."""
        r = self.diff("same")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertNotRegex(r.stdout, r"\bslower\b")

    def test_markdown_report(self):
        """--format markdown -o: a pull request comment that GitHub's own
        renderer (cmark-gfm) turns into a table with the slower span, its
        grown function and a link to its differential flame graph, an SVG
        written beside the report that holds parse_fields."""
        report = os.path.join(self.dir, "report", "gate.md")
        os.makedirs(os.path.dirname(report), exist_ok=True)
        r = self.diff("slow", "--format", "markdown", "-o", report)
        self.assertEqual(r.returncode, 3, r.stderr)
        html = subprocess.run(["cmark-gfm", "-e", "table", report], stdout=subprocess.PIPE,
                              universal_newlines=True, check=True).stdout
        rows = re.findall(r"<tr>(.*?)</tr>", html, re.S)
        row = [x for x in rows if "test_parse" in x and "parse_fields" in x]
        self.assertEqual(len(row), 1, html)
        link = re.search(r'<a href="([^"]+)">flame graph</a>', row[0]).group(1)
        svg = os.path.join(os.path.dirname(report), link)
        root = ET.parse(svg).getroot()
        self.assertTrue(root.tag.endswith("svg"))
        with open(svg) as f:
            self.assertIn("parse_fields", f.read())

    def test_graph_not_written(self):
        """A changed span's flame graph that cannot be written (a folder
        in its place) costs only its link: one warning naming the report,
        the report written without the link, and the gate's exit 3."""
        # the graph's name comes from the span's, which holds pytest's
        # node id: where it is written unblocked says what to block
        free = os.path.join(self.dir, "free")
        os.makedirs(free)
        self.assertEqual(self.diff("slow", "--format", "markdown", "-o", os.path.join(free, "gate.md")).returncode, 3)
        graphs = [f for f in os.listdir(free) if f.endswith("test_parse.svg")]
        self.assertEqual(len(graphs), 1, os.listdir(free))
        folder = os.path.join(self.dir, "blocked")
        os.makedirs(os.path.join(folder, graphs[0]))
        report = os.path.join(folder, "gate.md")
        r = self.diff("slow", "--format", "markdown", "-o", report)
        self.assertEqual(r.returncode, 3, r.stderr)
        said = [l for l in r.stderr.splitlines() if "no flame graph" in l]
        self.assertEqual(len(said), 1, r.stderr)
        self.assertIn(report, said[0])
        with open(report) as f:
            text = f.read()
        self.assertIn("test\\_parse", text)
        self.assertNotIn("[flame graph](", text)

    def test_new_and_gone_benchmark(self):
        """A benchmark only in the new runs (test_hash added) or only in
        the base ones (removed) is no test: the table calls it new or gone
        and the gate passes (exit 0), as the markdown report, rendered by
        cmark-gfm, does in test_hash's row."""
        base, nohash = self.runs["base"][:2], self.runs["nohash"]
        for first, second, word in ((nohash, base, "new"), (base, nohash, "gone")):
            cmd = [PYMERGE, "diff", "--runs", "2", "--min-change", "15"] + first + second
            r = run(cmd)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            line = [l for l in r.stdout.splitlines() if l.endswith("::test_hash")]
            self.assertEqual(len(line), 1, r.stdout)
            self.assertRegex(line[0], r"^\s*%s\s.*\s%s\s" % (word, word))
            report = os.path.join(self.dir, "report-" + word, "gate.md")
            os.makedirs(os.path.dirname(report), exist_ok=True)
            r = run(cmd[:2] + ["--format", "markdown", "-o", report] + cmd[2:])
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            html = subprocess.run(["cmark-gfm", "-e", "table", report], stdout=subprocess.PIPE,
                                  universal_newlines=True, check=True).stdout
            row = [x for x in re.findall(r"<tr>(.*?)</tr>", html, re.S) if "::test_hash</td>" in x]
            self.assertEqual(len(row), 1, html)
            self.assertIn("<td align=\"right\">%s</td>" % word, row[0])

    def test_markdown_of_one_recording(self):
        """pymerge --format markdown of one recording: its span table,
        rendered by cmark-gfm with one row per test holding its count (1)
        and the CPU time --format spans gives it."""
        rec = self.runs["base"][0]
        spans = run([PYMERGE, "--format", "spans", rec], check=True).stdout
        cpu = {l.split()[-1].split("::")[-1]: l.split()[7] for l in spans.splitlines()[1:]
               if "[" not in l}
        md = run([PYMERGE, "--format", "markdown", rec], check=True).stdout
        html = subprocess.run(["cmark-gfm", "-e", "table"], input=md, stdout=subprocess.PIPE,
                              universal_newlines=True, check=True).stdout
        for test in ("test_parse", "test_sort", "test_hash"):
            cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", html, re.S)
                     if row.count("<td") and row.split("</td>")[0].endswith("::" + test)]
            self.assertEqual(len(cells), 1, html)
            self.assertEqual((cells[0][1], cells[0][6]), ("1", cpu[test]), html)

    def test_bad_usage(self):
        """Too few inputs for --runs, one new run only (no spread to test),
        a format the runs cannot give, --runs 0 and --runs 1, and a gate
        option without --runs: one line each naming what is wrong, exit 1,
        nothing written."""
        for args, said in ((["--runs", "5"] + self.runs["base"], "give the 5 base runs, then 2 new"),
                           (["--runs", "2", "a", "b", "c"], "give the 2 base runs, then 2 new ones or more"),
                           (["--runs", "1", "a", "b", "c"], "--runs 1: give a number of base runs, 2 or more"),
                           (["--runs", "2", "--format", "svg", "a", "b", "c"], "--format table or markdown"),
                           (["--runs", "0", "a", "b"], "--runs 0: give a number of base runs"),
                           (["--min-change", "15", "a", "b"], "--min-change and --normalize go with --runs")):
            r = run([PYMERGE, "diff"] + args)
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
            self.assertIn(said, r.stderr)
            self.assertEqual(r.stdout, "")


if __name__ == "__main__":
    unittest.main()
