"""The clock every program of bench_peers.py reads: timed(work) runs work()
and prints the line the bench reads, the CPU and wall seconds of the work
itself (all threads' CPU: BLAS's too) and the CPU seconds of the whole
process, start and imports included:

    PEERS work_cpu=SECONDS work_wall=SECONDS process_cpu=SECONDS
"""
import sys
import time


def timed(work):
    cpu, wall = time.process_time(), time.perf_counter()
    work()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print("PEERS work_cpu=%.6f work_wall=%.6f process_cpu=%.6f" % (cpu, wall, time.process_time()))
    sys.stdout.flush()


def scale():
    """The program's one argument: how much work, a positive number."""
    return float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
