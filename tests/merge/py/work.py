"""The pymerge Python test workload: a known call tree of pure Python,
C library (hashlib) and kernel (os.write) work.

    python work.py SECONDS
"""
import hashlib
import os
import sys
import time


def arith_leaf(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s


def arith(n):
    return arith_leaf(n)


class Hasher:
    def digest_many(self, n):
        data = b'x' * (1 << 18)
        for _ in range(n):
            hashlib.sha256(data).digest()


def writes(n):
    fd = os.open(os.devnull, os.O_WRONLY)
    try:
        for _ in range(n):
            os.write(fd, b'a')
    finally:
        os.close(fd)


def main(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        arith(100000)
        Hasher().digest_many(40)
        writes(20000)


if __name__ == '__main__':
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
