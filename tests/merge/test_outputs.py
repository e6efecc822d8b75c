"""pymerge's output formats and diff, end to end.

SVG flame graphs are loaded in headless Chromium (the page's own script must
run, a click must zoom, a search must highlight), speedscope files are
validated against the schema that the speedscope npm package ships, and
`pymerge diff` is run on two real recordings of one program where one phase
was made slower.  Run by /usr/bin/python3 with PYMERGE, PYPERFMAP_PATH and
SPEEDSCOPE_SCHEMA set (meson test suite "outputs").
"""
import json
import os
import re
import shutil
import struct
import subprocess
import unittest
import zlib

from pmtest import PYMERGE, run
from harness import Scratch, folded as parse_folded, python, spin

SCHEMA = os.environ.get("SPEEDSCOPE_SCHEMA", "")
CHROMIUM = shutil.which("chromium")
PYTHON = python("3.12")

FOLDED = """\
app;<module> (app.py);main (app.py);phase_a (app.py);hashlib_work;sha256_block 300
app;<module> (app.py);main (app.py);phase_b (app.py) 500
app;<module> (app.py);main (app.py);phase_b (app.py);write;sys_write_[k] 120
app;<module> (app.py);main (app.py);phase_c (app.py) 80
"""


def png_rows(path):
    """The pixel rows of an 8-bit RGB or RGBA PNG (as Chromium writes its
    screenshots), each a list of (r, g, b)."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    pos, idat = 8, []
    while pos < len(data):
        n, typ = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if typ == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif typ == b"IDAT":
            idat.append(body)
    assert depth == 8 and interlace == 0 and ctype in (2, 6), (depth, ctype, interlace)
    bpp = 3 if ctype == 2 else 4
    raw, stride, prev, rows, i = zlib.decompress(b"".join(idat)), w * bpp, bytes(w * bpp), [], 0
    for _ in range(h):
        kind, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        if kind == 2:
            line = bytearray((x + y) & 255 for x, y in zip(line, prev))
        elif kind in (1, 3, 4):     # Sub, Average, Paeth (PNG's filters)
            for x in range(stride):
                a = line[x - bpp] if x >= bpp else 0
                b = prev[x]
                if kind == 1:
                    line[x] = (line[x] + a) & 255
                elif kind == 3:
                    line[x] = (line[x] + ((a + b) >> 1)) & 255
                else:
                    c = prev[x - bpp] if x >= bpp else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        prev = bytes(line)
        rows.append([tuple(prev[x:x + 3]) for x in range(0, stride, bpp)])
    return rows


@unittest.skipUnless(CHROMIUM, "chromium is not installed (apt-get install chromium)")
class SvgInChromium(Scratch):
    # The page loads the SVG in a frame (file:// pages may reach each other
    # with --allow-file-access-from-files), checks that the SVG's own script
    # ran to its end, clicks a frame and searches, and writes what it saw
    # into the page, which --dump-dom prints.
    PAGE = """<!DOCTYPE html><html><body><pre id="result">not loaded</pre>
