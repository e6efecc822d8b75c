# A SIGALRM handler beside a select() wait: CPython's select.select() keeps
# about 49 KB of arrays on its C stack, and runs the handler's Python code
# beneath them when the signal interrupts the wait.  argv: seconds.
import select
import signal
import sys
import time


def work(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def handler(signum, frame):
    work(20000)


def wait_loop(seconds):
    end = time.time() + seconds
    while time.time() < end:
        select.select([], [], [], 0.05)


def main():
    signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 0.01, 0.01)
    wait_loop(float(sys.argv[1]))
    # Python puts SIGALRM's default back while it exits: a tick then
    # would kill the program.
    signal.setitimer(signal.ITIMER_REAL, 0)


main()
