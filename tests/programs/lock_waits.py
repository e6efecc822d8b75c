# Four threads contend on one threading.Lock, each holding it while it
# computes a little and sleeps, then sleeping a little more without it; each
# times its own waits with perf_counter (a wait's time includes taking the
# GIL back after it) and the program prints the totals as JSON.  argv:
# seconds.
import json
import sys
import threading
import time


def spin(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


lock = threading.Lock()
totals = {}


def take():
    lock.acquire()


def nap():
    time.sleep(0.002)


def under_lock():
    spin(2000)
    t0 = time.perf_counter()
    nap()
    return time.perf_counter() - t0


def worker(k, seconds):
    acquire = sleep = 0.0
    start = time.perf_counter()
    end = start + seconds
    while time.perf_counter() < end:
        t0 = time.perf_counter()
        take()
        t1 = time.perf_counter()
        sleep += under_lock()
        lock.release()
        t2 = time.perf_counter()
        nap()
        acquire += t1 - t0
        sleep += time.perf_counter() - t2
    totals[k] = (acquire, sleep, time.perf_counter() - start)


threads = [threading.Thread(target=worker, args=(k, float(sys.argv[1]))) for k in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps({name: sum(v[i] for v in totals.values())
                  for i, name in enumerate(("acquire", "sleep", "worker"))}))
