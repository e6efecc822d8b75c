#!/usr/bin/env python3
"""pyperfmap beside the profilers users pick instead, on the same programs,
in one run, interleaved.

    bench/bench_peers.py [--quick] [--runs N] [--scale X] [--build BUILD] [--cache DIR]
                         [--tools NAME,...] [--programs NAME,...] [--json OUT]

Programs (bench/peers/, each timing its own work, see _timing.py): callheavy,
mix (json, re, hashlib), django (a deep request loop), numpy (BLAS), asyncio
(a server and its clients on the loopback) and leaks (tests/programs/leaky.py,
which prints what it keeps).

Tools, each run on every program: unprofiled; pyperf-record --mode cpu
(defaults), wall, alloc and leaks; py-spy record, plain and --native;
austin; memray run; scalene run; perf record -g of -X perf.  The programs
and the peers run on pyenv's CPython 3.12 (memray and Scalene support it),
from a venv this script makes under --cache with the pinned versions of
PINS and DEPS from PyPI; a tool that fails to install or to run is named,
and the rest go on.  Rows "(3.13)" run unprofiled, pyperfmap cpu and -X perf
on pyenv's 3.13 from a second venv (numpy and Django only).

For each program and tool, the median of --runs of:
  work CPU, wall   the program's own timing of its work, against unprofiled
  tool CPU         the whole command's CPU time (rusage of its process tree)
                   less the program's process CPU: what the profiler itself
                   spent (perf, py-spy...; memray's and Scalene's work runs
                   in the program, and shows in work CPU)
  output           the size of what the tool wrote
  agreement        the largest difference, in points, between the tool's
                   Python-level self shares (each sample to its innermost
                   Python function) and pyperfmap cpu's (pymerge --view
                   python) of the same round, over pyperfmap's top 20
  memory (leaks)   leak_big's bytes allocated (alloc, memray, Scalene) and
                   leak_big's and leak_small's bytes live at the end (leaks,
                   memray's leaked records) against what leaky.py keeps

Prints Markdown tables, and writes every measurement to --json.  Needs root
(perf, ptrace), a build of pyperfmap (meson compile -C BUILD) and PyPI.
Timings are wall-clock on a shared machine: the load average is printed.
"""
import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROGRAMS_DIR = os.path.join(HERE, "peers")
PY312 = "/root/.pyenv/versions/3.12.1/bin/python3.12"
PY313 = "/root/.pyenv/versions/3.13.0/bin/python3.13"
PINS = {"py-spy": "py-spy==0.4.3", "austin": "austin-dist==4.0.0", "memray": "memray==1.20.0",
        "scalene": "scalene==2.4.0"}
DEPS = ["numpy==2.5.5", "Django==4.2.30"]
PROGRAMS = {"callheavy": ("callheavy.py", None), "mix": ("mix.py", None),
            "django": ("django_requests.py", "django"), "numpy": ("numpy_blas.py", "numpy"),
            "asyncio": ("asyncio_server.py", None), "leaks": ("leaks_driver.py", None)}
PYFRAME = re.compile(r"^(.+) \((?:.*/)?([^/()]+\.py)(?::\d+)?\)$")     # py-spy, pymerge
PERFFRAME = re.compile(r"^py::(.+):(?:.*/)?([^/]+\.py)$")               # -X perf's map
AUSTINFRAME = re.compile(r"^(?:.*/)?([^/:;]+\.py):([^:;]+):\d+$")       # austin's text


def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


# ---- installing the peers ----------------------------------------------