<iframe id="fg" src="flame.svg" width="1200" height="600"></iframe>
<script>
document.getElementById('fg').onload = function () {
  var out = {};
  try {
    var d = this.contentDocument, w = this.contentWindow;
    out.script = !!w.flamegraph;
    var frames = [].slice.call(d.querySelectorAll('g.f'));
    out.frames = frames.length;
    var target = frames.filter(function (g) { return g.querySelector('title').textContent.indexOf('phase_a (app.py) (') === 0; })[0];
    var before = +target.querySelector('rect').getAttribute('width');
    target.dispatchEvent(new MouseEvent('click', {bubbles: true}));
    out.zoomedWidth = +target.querySelector('rect').getAttribute('width');
    out.widthBefore = before;
    out.hiddenAfterZoom = frames.filter(function (g) { return g.classList.contains('hide'); })
      .map(function (g) { return g.querySelector('title').textContent; });
    out.parents = d.querySelectorAll('g.parent').length;
    out.unzoomShown = !d.getElementById('unzoom').classList.contains('hide');
    d.getElementById('unzoom').dispatchEvent(new MouseEvent('click'));
    out.hiddenAfterReset = d.querySelectorAll('g.f.hide').length;
    w.flamegraph.search('^phase_b');
    out.matches = d.querySelectorAll('g.match').length;
    out.matched = d.getElementById('matched').textContent;
  } catch (e) { out.error = String(e); }
  document.getElementById('result').textContent = JSON.stringify(out);
};
</script></body></html>"""

    def chromium(self, *args):
        profile = self.path("chromium-profile")
        # Sanitizer runs preload their runtimes for the Python extension;
        # Chromium is not ours to instrument.
        env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking", "--disable-component-update",
                    "--disable-sync", "--user-data-dir=" + profile, "--allow-file-access-from-files"]
                              + list(args), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=600)

    def test_loads_zooms_and_searches(self):
        folded = self.write("in.folded", FOLDED)
        r = run([PYMERGE, "--input", "folded", "--format", "svg", "--title", "demo", "-o",
                 self.path("flame.svg"), folded])
        self.assertEqual(r.returncode, 0, r.stderr)
        page = self.write("page.html", self.PAGE)
        dom = self.chromium("--virtual-time-budget=5000", "--dump-dom", "file://" + page).stdout
        m = re.search(r'<pre id="result">(.*?)</pre>', dom, re.S)
        self.assertTrue(m, dom[:2000])
        out = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&")
                         .replace("&lt;", "<").replace("&gt;", ">"))
        self.assertNotIn("error", out)
        self.assertTrue(out["script"], "the SVG's script did not run to its end")
        self.assertEqual(out["frames"], 11)   # all, app, <module>, main, 3 phases, 2 + 2 leaves
        self.assertGreater(out["zoomedWidth"], out["widthBefore"] * 2)
        self.assertTrue(all(t.startswith(("phase_b", "phase_c", "write", "sys_write")) for t in out["hiddenAfterZoom"]))
        self.assertEqual(len(out["hiddenAfterZoom"]), 4)
        self.assertEqual(out["parents"], 4)    # all, app, <module>, main
        self.assertTrue(out["unzoomShown"])
        self.assertEqual(out["hiddenAfterReset"], 0)
        self.assertEqual(out["matches"], 1)
        self.assertEqual(out["matched"], "Matched: 62.0%")   # (500 + 120) / 1000

    def test_screenshot(self):
        folded = self.write("in.folded", FOLDED)
        svg = self.path("flame.svg")
        self.assertEqual(run([PYMERGE, "--input", "folded", "--format", "svg", "-o", svg, folded]).returncode, 0)
        png = self.path("shot.png")
        self.chromium("--screenshot=" + png, "--window-size=1200,300", "file://" + svg)
        with open(png, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertGreater(os.path.getsize(png), 5000)

    def test_first_screen_shows_the_widest_row(self):
        """A flame graph taller than the window (a 300-frame spire on a wide
        base, about 5,000 px) opens on its root: in the first 1400x1000
        screen a row of colour spans at least 90% of the graph's width.  An
        icicle (--inverted) has its root at the top and opens there.  The
        window is an iframe of that size: headless Chromium's screenshot of
        a page it scrolled is blank, inside a frame it is not."""
        spire = ";".join("deep%d" % i for i in range(300))
        folded = self.write("tall.folded", "app;main;wide_a 600\napp;main;wide_b 390\napp;main;" + spire + " 10\n")
        page = self.write("window.html", '<!DOCTYPE html><html><body style="margin:0;overflow:hidden">'
                          '<iframe src="tall.svg" width="1400" height="1000" style="border:0;display:block">'
                          '</iframe></body></html>')
        for opts in ([], ["--inverted"]):
            with self.subTest(opts=opts):
                svg, png = self.path("tall.svg"), self.path("first-screen.png")
                r = run([PYMERGE, "--input", "folded", "--format", "svg", "-o", svg] + opts + [folded])
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(svg) as f:
                    height = int(re.search(r'<svg[^>]* height="(\d+)"', f.read()).group(1))
                self.assertGreater(height, 4000)
                # half the pixels a side: a quarter of the PNG to decode
                self.chromium("--screenshot=" + png, "--window-size=1400,1000", "--force-device-scale-factor=0.5",
                              "--virtual-time-budget=3000", "file://" + page)
                rows = png_rows(png)
                scale = len(rows[0]) / 1400
                coloured = max(sum(max(p) - min(p) > 40 for p in row) for row in rows)
                self.assertGreater(coloured, 0.9 * (1200 - 2 * 10) * scale, (len(rows), len(rows[0])))


class Svg(Scratch):
    def test_empty_input_is_an_error_svg(self):
        empty = self.write("empty.folded", "")
        r = run([PYMERGE, "--input", "folded", "--format", "svg", empty])
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stdout, "")
        self.assertIn("no stacks", r.stderr)

    def test_bad_folded_input(self):
        bad = self.write("bad.folded", "a;b 10\nthis line has no count\n")
        r = run([PYMERGE, "--input", "folded", bad])
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr.strip(), "pymerge: %s: line 2: not a folded stack (\"frame;frame;... COUNT\")" % bad)

    def test_options_and_escaping(self):
        folded = self.write("in.folded", 'p;a<b>&"c" 5\np;x_[k] 5\n')
        r = run([PYMERGE, "--input", "folded", "--format", "svg", "--title", "T&T", "--width", "800",
                 "--inverted", folded])
        self.assertEqual(r.returncode, 0, r.stderr)
        svg = r.stdout
        self.assertIn('width="800"', svg)
        self.assertIn(">T&amp;T<", svg)
        self.assertIn("a&lt;b&gt;&amp;&quot;c&quot;", svg)
        self.assertNotIn("x_[k]", svg)            # annotations colour, and are not shown
        # icicle: the root is at the top
        ys = {t: float(y) for y, t in re.findall(r'<rect x="[^"]*" y="([^"]*)"[^>]*/><text[^>]*>([^<]*)<', svg)}
        self.assertLess(ys["all"], ys["p"])


class Speedscope(Scratch):
    def test_valid_against_the_shipped_schema(self):
        if not os.path.exists(SCHEMA):
            if os.environ.get("CI") == "true":
                self.fail("no speedscope schema at %r: .ci/run fetches it" % SCHEMA)
            self.skipTest("no speedscope schema (fetch it as .ci/run does: npm pack speedscope)")
        import jsonschema
        folded = self.write("in.folded", "py-1/1;a;b 3\npy-1/1;a 2\npy-1/2;c;b 4\n")
        r = run([PYMERGE, "--input", "folded", "--format", "speedscope", folded])
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        with open(SCHEMA) as f:
            jsonschema.validate(doc, json.load(f))
        self.assertEqual([p["name"] for p in doc["profiles"]], ["py-1/1", "py-1/2"])
        names = [f["name"] for f in doc["shared"]["frames"]]
        first = doc["profiles"][0]
        self.assertEqual([[names[i] for i in s] for s in first["samples"]], [["a"], ["a", "b"]])
        self.assertEqual(first["weights"], [2, 3])
        self.assertEqual(first["endValue"], 5)


class Lost(Scratch):
    """A recording made to lose: perf's buffer of one page cannot hold one
    sample of an 8 KiB stack copy, so every sample at 20 kHz is lost,
    whatever the machine's load."""

    def setUp(self):
        super().setUp()
        prog = self.write("spin.py", "import time\nt = time.time()\nwhile time.time() - t < 0.5:\n    pass\n")
        self.data = self.path("lost.data")
        subprocess.run(["perf", "record", "-q", "-m", "1", "-F", "20000", "--call-graph", "dwarf,8192",
                        "-o", self.data, "--", PYTHON, prog], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True, timeout=120)
        dump = subprocess.run(["perf", "report", "-D", "-i", self.data], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, universal_newlines=True, timeout=120).stdout
        # perf's two records of the same losses: the kernel's as they
        # happen (the last ones may never be written) and perf's own count
        # at the end, which perf report shows
        self.perf_lost = sum(map(int, re.findall(r"PERF_RECORD_LOST_SAMPLES: .*lost samples :(\d+)", dump)))
        kernel = sum(map(int, re.findall(r"PERF_RECORD_LOST: .* lost:(\d+)", dump)))
        self.assertGreater(self.perf_lost, 100)
        # (both are there, so adding them would count the losses twice;
        # how many of the kernel's were written depends on the machine)
        self.assertGreater(kernel, 0)
        self.assertLessEqual(kernel, self.perf_lost)

    def out(self, *args):
        r = run([PYMERGE] + list(args) + [self.data])
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def test_lost_count_is_perfs_and_every_output_says_it(self):
        """pymerge counts what perf report counts (it counted both records,
        twice as many), and each output shows the loss in its own form:
        a [lost N records] stack in folded, SVG (and its subtitle, drawn
        in Chromium), speedscope (valid against its schema), pprof (a
        sample and a comment, read by go tool pprof), the table's footer
        and row, the trace's global instant."""
        lost = "[lost %d records]" % self.perf_lost
        r = self.out("-v")
        self.assertIn(", %d lost," % self.perf_lost, r.stderr)
        self.assertEqual(r.stdout, "[lost];%s %d\n" % (lost, self.perf_lost))
        table = self.out("--format", "table").stdout
        self.assertIn(lost, table)
        self.assertIn("%d records were lost while recording" % self.perf_lost, table.splitlines()[-1])
        doc = json.loads(self.out("--format", "speedscope").stdout)
        names = [f["name"] for f in doc["shared"]["frames"]]
        self.assertIn(lost, names)
        if os.path.exists(SCHEMA):
            import jsonschema
            with open(SCHEMA) as f:
                jsonschema.validate(doc, json.load(f))
        pb = self.path("lost.pb.gz")
        self.out("--format", "pprof", "-o", pb)
        if shutil.which("go"):
            said = subprocess.run(["go", "tool", "pprof", "-comments", pb], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, universal_newlines=True).stdout
            self.assertIn("%d records were lost while recording" % self.perf_lost, said)
            top = subprocess.run(["go", "tool", "pprof", "-top", pb], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, universal_newlines=True).stdout
            self.assertRegex(top, r"100%%\s+\S+\s+100%%\s+%s" % re.escape(lost))
        # no spans in a cpu recording: the trace says so, and still holds the loss
        trace = run([PYMERGE, "--format", "trace", self.data]).stdout
        self.assertIn('"lostRecords":%d' % self.perf_lost, trace)
        svg = self.path("lost.svg")
        self.out("--format", "svg", "-o", svg)
        with open(svg) as f:
            text = f.read()
        self.assertIn(lost, text)
        self.assertRegex(text, r'<text id="subtitle"[^>]*>%d records were lost' % self.perf_lost)
        if CHROMIUM:
            dom = SvgInChromium.chromium(self, "--dump-dom", "file://" + svg).stdout
            self.assertIn("%d records were lost while recording" % self.perf_lost, dom)


