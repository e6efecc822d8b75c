"""pyperfmap.span misused every way tests/test_spans.py checks, in one
program: a span whose thread exits inside it, a name that is not UTF-8 and
one of 10,000 characters, 100,000 distinct names, a span open across
fork(), a span closed in another thread, and the program exiting inside a
span.  Each must give a warning and a profile that stays right."""
import os
import threading
import time

import pyperfmap
from pyperfmap import span


def burn(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def dies_inside():
    span("thread-dies").__enter__()
    burn(0.05)


t = threading.Thread(target=dies_inside)
t.start()
t.join()
with span(b"bytes-\xff\xfe"):
    burn(0.01)
with span("long-" + "x" * 10000):
    burn(0.01)
with span("forked"):
    pid = os.fork()
    if pid == 0:
        with span("child"):
            burn(0.05)
        os._exit(0)
    os.waitpid(pid, 0)
crossed = span("crossed")
crossed.__enter__()
burn(0.02)
t = threading.Thread(target=crossed.__exit__, args=(None, None, None))
t.start()
t.join()
with span("after-crossed", trace_id="%032x" % 7, span_id="%016x" % 9,   # as OpenTelemetry's
          note="two\nlines", status="pending") as s:
    s.set(status=500)
    burn(0.02)
never = span("never-closed")      # named before the cap is reached
for i in range(100000):
    with span("distinct-%d" % i):
        pass
never.__enter__()
burn(0.05)
print(pyperfmap.current_span())
