# A small WSGI app that gunicorn serves, copied as app.py, for
# tests/test_servers.py and bench/bench_servers.py: each request renders
# 200 list items and hashes 4 KiB.
import hashlib
def render(n):
    return "".join("<li>%d</li>" % i for i in range(n))
def app(environ, start_response):
    body = (render(200) + hashlib.sha256(b"x" * 4096).hexdigest()).encode()
    start_response("200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(body)))])
    return [body]
