"""One span per web request: WSGI and ASGI middleware (docs/spans.md).

A request's span is named ``METHOD PATH`` with the path's identifiers
collapsed, so that /users/1234 and /users/98 share ``GET /users/{id}``: a
segment that is a number, a UUID or hex digest (8 or more hex digits with
at least one digit), or longer than 40 characters becomes ``{id}``.  After
that the number of distinct names is bounded by pyperfmap.span's own cap
(PYPERFMAP_SPAN_NAMES, 1000 by default; later names are ``[other]``).
The response's status is the label ``status``.
"""
import re

from ._spans import span

_ID = re.compile(r"^(?:\d+|(?=[0-9a-fA-F-]*\d)[0-9a-fA-F-]{8,}|.{41,})$")
_METHODS = {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE"}


def request_name(method, path):
    """The span name of a request: METHOD PATH, identifiers collapsed.
    A method outside HTTP's own is named OTHER."""
    method = method if method in _METHODS else "OTHER"
    segs = ["{id}" if _ID.match(s) else s for s in (path or "/").split("?")[0].split("/")]
    return "%s %s" % (method, "/".join(segs) or "/")


def wsgi_middleware(app):
    """app in one span per request; the span ends when the response's body
    has been sent (its iterable closed)."""
    def run(environ, start_response):
        s = span(request_name(environ.get("REQUEST_METHOD", ""), environ.get("PATH_INFO", "/")))

        def start(status, headers, exc_info=None):
            s.set(status=str(status).split(" ")[0])
            return start_response(status, headers, exc_info) if exc_info else start_response(status, headers)
        s.__enter__()
        try:
            body = app(environ, start)
        except BaseException:
            s.__exit__(None, None, None)
            raise
        return _Body(body, s)
    return run


class _Body:
    """The response body, which ends the span when the server closes it."""

    def __init__(self, body, s):
        self.body, self.span = body, s

    def __iter__(self):
        return iter(self.body)

    def close(self):
        try:
            if hasattr(self.body, "close"):
                self.body.close()
        finally:
            if self.span is not None:
                s, self.span = self.span, None
                s.__exit__(None, None, None)


def asgi_middleware(app):
    """app in one span per HTTP request (other scopes pass through)."""
    async def run(scope, receive, send):
        if scope.get("type") != "http":
            return await app(scope, receive, send)
        s = span(request_name(scope.get("method", ""), scope.get("path", "/")))

        async def sent(message):
            if message.get("type") == "http.response.start":
                s.set(status=str(message.get("status")))
            await send(message)
        with s:
            return await app(scope, receive, sent)
    return run
