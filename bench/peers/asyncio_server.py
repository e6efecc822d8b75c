"""An asyncio server under load, on the loopback only: a line protocol
server (JSON in, JSON out) and 20 concurrent clients in the same process,
SCALE times 4,000 requests in all, each client its share."""
import asyncio
import json

from _timing import scale, timed

CLIENTS = 20


async def handle(reader, writer):
    while True:
        line = await reader.readline()
        if not line:
            break
        req = json.loads(line)
        body = {"id": req["id"], "items": [{"n": i, "sq": i * i} for i in range(req["size"])]}
        writer.write(json.dumps(body).encode() + b"\n")
        await writer.drain()
    writer.close()


async def client(port, requests):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    for i in range(requests):
        writer.write(json.dumps({"id": i, "size": 30}).encode() + b"\n")
        assert json.loads(await reader.readline())["id"] == i
    writer.close()
    await writer.wait_closed()


async def serve(total):
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        await asyncio.gather(*(client(port, total // CLIENTS) for _ in range(CLIENTS)))


def main():
    asyncio.run(serve(int(4000 * scale())))


timed(main)
