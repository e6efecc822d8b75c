"""The bundled demo: a small order-processing service, run in rounds.

Each round parses a batch of orders (json, in C), validates them (pure
Python and re), signs them (hashlib, in OpenSSL), writes an audit log line
by line (the kernel's write path), asks a rates service for today's rates
and waits for its answer (a thread that takes 20 ms to reply through a
pipe), and prices them in pure Python, so one flame graph shows Python, C
libraries and the kernel together, and a wall-clock one shows the wait.
"""
import hashlib
import json
import os
import re
import sys
import threading
import time

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


class RatesService:
    """A slow downstream service: a thread that answers each request after
    20 ms, through a pipe, as a remote call would."""

    def __init__(self):
        self.req_r, self.req_w = os.pipe()
        self.resp_r, self.resp_w = os.pipe()
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while os.read(self.req_r, 1):
            time.sleep(0.02)
            os.write(self.resp_w, b"1.0001")

    def ask(self):
        os.write(self.req_w, b"?")
        return float(os.read(self.resp_r, 16))


def fetch_rates(rates):
    return rates.ask()


def price(orders):
    total = 0.0
    for o in orders:
        for _ in range(40):
            total += o["qty"] * o["price"] * 1.0001
    return total


def handle(raw, fd, rates):
    orders = validate(parse(raw))
    sign(orders)
    audit(orders, fd)
    fetch_rates(rates)
    return price(orders)


def main(rounds):
    fd = os.open(os.devnull, os.O_WRONLY)
    batches = [make_batch(2000, r) for r in range(4)]
    rates = RatesService()
    total = 0.0
    for r in range(rounds):
        total += handle(batches[r % len(batches)], fd, rates)
    os.close(fd)
    print("priced %.0f in %d rounds" % (total, rounds))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 40)
