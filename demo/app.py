"""The bundled demo: a small order-processing service, run in rounds.

Each round parses a batch of orders (json, in C), validates them (pure
Python and re), signs them (hashlib, in OpenSSL), writes an audit log line
by line (the kernel's write path), and prices them in pure Python, so one
flame graph shows Python, C libraries and the kernel together.
"""
import hashlib
import json
import os
import re
import sys

SKU = re.compile(r"^[A-Z]{3}-\d{4}$")


def make_batch(n, seed):
    return json.dumps([{"id": seed * n + i, "sku": "ABC-%04d" % (i % 10000),
                        "qty": 1 + i % 7, "price": 3.5 + (i % 13)} for i in range(n)])


def parse(raw):
    return json.loads(raw)


def validate(orders):
    return [o for o in orders if SKU.match(o["sku"]) and 0 < o["qty"] < 100]


def sign(orders):
    key = b"demo-key" * 256
    return [hashlib.sha256(key + str(o["id"]).encode()).hexdigest() for o in orders]


def audit(orders, fd):
    for o in orders:
        for line in (b"order %d\n", b"  qty %d\n", b"  ok %d\n"):
            os.write(fd, line % o["id"])


def price(orders):
    total = 0.0
    for o in orders:
        for _ in range(40):
            total += o["qty"] * o["price"] * 1.0001
    return total


def handle(raw, fd):
    orders = validate(parse(raw))
    sign(orders)
    audit(orders, fd)
    return price(orders)


def main(rounds):
    fd = os.open(os.devnull, os.O_WRONLY)
    batches = [make_batch(2000, r) for r in range(4)]
    total = 0.0
    for r in range(rounds):
        total += handle(batches[r % len(batches)], fd)
    os.close(fd)
    print("priced %.0f in %d rounds" % (total, rounds))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 40)
