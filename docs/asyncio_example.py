"""The asyncio example of docs/asyncio.md: a request handler gathers two
lookups, a report task awaits the handler, and a compressor runs beside
them; each burns CPU in Python (json) and in native code (zlib, hashlib).

    pyperf-record -o rec -- python3 docs/asyncio_example.py
    pyperf-flamegraph rec -o flame.svg
"""
import asyncio
import hashlib
import json
import zlib

ROWS = [{"id": i, "name": "user%d" % i, "tags": ["a", "b", "c"]} for i in range(200)]


async def lookup(kind, rounds):
    for _ in range(rounds):
        blob = json.dumps(ROWS).encode()
        hashlib.sha256(blob * 4).hexdigest()
        await asyncio.sleep(0)


async def handler():
    await asyncio.gather(asyncio.create_task(lookup("users", 900), name="users"),
                         asyncio.create_task(lookup("orders", 450), name="orders"))


async def report():
    await asyncio.create_task(handler(), name="handler")


async def compressor(rounds):
    data = json.dumps(ROWS).encode() * 8
    for _ in range(rounds):
        zlib.compress(data, 9)
        await asyncio.sleep(0)


async def main():
    await asyncio.gather(asyncio.create_task(report(), name="report"),
                         asyncio.create_task(compressor(450), name="compressor"))


if __name__ == "__main__":
    asyncio.run(main())
