# gevent greenlets, each computing and sleeping in turn: their stacks
# start at greenlet's g_initialstub, not at _start.  argv: greenlets.
import sys

import gevent


def spin(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def greenlet_body(k):
    for _ in range(10):
        spin(5000)
        gevent.sleep(0.001)


def main(n):
    gevent.joinall([gevent.spawn(greenlet_body, k) for k in range(n)])


main(int(sys.argv[1]))
