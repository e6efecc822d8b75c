"""The front door (suite "frontdoor"): perf-scripts/pyperf-demo on a
machine that lacks build packages, and the README's commands as pasted.

The packages are really missing from what pyperf-demo and meson look at: a
private mount namespace (unshare --mount, private propagation) shows dpkg a
status file without their stanzas and an empty folder where libiberty-dev
puts its headers; the host's dpkg database and /usr are not touched.  Runs
pyperf-demo on a copy of the tree, so no build folder of the clone is used.

The README test runs the "Quick start" and "A tour" blocks in order, in a
copy of the tree whose build/ is the test's build folder: the lines before
`meson devenv -C build -w . bash` in a plain bash, the lines after it (the
rest of both sections) in that devenv shell, and the subsection "Without a
build tree" in a plain bash again.  No substitution is made.

Run as root by /usr/bin/python3 with MESON_SOURCE_ROOT and MESON_BUILD_ROOT.
"""
import glob
import os
import re
import shutil
import subprocess
import tempfile
import unittest

TOP = os.environ["MESON_SOURCE_ROOT"]
HIDDEN = ("libiberty-dev", "zlib1g-dev")
DEVENV = "meson devenv -C build -w . bash"


def copy_tree(dst):
    """The clone's files, without its build folders, venv and .git."""
    shutil.copytree(TOP, dst, ignore=lambda d, names: [
        n for n in names if d == TOP and (n.startswith(("build", ".ci-", ".git")) or n == "venv")])


def sh_blocks(text):
    """(heading path, code) of each ```sh block of a Markdown text."""
    blocks, heads = [], []
    for m in re.finditer(r"^(#{1,3}) ([^\n]*)$|^```sh\n(.*?)^```$", text, re.M | re.S):
        if m.group(1):
            heads = heads[:len(m.group(1)) - 1] + [m.group(2)]
        else:
            blocks.append((tuple(heads), m.group(3)))
    return blocks


def readme_parts():
    """The README's quick start and tour as three scripts: before the
    devenv shell, in it, and the pip subsection."""
    with open(os.path.join(TOP, "README.md")) as f:
        blocks = sh_blocks(f.read())
    before, inside, pip = [], [], []
    for heads, code in blocks:
        if len(heads) < 2 or heads[1] not in ("Quick start", "A tour"):
            continue
        if len(heads) > 2 and heads[2].startswith("Without a build tree"):
            pip.append(code)
            continue
        for line in code.splitlines():
            if line.startswith(DEVENV):
                inside.append("")
            elif inside:
                inside.append(line)
            else:
                before.append(line)
    return "\n".join(before), "\n".join(inside), "\n".join(pip)


def without_stanzas(status, packages):
    """dpkg's status file text without the stanzas of packages."""
    keep = []
    for stanza in status.split("\n\n"):
        first = stanza.strip().split("\n", 1)[0]
        if first.startswith("Package: ") and first[len("Package: "):] in packages:
            continue
        keep.append(stanza)
    return "\n\n".join(keep)


@unittest.skipUnless(os.geteuid() == 0, "mount namespaces need root")
class MissingPackages(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="frontdoor-")
        os.chmod(self.dir, 0o755)  # readable by nobody
        self.src = os.path.join(self.dir, "src")
        copy_tree(self.src)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def demo(self, hide_in_dpkg, user=None):
        """pyperf-demo run in a mount namespace where /usr/include/libiberty
        is empty and dpkg's status lacks hide_in_dpkg; (exit status, stderr)."""
        status = os.path.join(self.dir, "status")
        with open("/var/lib/dpkg/status") as f:
            text = f.read()
        with open(status, "w") as f:
            f.write(without_stanzas(text, hide_in_dpkg))
        run = [os.path.join(self.src, "perf-scripts", "pyperf-demo")]
        if user:
            run = ["setpriv", "--reuid=" + user, "--regid=nogroup", "--clear-groups"] + run
        script = ('mount --bind "$1" /var/lib/dpkg/status && mount -t tmpfs none /usr/include/libiberty'
                  ' && shift && exec "$@"')
        p = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
                            status] + run, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
        return p.returncode, p.stderr

    def test_missing_packages_are_named(self):
        """As a user who cannot install them, pyperf-demo names each missing
        package and the apt-get line, and stops before building."""
        rc, err = self.demo(HIDDEN, user="nobody")
        self.assertEqual(rc, 1, err)
        self.assertIn("missing Debian packages: libiberty-dev zlib1g-dev;", err)
        self.assertIn("apt-get install libiberty-dev zlib1g-dev", err)
        self.assertFalse(os.path.exists(os.path.join(self.src, "build")))

    def test_a_failing_step_shows_its_error(self):
        """dpkg says installed but the headers are gone: meson setup fails,
        and its own error is shown with the step, not thrown away."""
        with open(os.path.join(TOP, "packages", "debian-build.txt")) as f:
            wanted = [w for line in f for w in line.split("#")[0].split()]
        p = subprocess.run(["dpkg-query", "-W", "-f", "${Status}\\n"] + wanted, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, universal_newlines=True)
        if p.stdout.count("install ok installed") != len(wanted):
            self.skipTest("a build package is missing here: pyperf-demo would install it for real")
        rc, err = self.demo(())
        self.assertNotEqual(rc, 0, err)
        self.assertIn("libiberty/demangle.h", err)
        self.assertIn("pyperf-demo: failed (exit 1): meson setup build", err)


