"""The front door: perf-scripts/pyperf-demo on a machine that lacks build
packages (suite "frontdoor").

The packages are really missing from what pyperf-demo and meson look at: a
private mount namespace (unshare --mount, private propagation) shows dpkg a
status file without their stanzas and an empty folder where libiberty-dev
puts its headers; the host's dpkg database and /usr are not touched.  Runs
pyperf-demo on a copy of the tree, so no build folder of the clone is used.

Run as root by /usr/bin/python3 with MESON_SOURCE_ROOT.
"""
import os
import shutil
import subprocess
import tempfile
import unittest

TOP = os.environ["MESON_SOURCE_ROOT"]
HIDDEN = ("libiberty-dev", "zlib1g-dev")


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
        shutil.copytree(TOP, self.src, ignore=lambda d, names: [
            n for n in names if d == TOP and (n.startswith(("build", ".ci-", ".git")) or n == "venv")])

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
        rc, err = self.demo(())
        self.assertNotEqual(rc, 0, err)
        self.assertIn("libiberty/demangle.h", err)
        self.assertIn("pyperf-demo: failed (exit 1): meson setup build", err)


if __name__ == "__main__":
    unittest.main()
