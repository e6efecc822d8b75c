"""A WSGI server under a known load, recorded by tests/test_spans.py: wsgiref
on loopback behind pyperfmap.wsgi_middleware, a client thread sending a
fixed mix of requests one at a time, and the server's own timing of each
endpoint (thread CPU and wall per request, outside the middleware) written
as JSON to argv[1].

Each endpoint burns a fixed amount of thread CPU time, so that its share
of the server's CPU is known whatever the machine's load."""
import collections
import json
import sys
import threading
import time
import urllib.request
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


def app(environ, start_response):
    path = environ["PATH_INFO"]
    for prefix, _, cost in MIX:
        if path.startswith(prefix.split("%")[0]):
            burn(cost)
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [b"ok"]
    start_response("404 Not Found", [("Content-Type", "text/plain")])
    return [b"no"]


def timed(inner):
    """The server's own timing of each request, around the middleware."""
    def run(environ, start_response):
        key = "GET " + ("/users/{id}" if environ["PATH_INFO"].startswith("/users/") else environ["PATH_INFO"])
        t0, c0 = time.perf_counter(), time.thread_time()
        body = inner(environ, start_response)

        class Body:
            def __iter__(self):
                return iter(body)

            def close(self):
                body.close()
                t = timing[key]
                t["count"] += 1
                t["cpu"] += time.thread_time() - c0
                t["wall"].append(time.perf_counter() - t0)
        return Body()
    return run


class Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass


def main():
    server = make_server("127.0.0.1", 0, timed(pyperfmap.wsgi_middleware(app)), handler_class=Quiet)
    port = server.server_address[1]
    order = [p % i if "%" in p else p for p, n, _ in MIX for i in range(n)]
    order = [order[(i * 7) % len(order)] for i in range(len(order))]    # interleaved, all once

    def client():
        for path in order:
            urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=30).read()
        server.shutdown()
    threading.Thread(target=client).start()
    server.serve_forever(poll_interval=0.05)
    server.server_close()
    with open(sys.argv[1], "w") as f:
        json.dump(timing, f)


main()