class WriteErrors(Scratch):
    """A write that fails is an error: a full disk, or a reader that went away."""

    def check_full(self, args):
        with open("/dev/full", "w") as full:
            r = subprocess.run([PYMERGE] + args, stdout=full, stderr=subprocess.PIPE,
                               universal_newlines=True, timeout=300)
        self.assertEqual(r.returncode, 2, (args, r.stderr))
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("write error", r.stderr)

    def test_every_format_to_a_full_disk(self):
        folded = self.write("in.folded", FOLDED * 200)
        for fmt in ("folded", "svg", "speedscope"):
            with self.subTest(format=fmt):
                self.check_full(["--input", "folded", "--format", fmt, folded])
                r = run([PYMERGE, "--input", "folded", "--format", fmt, "-o", "/dev/full", folded])
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("/dev/full: write error", r.stderr)
        for fmt in ("table", "svg"):
            with self.subTest(diff=fmt):
                self.check_full(["diff", "--format", fmt, folded, folded])

    def test_closed_pipe(self):
        big = self.write("big.folded", "".join("app;f%d;g 1\n" % i for i in range(200000)))
        p = subprocess.Popen([PYMERGE, "--input", "folded", big], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, universal_newlines=True)
        p.stdout.read(10)
        p.stdout.close()
        err = p.stderr.read()
        self.assertEqual(p.wait(timeout=60), 2, err)
        self.assertIn("write error", err)


