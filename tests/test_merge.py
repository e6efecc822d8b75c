"""pymerge merge: three real recordings summed into one profile.

Three short pyperf-record runs of one Python program (as three hosts would
give): merging the recordings, their folded outputs or their pprof files
must give exactly the sum of their folded outputs; labels show in go tool
pprof -tags and -raw; pprof's mappings carry the DSOs and the build ids perf
recorded; diff reads merged profiles; bad inputs are one line and exit 2.
Run by /usr/bin/python3 (meson suite "pprof") with PYPERF_SCRIPTS, PYMERGE
and PYPERFMAP_PATH set; needs `go` (golang-go).
"""
import os
import re
import subprocess
import sys
import unittest
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import PYMERGE, folded_sums, go_env, run  # noqa: E402
# test_pprof's program (two hot functions and a sleeping one), recorded
from test_pprof import PYTHON, PymergeCase, raw_stacks, record_burn  # noqa: E402

HOSTS = ("a", "b", "c")


def folded_lines(text):
    """{whole folded line without its count: weight}."""
    return folded_sums(text)


class MergeTest(PymergeCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.env = go_env(cls.dir)
        # the folders, as pyperf-record -o wrote them
        cls.recs = {h: os.path.dirname(record_burn(cls.dir, "host-" + h)[0]) for h in HOSTS}

    def out(self, *args):
        """pymerge's standard output."""
        return self.pymerge(*args).stdout

    def path(self, name):
        return os.path.join(self.dir, name)

    def each(self, fmt, ext):
        """Each recording written as fmt: {host: path}."""
        out = {}
        for h in HOSTS:
            out[h] = self.path("%s.%s" % (h, ext))
            self.pymerge("--format", fmt, "-o", out[h], os.path.join(self.recs[h], "perf.data"))
        return out

    def summed(self):
        total = Counter()
        for h in HOSTS:
            total.update(folded_lines(self.out(os.path.join(self.recs[h], "perf.data"))))
        return total

    def test_merge_of_recordings_is_the_sum_of_their_folded_outputs(self):
        want = self.summed()
        self.assertGreater(len(want), 10)
        # recording folders and perf.data files alike
        got = folded_lines(self.out("merge", *[self.recs[h] for h in HOSTS]))
        self.assertEqual(got, want)
        # -o's extension picks the format; the folded files merge the same
        merged = self.path("rec.folded")
        self.pymerge("merge", "-o", merged, *[os.path.join(self.recs[h], "perf.data") for h in HOSTS])
        with open(merged) as f:
            self.assertEqual(folded_lines(f.read()), want)
        folded = self.each("folded", "folded")
        self.assertEqual(folded_lines(self.out("merge", *folded.values())), want)
        # pprof out: go tool pprof sees the same sum
        pb = self.path("rec.pb.gz")
        self.pymerge("merge", "-o", pb, *[self.recs[h] for h in HOSTS])
        stacks = Counter()
        for line, w in want.items():
            stacks[tuple(line.split(";")[1:])] += w
        self.assertEqual(raw_stacks(self.go_pprof("-raw", pb)), stacks)
        # the program is the recordings' (pprof's main mapping)
        self.assertIn("\nFile: %s\n" % os.path.basename(PYTHON), "\n" + self.go_pprof("-top", pb))
        # diff reads both merged outputs, and they agree
        r = run([PYMERGE, "diff", "--format", "table", "--top", "100000", "--fail-above", "0.01",
                 merged, pb])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("hot (burn.py)", r.stdout)

    def test_diff_leaves_out_what_a_recording_lost(self):
        """A recording that lost records (pymerge ends its folded output
        with a [lost] stack weighing them) has the same program's shares
        as one that lost none: diff compares the samples each side kept,
        says so, and the lost stack is no function of the table."""
        merged = self.path("kept.folded")
        self.pymerge("merge", "-o", merged, *[self.recs[h] for h in HOSTS])
        with open(merged) as f:
            text = f.read()
        total = sum(int(line.rsplit(" ", 1)[1]) for line in text.splitlines())
        lossy = self.path("lossy.folded")
        with open(lossy, "w") as f:
            f.write(text + "[lost];[lost 500 records] %d\n" % (total // 2))
        r = run([PYMERGE, "diff", "--format", "table", "--top", "100000", "--fail-above", "0.01",
                 merged, lossy])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("the new profile lost records while recording", r.stderr)
        self.assertNotIn("[lost", r.stdout)
        self.assertIn("hot (burn.py)", r.stdout)

    def test_pprof_inputs_keep_their_labels(self):
        pbs = self.each("pprof", "pb.gz")
        want = self.summed()
        args = []
        for h in HOSTS:
            args += ["--label", "host=" + h, pbs[h]]
        out = self.path("hosts.pb.gz")
        self.pymerge("merge", "-o", out, *args)
        raw = self.go_pprof("-raw", out)
        for h in HOSTS:
            self.assertRegex(raw, r"host:\[%s\]" % h)
        # -tags: each host's share is its own recording's total
        tags = self.go_pprof("-tags", "-unit", "ns", out)
        for h in HOSTS:
            own = sum(folded_lines(self.out("--input", "pprof", pbs[h])).values())
            self.assertRegex(tags, r"\b%d(?:\.0)?ns \(\s*[\d.]+%%\): %s\n" % (own, h), tags)
        # merged again, a merged profile keeps its tags, after the new label
        again = self.path("again.pb.gz")
        self.pymerge("merge", "--label", "release=r2", out, "-o", again)
        raw = self.go_pprof("-raw", again)
        self.assertRegex(raw, r"release:\[r2\]")
        self.assertRegex(raw, r"host:\[b\]")
        # without --label, the file name is the tag
        self.assertRegex(self.go_pprof("-raw", self.merged_default(pbs)), r"input:\[\S*a\.pb\.gz\]")
        # --label-frames: [host=X] under each root, folded; the sum stays
        lf = folded_lines(self.out("merge", "--label-frames", *args))
        plain = Counter()
        for line, w in lf.items():
            parts = line.split(";")
            self.assertRegex(parts[1], r"^\[host=[abc]\]$")
            plain[";".join(parts[:1] + parts[2:])] += w
        self.assertEqual(plain, want)

    def merged_default(self, pbs):
        out = self.path("default.pb.gz")
        self.pymerge("merge", "--format", "pprof", "-o", out, *pbs.values())
        return out

    def test_mappings_carry_dsos_and_build_ids(self):
        data = os.path.join(self.recs["a"], "perf.data")
        pb = self.path("maps.pb.gz")
        self.pymerge("--format", "pprof", "-o", pb, data)
        raw = self.go_pprof("-raw", pb)
        maps = {}
        for line in raw.split("\nMappings\n", 1)[1].splitlines():
            m = re.match(r"^\d+: 0x0/0x0/0x0 (\S+) ([0-9a-f]*)\s*\[FN\]$", line)
            self.assertTrue(m, line)
            maps[m.group(1)] = m.group(2)
        # perf's own list of the recorded build ids agrees
        r = subprocess.run(["perf", "buildid-list", "-i", data], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, timeout=300)
        recorded = dict(reversed(l.split(" ", 1)) for l in r.stdout.splitlines() if " " in l)
        # With --buildid-mmap a recording holds the build ids of the mmap
        # records, which the kernel's is not one of: perf names the
        # running kernel's then.
        recorded.pop("[kernel.kallsyms]", None)
        libc = [p for p in maps if re.search(r"/libc\.so\.6$", p)]
        self.assertTrue(libc, maps)
        # perf records the build ids of the files its samples landed in, not
        # of those only on their stacks (libc under a system call, in some
        # runs): each mapping perf has one for carries it
        checked = 0
        for path, bid in maps.items():
            if path in recorded:
                self.assertRegex(bid, r"^[0-9a-f]{40}$", path)
                self.assertEqual(bid, recorded[path][:len(bid)], path)
                checked += 1
        self.assertGreater(checked, 0, (maps, recorded))
        # native locations point at their mapping: libc's frames
        self.assertRegex(raw, r"M=%d " % (list(maps).index(libc[0]) + 1))
        # read back and merged, the mappings stay
        again = self.path("maps-again.pb.gz")
        self.pymerge("merge", "-o", again, pb)
        self.assertIn("%s %s [FN]" % (libc[0], maps[libc[0]]), self.go_pprof("-raw", again))

    def test_bad_inputs_are_one_line_and_exit_2(self):
        good = self.recs["a"]
        pb = self.each("pprof", "pb.gz")["b"]
        with open(pb, "rb") as f:
            body = f.read()
        bad = {}
        for name, data in {"truncated.pb.gz": body[:len(body) // 2],
                           "wrong-magic.pb.gz": b"PK\x03\x04" + body[4:],
                           "garbage.folded": b"not a folded line\n"}.items():
            bad[name] = self.path(name)
            with open(bad[name], "wb") as f:
                f.write(data)
        bad["missing"] = self.path("no-such-recording")
        for name, path in bad.items():
            with self.subTest(name=name):
                r = run([PYMERGE, "merge", "-o", self.path("out.pb.gz"), good, path, good])
                self.assertEqual(r.returncode, 2, (r.stdout[:200], r.stderr))
                # (the good recording may warn of records perf lost on a
                # loaded machine, as CI's sanitized pass saw: its own lines)
                lines = [l for l in r.stderr.splitlines() if not l.startswith("pymerge: " + good)]
                self.assertEqual(len(lines), 1, r.stderr)
                self.assertTrue(lines[0].startswith("pymerge: " + path + ": "), r.stderr)
        # a label without a value is bad usage
        r = run([PYMERGE, "merge", "--label", "host", good])
        self.assertEqual(r.returncode, 1)


if __name__ == "__main__":
    unittest.main()