class Readme(unittest.TestCase):
    def test_every_block_parses(self):
        """Every sh block of the README is valid bash (a backslash before a
        comment, which ends the command there, is not caught by this alone,
        hence the run below)."""
        with open(os.path.join(TOP, "README.md")) as f:
            for heads, code in sh_blocks(f.read()):
                p = subprocess.run(["bash", "-n"], input=code, stderr=subprocess.PIPE,
                                   universal_newlines=True)
                self.assertEqual(p.returncode, 0, "%s: %s" % (" / ".join(heads), p.stderr))

    @staticmethod
    def remove_maps(src):
        """The perf maps the recordings left in /tmp (each folder has its copy)."""
        for saved in glob.glob(os.path.join(src, "*", "perf-*.map")):
            try:
                os.unlink(os.path.join("/tmp", os.path.basename(saved)))
            except FileNotFoundError:
                pass

    @unittest.skipUnless(os.geteuid() == 0, "perf and attaching need root")
    def test_quick_start_and_tour_as_pasted(self):
        """The quick start and the tour run as written, from the top of a
        copy of the clone, each command exiting 0, and leave what they say."""
        before, inside, pip = readme_parts()
        self.assertIn("pyperf-record", inside)
        self.assertIn("pip install", pip)
        d = tempfile.mkdtemp(prefix="frontdoor-readme-")
        self.addCleanup(shutil.rmtree, d, ignore_errors=True)
        src = os.path.join(d, "src")
        copy_tree(src)
        os.symlink(os.environ["MESON_BUILD_ROOT"], os.path.join(src, "build"))
        self.addCleanup(self.remove_maps, src)
        bash = ["bash", "-euo", "pipefail", "-x", "-c"]
        env = dict(os.environ, CI="true")
        for name, argv in (("before devenv", bash + [before]),
                           ("in devenv", ["meson", "devenv", "-C", "build", "-w", "."] + bash + [inside]),
                           ("pip", bash + [pip])):
            p = subprocess.run(argv, cwd=src, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, universal_newlines=True, timeout=600)
            self.assertEqual(p.returncode, 0, "README, %s:\n%s" % (name, p.stdout[-6000:]))
        with open(os.path.join(src, "rec", "flame.svg")) as f:
            self.assertIn("handle (app.py)", f.read())
        with open(os.path.join(src, "python.folded")) as f:
            self.assertIn("handle (app.py)", f.read())
        with open(os.path.join(src, "calls.json")) as f:
            self.assertIn("fetch_rates (app.py)", f.read())
        for out in ("wall.folded", "sc.folded", "all.folded", "diff.svg", "live/perf.data",
                    "box/perf.data", "doc/perf.data", "json.html"):
            self.assertGreater(os.path.getsize(os.path.join(src, out)), 0, out)


class InterpreterThatDoesNotRun(unittest.TestCase):
    def record(self, python):
        out = os.path.join(self.dir, "rec")
        env = dict(os.environ, PATH=os.path.join(os.environ["MESON_BUILD_ROOT"], "merge") + ":" + os.environ["PATH"],
                   PYTHONPATH=os.path.join(os.environ["MESON_BUILD_ROOT"], "libpyperfmap"))
        p = subprocess.run([os.path.join(TOP, "perf-scripts", "pyperf-record"), "-o", out, "--", python, "-c", "pass"],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, env=env, timeout=120)
        return p.returncode, p.stderr

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="frontdoor-python-")
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)

    def test_its_own_error_in_one_line(self):
        """An interpreter that exits at once with an error gets that error,
        in one line, not "no build for that version"."""
        python = os.path.join(self.dir, "python3.99")
        with open(python, "w") as f:
            f.write("#!/bin/sh\necho 'python3.99: this interpreter is not installed' >&2\nexit 127\n")
        os.chmod(python, 0o755)
        rc, err = self.record(python)
        self.assertEqual(rc, 2, err)
        self.assertEqual(err.strip().splitlines(),
                         ["pyperf-record: %s does not run: python3.99: this interpreter is not installed" % python])

    def test_a_pyenv_shim(self):
        """pyenv's shim for a version that is installed but not selected."""
        shim = "/root/.pyenv/shims/python3.12"
        if not os.path.exists(shim) or subprocess.run([shim, "-c", "pass"], stderr=subprocess.DEVNULL).returncode == 0:
            self.skipTest("no pyenv shim for python3.12 that fails to run here")
        rc, err = self.record(shim)
        self.assertEqual(rc, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("does not run: pyenv: python3.12: command not found", err)


class BuildFolderCopy(unittest.TestCase):
    def test_one_line_where_its_parts_are_missing(self):
        """build/perf-scripts/pyperf-record (run as perf-scripts/pyperf-record
        from inside build/, where meson devenv starts) looks for its parts
        where meson install puts them: before an install, one line saying
        which command to run instead, not a traceback."""
        copy = os.path.join(os.environ["MESON_BUILD_ROOT"], "perf-scripts", "pyperf-record")
        with open(copy) as f:
            modules = re.search(r"^MODULES = '(.*)'$", f.read(), re.M)
        if not modules or os.path.isdir(os.path.join(modules.group(1), "pyperfrecord")):
            self.skipTest("not a build folder's copy, or pyperf-record is installed")
        p = subprocess.run([copy, "-o", "unused", "--", "/usr/bin/python3", "-c", "pass"],
                           cwd=os.environ["MESON_BUILD_ROOT"], stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        self.assertNotEqual(p.returncode, 0)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn("run the source tree's perf-scripts/pyperf-record", p.stderr)


if __name__ == "__main__":
    unittest.main()
