"""What makes a recording folder travel: a copy of kallsyms, and with
--archive the sampled DSOs and their debug files by build id."""
import os
import re
import shutil
import subprocess

from pyperfrecord import contract


def save_kallsyms(out_dir):
    try:
        with open("/proc/kallsyms") as f:
            text = f.read()
    except OSError:
        return False
    # With kptr_restrict every address reads as zero: such a copy is useless.
    if not re.search(r"^0*[1-9a-f]", text, re.M):
        return False
    with open(os.path.join(out_dir, "kallsyms"), "w") as f:
        f.write(text)
    return True


def build_id_of(path):
    """The GNU build id of an ELF file, in hex, or None."""
    r = subprocess.run(["readelf", "-n", "-W", path], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, universal_newlines=True)
    m = re.search(r"Build ID: ([0-9a-f]+)", r.stdout)
    return m.group(1) if r.returncode == 0 and m else None


def archive_objects(perf, data, out_dir):
    """--archive: the ELF objects perf recorded build ids for (the sampled
    DSOs and the vdso) copied to OUT/.build-id/xx/rest/elf, and their debug
    files to .../debug, as perf archive does; pymerge looks there first.
    Each comes from perf's build-id cache (~/.debug, which has the recorded
    object even when the file was rebuilt since) or the file itself, if its
    build id is the recorded one.  Returns (objects copied, bytes)."""
    r = subprocess.run([perf, "buildid-list", "-i", data], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, universal_newlines=True)
    cache = os.environ.get("PERF_BUILDID_DIR") or os.path.expanduser("~/.debug")
    copied = size = 0
    for line in r.stdout.splitlines():
        bid, _, path = line.partition(" ")
        if not re.fullmatch(r"[0-9a-f]{4,40}", bid) or path.startswith("[kernel"):
            continue    # kallsyms is saved on its own
        cached = os.path.join(cache, ".build-id", bid[:2], bid[2:])
        dest = os.path.join(out_dir, contract.DIR_BUILD_ID, bid[:2], bid[2:])
        wanted = {"elf": [os.path.join(cached, "elf"), os.path.join(cached, "vdso"), path],
                  "debug": [os.path.join(cached, "debug"),
                            "/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])]}
        for name, sources in wanted.items():
            src = next((s for s in sources if os.path.isfile(s) and build_id_of(s) == bid), None)
            if src:
                os.makedirs(dest, exist_ok=True)
                shutil.copyfile(src, os.path.join(dest, name))
                copied += 1
                size += os.path.getsize(src)
    return copied, size
