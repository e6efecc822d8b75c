"""The client load of tests/test_servers.py and bench/bench_servers.py:
HTTP GETs over a Unix socket from threads, a new connection each."""
import http.client
import socket
import threading
import time


class UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost", timeout=10)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(self.path)


def get(path):
    c = UnixHTTP(path)
    try:
        c.request("GET", "/")
        return c.getresponse().read()
    finally:
        c.close()


def answers(sock, seconds=120):
    """Whether a server answers on sock within `seconds` (it may still be
    starting)."""
    deadline = time.time() + seconds
    while True:
        try:
            get(sock)
            return True
        except OSError:
            if time.time() > deadline:
                return False
            time.sleep(0.1)


def load(sock, seconds, clients, pause=0.0, check=lambda body: None):
    """(requests served, seconds taken): `clients` threads each sending
    requests for `seconds`, passing each body to check() and sleeping
    `pause` seconds after it."""
    served = [0] * clients
    end = time.time() + seconds

    def client(i):
        while time.time() < end:
            check(get(sock))
            served[i] += 1
            if pause:
                time.sleep(pause)
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    t0 = time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(served), time.time() - t0