PHASES = spin("spin") + """
import sys
def phase_a(): return spin(A)
def phase_b(): return spin(B)
def phase_c(): return spin(C)
def main():
    for _ in range(4):
        phase_a(); phase_b(); phase_c()
A, B, C = (int(x) for x in sys.argv[1:])
main()
"""


@unittest.skipUnless(shutil.which("perf"), "perf is not installed")
class Diff(Scratch):
    def record(self, name, a, b, c):
        app = self.write("app.py", PHASES)
        data = self.path(name + ".data")
        r = run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "999", "--call-graph", "dwarf,16384",
                 "-o", data, "--", PYTHON, "-m", "pyperfmap", app, str(a), str(b), str(c)])
        self.assertEqual(r.returncode, 0, r.stderr)
        folded = self.path(name + ".folded")
        r = run([PYMERGE, "--view", "python", "-o", folded, data])
        self.assertEqual(r.returncode, 0, r.stderr)
        return data, folded

    @staticmethod
    def share(folded, name):
        """Points of the samples kept in stacks through name: diff leaves
        out what a recording lost (the [lost] stack)."""
        total = within = 0
        with open(folded) as f:
            for stack, w in parse_folded(f.read()):
                if stack.startswith("[lost];"):
                    continue
                total += w
                if name in stack.split(";"):
                    within += w
        return 100.0 * within / total

    def test_slower_phase_tops_the_table_and_fails_the_gate(self):
        n = 600000
        base, base_folded = self.record("base", n, n, n)
        new, new_folded = self.record("new", n, 2 * n, n)
        # Of the phases, 1/3 -> 1/2 of the time, but the interpreter's start
        # counts too (and is slower under a loaded machine or a sanitizer):
        # the change the table must give is what the two profiles say.
        grown = self.share(new_folded, "phase_b (app.py)") - self.share(base_folded, "phase_b (app.py)")
        self.assertGreater(grown, 4)
        # a recording against a folded file: both kinds of input mix
        r = run([PYMERGE, "diff", "--view", "python", "--format", "table", base_folded, new])
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = r.stdout.strip().splitlines()[1:]
        self.assertRegex(rows[0], r"^\s*\+\d+\.\d\d\s.*phase_b \(app\.py\)$", r.stdout)
        self.assertAlmostEqual(float(rows[0].split()[0]), grown, delta=0.006)
        r = run([PYMERGE, "diff", "--view", "python", "--format", "table", "--fail-above",
                 "%.2f" % (grown / 2), base, new])
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("phase_b (app.py)", r.stderr)
        r = run([PYMERGE, "diff", "--view", "python", "--fail-above", "60", "-o", self.path("d.svg"), base, new])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.path("d.svg")) as f:
            svg = f.read()
        self.assertRegex(svg, r"phase_b \(app\.py\) \(\d+ cpu-ns, [\d.]+%; \+\d+\.\d\d points\)")
        self.assertIn("rgb(255,", svg)   # red: grew


if __name__ == "__main__":
    unittest.main()
