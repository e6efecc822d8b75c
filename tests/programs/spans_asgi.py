"""An ASGI app under uvicorn behind pyperfmap.asgi_middleware, recorded by
tests/test_spans.py: concurrent requests to /a and /b, each handler
burning CPU in slices with an await between them, so that the requests
interleave on the one event loop; then the server stops."""
import asyncio
import http.client
import socket
import threading
import time

import uvicorn

import pyperfmap

N = 6          # requests to each path, all at once


def burn(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def work_a():
    burn(0.004)


def work_b():
    burn(0.004)


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        return await send({"type": "lifespan.shutdown.complete"})
    work = work_a if scope["path"] == "/a" else work_b
    for _ in range(8):
        work()
        await asyncio.sleep(0.001)      # the other requests run here
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


def main():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(pyperfmap.asgi_middleware(app), log_level="warning"))

    def get(path):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        c.request("GET", path)
        assert c.getresponse().read() == b"ok"

    def client():
        while not server.started:
            time.sleep(0.01)
        ts = [threading.Thread(target=get, args=(p,)) for p in ["/a", "/b"] * N]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        server.should_exit = True
    threading.Thread(target=client).start()
    server.run(sockets=[sock])


main()
