#!/usr/bin/env python3
"""How long attaching stops a CPython (docs/attach.md): one injection of
mmap + Py_AddPendingCall into a sleeping interpreter, ROUNDS times each,
by pyperfrecord/inject.py (ptrace from Python) and by gdb as attach.py
ran it before (on a CPU with AMX gdb's call fails; the time is then its
time to fail).  Prints the time the main thread stayed stopped (ptrace)
and the whole injection's wall time (both), sorted, in ms.

    bench/bench_attach.py [python ...]     (default /usr/bin/python3)
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "perf-scripts"))
from pyperfrecord import inject  # noqa: E402

ROUNDS = 5
PAGE = b"pass\n".ljust(4096, b"\0")


STOPPED = inject.Stopped


class Timed(STOPPED):
    """Stopped, noting from the seize to the detach."""
    spans = []

    def __init__(self, pid):
        self.started = time.monotonic()
        STOPPED.__init__(self, pid)

    def detach(self):
        STOPPED.detach(self)
        Timed.spans.append(time.monotonic() - self.started)


def by_ptrace(pid):
    inject.pending_call(pid, 0, PAGE)


def by_gdb(pid):
    subprocess.run(["gdb", "-nx", "-batch", "--readnever", "-iex", "set debuginfod enabled off",
                    "-iex", "set auto-load no", "-p", str(pid), "-ex",
                    "call (long)((void*(*)(void*,unsigned long,int,int,int,long))mmap)(0,4096,3,0x22,-1,0)",
                    "-ex", "call (int)Py_AddPendingCall((void*)PyRun_SimpleString, 0)"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def ms(values):
    return " ".join("%.0f" % (v * 1000) for v in sorted(values))


def main():
    inject.Stopped = Timed
    for python in sys.argv[1:] or ["/usr/bin/python3"]:
        for name, how in (("ptrace", by_ptrace), ("gdb", by_gdb)):
            walls = []
            for _ in range(ROUNDS):
                p = subprocess.Popen([python, "-c", "import time; time.sleep(60)"], stderr=subprocess.DEVNULL)
                time.sleep(0.3)
                started = time.monotonic()
                how(p.pid)
                walls.append(time.monotonic() - started)
                p.kill()
                p.wait()
            print("%s %-6s injection %s ms%s" % (python, name, ms(walls),
                                                 "; stopped %s ms" % ms(Timed.spans) if name == "ptrace" else ""))
            Timed.spans.clear()


if __name__ == "__main__":
    main()
