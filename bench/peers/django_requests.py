"""A deep Django request loop: tests/merge/dwarf/django_site.py's site
(five middlewares, a template page, a JSON view), SCALE times 200 pairs of
requests through the test client."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "merge", "dwarf"))
from _timing import scale, timed  # noqa: E402
import django_site  # noqa: E402,F401  (settings and URLs)
from django.test import Client  # noqa: E402


def main():
    client = Client()
    for _ in range(int(200 * scale())):
        assert client.get("/page/40/").status_code == 200
        assert client.get("/api/").status_code == 200


timed(main)
