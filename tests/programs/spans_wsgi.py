"""A WSGI server under a known load, recorded by tests/test_spans.py: wsgiref
on loopback behind pyperfmap.wsgi_middleware, a client thread sending a
fixed mix of requests one at a time, and the server's own timing of each
endpoint (thread CPU and wall per request, from the app's start to its
body's close, just inside the middleware's span) written as JSON to
argv[1].

Each endpoint burns a fixed amount of thread CPU time, so that its share
of the server's CPU is known whatever the machine's load."""
import collections
import json
import subprocess
import sys
import threading
import time
from wsgiref.simple_server import WSGIRequestHandler, make_server

import pyperfmap

MIX = [("/light", 30, 0.003), ("/users/%d", 20, 0.006), ("/heavy", 10, 0.012)]
timing = collections.defaultdict(lambda: {"count": 0, "cpu": 0.0, "wall": []})


def burn(seconds):
    end = time.thread_time() + seconds
    x = 0
    while time.thread_time() < end:
        x += 1
    return x


class Timed:
    """A response body that times its request when the server closes it:
    the server's own timing, from the app's start to the body's close,
    just inside the middleware's span."""

    def __init__(self, key, body, t0, c0):
        self.key, self.body, self.t0, self.c0 = key, body, t0, c0

    def __iter__(self):
        return iter(self.body)

    def close(self):
        t = timing[self.key]
        t["count"] += 1
        t["cpu"] += time.thread_time() - self.c0
        t["wall"].append(time.perf_counter() - self.t0)


def app(environ, start_response):
    t0, c0 = time.perf_counter(), time.thread_time()
    path = environ["PATH_INFO"]
    key = "GET " + ("/users/{id}" if path.startswith("/users/") else path)
    for prefix, _, cost in MIX:
        if path.startswith(prefix.split("%")[0]):
            burn(cost)
            start_response("200 OK", [("Content-Type", "text/plain")])
            return Timed(key, [b"ok"], t0, c0)
    start_response("404 Not Found", [("Content-Type", "text/plain")])
    return [b"no"]


CLIENT = """
import sys, urllib.request
for path in sys.argv[2:]:
    urllib.request.urlopen("http://127.0.0.1:%s%s" % (sys.argv[1], path), timeout=60).read()
"""


class Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass


def main():
    server = make_server("127.0.0.1", 0, pyperfmap.wsgi_middleware(app), handler_class=Quiet)
    port = server.server_address[1]
    order = [p % i if "%" in p else p for p, n, _ in MIX for i in range(n)]
    order = [order[(i * 7) % len(order)] for i in range(len(order))]    # interleaved, all once

    client = subprocess.Popen([sys.executable, "-c", CLIENT, str(port)] + order)

    def stop():
        client.wait()
        server.shutdown()
    threading.Thread(target=stop).start()
    server.serve_forever(poll_interval=0.05)
    server.server_close()
    with open(sys.argv[1], "w") as f:
        json.dump(timing, f)


main()