def make_venv(python, path, packages):
    """A venv of python at path with packages, each installed on its own:
    {package: None when installed, or the reason it is not}."""
    status = {}
    if not os.path.exists(os.path.join(path, "bin", "python")):
        r = subprocess.run([python, "-m", "venv", path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        if r.returncode != 0:
            return {p: "venv of %s: %s" % (python, r.stdout.strip()[-300:]) for p in packages}
    for p in packages:
        r = subprocess.run([os.path.join(path, "bin", "pip"), "install", "-q", "--disable-pip-version-check", p],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        status[p] = None if r.returncode == 0 else "pip install %s: %s" % (p, r.stdout.strip()[-300:])
        if status[p]:
            log("cannot install %s: %s" % (p, status[p]))
    return status


def smoke(cmd):
    """None when cmd runs, or its error's last line."""
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                           timeout=120)
    except OSError as e:
        return str(e)
    return None if r.returncode == 0 else (r.stdout.strip().splitlines() or ["exit %d" % r.returncode])[-1]


# ---- reading each tool's output into {(function, file): weight} ---------

def key(name, path):
    return (name.rsplit(".", 1)[-1], os.path.basename(path))


def innermost(frames, pattern, order=1):
    """The innermost frame of frames (root first when order is 1) that
    pattern reads as Python code: its key, or None."""
    for f in frames[::-order]:
        m = pattern.match(f)
        if m:
            return key(*m.groups()) if pattern is not AUSTINFRAME else key(m.group(2), m.group(1))
    return None


def folded_self(text, pattern=PYFRAME):
    out = Counter()
    for line in text.splitlines():
        stack, _, w = line.rpartition(" ")
        if stack and w.isdigit():
            out[innermost(stack.split(";"), pattern)] += int(w)
    return out


def austin_self(text):
    out = Counter()
    for line in text.splitlines():
        if line.startswith("#") or " " not in line:
            continue
        stack, _, w = line.rpartition(" ")
        if w.isdigit():
            out[innermost(stack.split(";"), AUSTINFRAME)] += int(w)
    return out


def scalene_self(path):
    """Scalene's per-function CPU percent (Python + native + system), and
    its allocated MB, by function: profiled files only (the program's)."""
    with open(path) as f:
        doc = json.load(f)
    cpu, mb = Counter(), Counter()
    for fname, info in doc.get("files", {}).items():
        for fn in info.get("functions", []):
            k = key(fn["line"], fname)
            cpu[k] += fn.get("n_cpu_percent_python", 0) + fn.get("n_cpu_percent_c", 0) + fn.get("n_sys_percent", 0)
            mb[k] += fn.get("n_malloc_mb", 0)
    return cpu, mb


MEMRAY_READ = r'''
import json, sys
from memray import FileReader, AllocatorType
r = FileReader(sys.argv[1])
def holds(rec, name):
    return any(f[0] == name for f in rec.stack_trace())
out = {"alloc": {}, "live": {}}
frees = {AllocatorType.FREE, AllocatorType.MUNMAP}
for rec in r.get_allocation_records():
    if rec.allocator in frees:
        continue
    for n in ("leak_big", "leak_small"):
        if holds(rec, n):
            out["alloc"][n] = out["alloc"].get(n, 0) + rec.size
for rec in r.get_leaked_allocation_records(merge_threads=True):
    for n in ("leak_big", "leak_small"):
        if holds(rec, n):
            out["live"][n] = out["live"].get(n, 0) + rec.size
print(json.dumps(out))
'''


def by_function(folded, names):
    """Inclusive weight of each of names in folded stacks."""
    by = Counter()
    for line in folded.splitlines():
        stack, _, w = line.rpartition(" ")
        frames = {m.group(1).rsplit(".", 1)[-1] for m in map(PYFRAME.match, stack.split(";")) if m}
        for n in names:
            if n in frames:
                by[n] += int(w)
    return by


# ---- the tools -----------------------------------------------------------

class Tool:
    """name; cmd(python, argv, out) -> command; read(out, result) adds what
    the output says to result; python: which interpreter (3.12 or 3.13)."""

    def __init__(self, name, cmd, read=None, python="3.12", needs=None, suffix="", by_time=True):
        self.name, self.cmd, self.read, self.python, self.needs = name, cmd, read, python, needs
        self.suffix = suffix      # of the output's name: Scalene wants .json
        self.by_time = by_time    # its stacks are weighed by time (not bytes): agreement applies


def tools(a, venv):
    bin_ = os.path.join(venv, "bin")
    record = os.path.join(ROOT, "perf-scripts", "pyperf-record")

    def pyperf(mode):
        def cmd(py, argv, out):
            return [record, "-o", out, "--mode", mode, "--", py] + argv
        return cmd

    def read_pyperf(kind=None):
        def read(out, res):
            data = os.path.join(out, "perf.data")
            folded = subprocess.run([a.pymerge, "--view", "python", data], stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, universal_newlines=True).stdout
            res["self"] = folded_self(folded)
            if kind and res["program"] == "leaks":
                res["mem"] = {kind: dict(by_function(folded, ("leak_big", "leak_small")))}
        return read

    def read_file(parse):
        def read(out, res):
            with open(out, errors="replace") as f:
                res["self"] = parse(f.read())
        return read

    def read_memray(out, res):
        if res["program"] == "leaks":
            r = subprocess.run([os.path.join(bin_, "python"), "-c", MEMRAY_READ, out], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, universal_newlines=True)
            res["mem"] = json.loads(r.stdout) if r.returncode == 0 else {"error": r.stderr[-300:]}

    def read_scalene(out, res):
        cpu, mb = scalene_self(out)
        res["self"] = cpu
        if res["program"] == "leaks":
            res["mem"] = {"alloc": {n: int(mb.get(("%s" % n, "leaky.py"), 0) * 2**20)
                                    for n in ("leak_big", "leak_small")}}

    def read_xperf(out, res):
        folded = subprocess.run([a.pymerge, "--view", "native", os.path.join(out, "perf.data")],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True).stdout
        res["self"] = folded_self(folded, PERFFRAME)

    def xperf(py, argv, out):
        os.makedirs(out, exist_ok=True)
        return ["perf", "record", "-q", "-F", "999", "-g", "-o", os.path.join(out, "perf.data"), "--",
                py, "-X", "perf"] + argv

    spy = os.path.join(bin_, "py-spy")
    all_tools = [
        Tool("unprofiled", lambda py, argv, out: [py] + argv),
        Tool("pyperfmap cpu", pyperf("cpu"), read_pyperf()),
        Tool("pyperfmap wall", pyperf("wall"), read_pyperf()),
        Tool("pyperfmap alloc", pyperf("alloc"), read_pyperf("alloc"), by_time=False),
        Tool("pyperfmap leaks", pyperf("leaks"), read_pyperf("live"), by_time=False),
        Tool("py-spy", lambda py, argv, out: [spy, "record", "-f", "raw", "-o", out, "--", py] + argv,
             read_file(folded_self), needs="py-spy"),
        Tool("py-spy --native", lambda py, argv, out: [spy, "record", "--native", "-f", "raw", "-o", out, "--", py]
             + argv, read_file(folded_self), needs="py-spy"),
        Tool("austin", lambda py, argv, out: [os.path.join(bin_, "austin"), "-o", out, py] + argv,
             read_file(austin_self), needs="austin"),
        Tool("memray run", lambda py, argv, out: [py, "-m", "memray", "run", "-q", "-f", "-o", out] + argv,
             read_memray, needs="memray", by_time=False),
        Tool("scalene", lambda py, argv, out: [py, "-m", "scalene", "run", "-o", out, argv[0], "---"] + argv[1:],
             read_scalene, needs="scalene", suffix=".json"),
        Tool("-X perf + perf record -g", xperf, read_xperf),
        Tool("unprofiled (3.13)", lambda py, argv, out: [py] + argv, python="3.13"),
        Tool("pyperfmap cpu (3.13)", pyperf("cpu"), read_pyperf(), python="3.13"),
        Tool("-X perf + perf record -g (3.13)", xperf, read_xperf, python="3.13"),
    ]
    if a.tools:
        wanted = set(a.tools.split(","))
        all_tools = [t for t in all_tools if t.name in wanted or t.name in ("unprofiled", "pyperfmap cpu")]
    return all_tools


# ---- running -------------------------------------------------------------

def tree_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def size_of(path):
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)
    return os.path.getsize(path) if os.path.exists(path) else 0


def run_one(a, tool, program, python, work):
    script = os.path.join(PROGRAMS_DIR, PROGRAMS[program][0])
    argv = [script, str(a.scale)]
    out = os.path.join(work, re.sub(r"[^\w]+", "_", "%s_%s" % (tool.name, program))) + tool.suffix
    shutil.rmtree(out, ignore_errors=True)
    if os.path.exists(out):
        os.unlink(out)
    env = dict(os.environ, PYTHONPATH=a.pythonpath)
    cpu0, t0 = tree_cpu(), time.perf_counter()
    r = subprocess.run(tool.cmd(python, argv, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, env=env, cwd=work, timeout=1800)
    cpu, wall = tree_cpu() - cpu0, time.perf_counter() - t0
    m = re.search(r"PEERS work_cpu=([\d.]+) work_wall=([\d.]+) process_cpu=([\d.]+)", r.stdout)
    if r.returncode != 0 or not m:
        return {"error": "exit %d: %s" % (r.returncode, (r.stderr.strip().splitlines() or [""])[-1][:300])}
    res = {"program": program, "work_cpu": float(m.group(1)), "work_wall": float(m.group(2)),
           "tool_cpu": max(cpu - float(m.group(3)), 0.0), "command_wall": wall, "size": size_of(out)}
    t = re.search(r"leak_big (\d+) \d+ leak_small (\d+)", r.stdout)
    if t:
        res["truth"] = {"leak_big": int(t.group(1)), "leak_small": int(t.group(2))}
    if tool.read:
        try:
            tool.read(out, res)
        except (OSError, ValueError, KeyError) as e:
            res["read_error"] = str(e)[:300]
    return res


def agreement(ref, other):
    """(largest difference in points over ref's top 20 functions, the
    function) between two {function: weight}, each as shares of its total."""
    rt, ot = sum(ref.values()), sum(other.values())
    if not rt or not ot:
        return None
    top = [k for k, _ in ref.most_common() if k is not None][:20]
    diffs = [(abs(100.0 * ref[k] / rt - 100.0 * other.get(k, 0) / ot), k) for k in top]
    return max(diffs) if diffs else None


# ---- reporting -----------------------------------------------------------

def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt_size(n):
    return "%.1f MB" % (n / 1e6) if n >= 1e6 else "%.0f KB" % (n / 1e3)


def fmt_ratio(x, base):
    return "%.2fx" % (x / base) if x is not None and base else "-"


def report(a, names, results, failures):
    print("Load average at the end: %s; %d run(s) each, scale %g, medians.\n"
          % (" ".join(open("/proc/loadavg").read().split()[:3]), a.runs, a.scale))
    for tool, why in failures.items():
        print("- %s: not run: %s" % (tool, why))
    print()
    for program in PROGRAMS:
        if not any(results.get((t, program)) for t in names):
            continue
        print("### %s\n" % program)
        print("| tool | work CPU | vs unprofiled | work wall | vs unprofiled | tool CPU (s) | output | "
              "agreement (max points, function) |")
        print("|---|---:|---:|---:|---:|---:|---:|---|")
        for t in names:
            rs = [r for r in results.get((t, program), []) if "error" not in r]
            errs = [r["error"] for r in results.get((t, program), []) if "error" in r]
            if not rs:
                if errs:
                    print("| %s | failed: %s | | | | | | |" % (t, errs[0].replace("|", "/")))
                continue
            base_name = "unprofiled (3.13)" if t.endswith("(3.13)") else "unprofiled"
            base = [r for r in results.get((base_name, program), []) if "error" not in r]
            bc, bw = median(r["work_cpu"] for r in base), median(r["work_wall"] for r in base)
            c, w = median(r["work_cpu"] for r in rs), median(r["work_wall"] for r in rs)
            ag = [r.get("agreement") for r in rs if r.get("agreement")]
            agt = "-"
            if ag:
                agt = "%.1f (%s)" % (median(x[0] for x in ag), sorted(ag)[len(ag) // 2][1][0])
            print("| %s | %.2f s | %s | %.2f s | %s | %.2f | %s | %s |"
                  % (t, c, fmt_ratio(c, bc), w, fmt_ratio(w, bw), median(r["tool_cpu"] for r in rs),
                     fmt_size(median(r["size"] for r in rs)), agt))
        print()
    summary(names, results)
    memory_table(names, results)


def summary(names, results):
    """Per tool, over the programs: the range of work CPU ratios, and the
    median agreement."""
    print("### every program\n")
    print("| tool | work CPU vs unprofiled (median, range over programs) | agreement (median, max points) |")
    print("|---|---|---|")
    for t in names:
        base_name = "unprofiled (3.13)" if t.endswith("(3.13)") else "unprofiled"
        ratios, agree = [], []
        for program in PROGRAMS:
            rs = [r for r in results.get((t, program), []) if "error" not in r]
            base = [r for r in results.get((base_name, program), []) if "error" not in r]
            if rs and base:
                ratios.append(median(r["work_cpu"] for r in rs) / median(r["work_cpu"] for r in base))
            ag = [r["agreement"][0] for r in rs if r.get("agreement")]
            if ag:
                agree.append(median(ag))
        if t.startswith("unprofiled") or not ratios:
            continue
        print("| %s | %.2fx (%.2f-%.2fx) | %s |" % (t, median(ratios), min(ratios), max(ratios),
              "%.1f, %.1f" % (median(agree), max(agree)) if agree else "-"))
    print()


def memory_table(names, results):
    rows = []
    for t in names:
        rs = [r for r in results.get((t, "leaks"), []) if "error" not in r and "mem" in r and "truth" in r]
        if not rs:
            continue

        def error(kind, name):
            if not any(kind in r["mem"] for r in rs):
                return "-"
            vals = [100.0 * (r["mem"].get(kind, {}).get(name, 0) / r["truth"][name] - 1) for r in rs]
            return "%+.1f%%" % median(vals) if vals else "-"
        rows.append("| %s | %s | %s | %s |" % (t, error("alloc", "leak_big"), error("live", "leak_big"),
                                               error("live", "leak_small")))
    if rows:
        print("### memory: the leaks program, against what leaky.py keeps\n")
        print("| tool | leak_big allocated | leak_big live at end | leak_small live at end |")
        print("|---|---:|---:|---:|")
        print("\n".join(rows))
        print()


def peer_failures(venv, status):
    """{peer: why it cannot be used}: it did not install, or does not run."""
    failures = {name: status[pin] for name, pin in PINS.items() if status[pin]}
    py = os.path.join(venv, "bin", "python")
    checks = {"py-spy": [os.path.join(venv, "bin", "py-spy"), "--version"],
              "austin": [os.path.join(venv, "bin", "austin"), "--version"],
              "memray": [py, "-m", "memray", "--version"], "scalene": [py, "-m", "scalene", "--version"]}
    for name, cmd in checks.items():
        if name not in failures:
            why = smoke(cmd)
            if why:
                failures[name] = "%s (%s) does not run here: %s" % (name, PINS[name], why)
    for t in failures:
        log("%s: %s" % (t, failures[t]))
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="one run, a quarter of the work: a smoke test")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0, help="each program's work (1: about a CPU second)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--cache", default="/var/cache/pyperfmap/peers-bench")
    ap.add_argument("--tools", help="comma-separated tool names (unprofiled and pyperfmap cpu always run)")
    ap.add_argument("--programs", help="comma-separated: " + ",".join(PROGRAMS))
    ap.add_argument("--json", help="write every measurement here, after each program's round")
    ap.add_argument("--from-json", help="print the tables of a --json file, and run nothing")
    a = ap.parse_args()
    if a.from_json:
        with open(a.from_json) as f:
            saved = json.load(f)
        a.runs, a.scale = saved["runs"], saved["scale"]
        results = {tuple(k.split(" | ")): v for k, v in saved["results"].items()}
        report(a, saved["tools"], results, saved["failures"])
        return
    if a.quick:
        a.runs, a.scale = 1, a.scale / 4
    a.pymerge = os.path.join(a.build, "merge", "pymerge")
    a.pythonpath = os.path.join(a.build, "libpyperfmap")
    if not os.path.exists(a.pymerge):
        sys.exit("bench_peers.py: %s: no pymerge there (meson setup BUILD && meson compile -C BUILD)" % a.build)
    os.makedirs(a.cache, exist_ok=True)
    venv12, venv13 = os.path.join(a.cache, "venv-3.12"), os.path.join(a.cache, "venv-3.13")
    status = make_venv(PY312, venv12, list(PINS.values()) + DEPS)
    status13 = make_venv(PY313, venv13, DEPS)
    failures = peer_failures(venv12, status)
    pythons = {"3.12": os.path.join(venv12, "bin", "python"), "3.13": os.path.join(venv13, "bin", "python")}
    all_tools = [t for t in tools(a, venv12) if t.needs not in failures]
    failures = {t.name: failures[t.needs] for t in tools(a, venv12) if t.needs in failures}
    programs = []
    for p in (a.programs.split(",") if a.programs else PROGRAMS):
        dep = PROGRAMS[p][1]
        if dep and any(status[d] for d in DEPS if d.lower().startswith(dep)):
            log("%s: skipped, %s did not install" % (p, dep))
        else:
            programs.append(p)
    work = tempfile.mkdtemp(prefix="bench-peers-")
    results = {}
    try:
        for i in range(a.runs):
            for program in programs:
                round_ = {}
                for t in all_tools:
                    if t.python == "3.13" and any(status13[d] for d in DEPS if PROGRAMS[program][1]
                                                  and d.lower().startswith(PROGRAMS[program][1])):
                        continue
                    res = run_one(a, t, program, pythons[t.python], work)
                    round_[t.name] = res
                    results.setdefault((t.name, program), []).append(res)
                    log("run %d %s %s: %s" % (i + 1, program, t.name, {k: v for k, v in res.items() if k != "self"}))
                ref = round_.get("pyperfmap cpu", {}).get("self")
                ref13 = round_.get("pyperfmap cpu (3.13)", {}).get("self")
                for name, res in round_.items():
                    r = ref13 if name.endswith("(3.13)") else ref
                    by_time = next(t.by_time for t in all_tools if t.name == name)
                    if by_time and res.get("self") and r and name not in ("pyperfmap cpu", "pyperfmap cpu (3.13)"):
                        res["agreement"] = agreement(r, res["self"])
                if a.json:
                    save(a, [t.name for t in all_tools], results, failures)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(a, [t.name for t in all_tools], results, failures)


def save(a, names, results, failures):
    with open(a.json, "w") as f:
        json.dump({"runs": a.runs, "scale": a.scale, "tools": names, "failures": failures,
                   "results": {"%s | %s" % k: [{x: y for x, y in r.items() if x != "self"} for r in v]
                               for k, v in results.items()}}, f, indent=1)


if __name__ == "__main__":
    main()
