"""Spans: named stretches of a program's time (a request, a test), which
pyperf-record records and pymerge puts at the root of every sample taken
inside them (docs/spans.md).

The current span is a context variable, so each thread and each asyncio
task has its own.  Entering and leaving fire the static probes
pyperfmap:span__enter and span__exit (libpyperfmap/spans.h) while a tracer
has them; otherwise a span costs only its bookkeeping here.
"""
import contextvars
import functools
import inspect
import itertools
import os
import sys
import threading
from _thread import get_ident as _get_ident

from . import _pyperfmap

#: Distinct span names a process may have; later new names become OTHER.
NAMES_ENV = "PYPERFMAP_SPAN_NAMES"
MAX_NAMES = 1000
#: Characters of a name kept; longer ones are cut, with "..." at the end.
MAX_NAME = 200
OTHER = "[other]"

_traced = getattr(_pyperfmap, "_span_traced", lambda: False)
_fire_enter = getattr(_pyperfmap, "_span_enter", None)
_fire_exit = getattr(_pyperfmap, "_span_exit", None)

_current = contextvars.ContextVar("pyperfmap_span", default=None)
if hasattr(_pyperfmap, "_span_var"):
    _pyperfmap._span_var(_current)     # for span__switch
_ids = itertools.count(1)
_names = {}                 # what the program passed -> the name used
_lock = threading.Lock()
_warned = set()
_otel = []                  # [opentelemetry.trace or None], looked up once
_reserved = [0]             # names a caller knows to be bounded (reserve_names)


def _warn(kind, message):
    if kind not in _warned:
        _warned.add(kind)
        sys.stderr.write("pyperfmap: warning: %s\n" % message)


def _max_names():
    try:
        return max(1, int(os.environ.get(NAMES_ENV, MAX_NAMES))) + _reserved[0]
    except ValueError:
        return MAX_NAMES + _reserved[0]


def reserve_names(n):
    """Room for n more distinct names than the cap: for names known to be
    bounded (a test suite's node ids)."""
    _reserved[0] += n


def _clean(name):
    """A name as a bounded, encodable str."""
    if isinstance(name, bytes):
        name = name.decode("utf-8", "replace")
    elif not isinstance(name, str):
        name = str(name)
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        _warn("utf8", "span name %r is not valid Unicode; its bad characters are escaped" % name[:60])
        name = name.encode("utf-8", "backslashreplace").decode("ascii")
    if len(name) > MAX_NAME:
        _warn("long", "a span name of %d characters is cut to %d" % (len(name), MAX_NAME))
        name = name[:MAX_NAME - 3] + "..."
    return name.replace("\n", " ").replace("\0", " ") or "[unnamed]"


def _name(name):
    """The name a span is recorded under: at most MAX_NAMES distinct ones,
    later new names sharing OTHER (one warning)."""
    try:
        return _names[name]
    except KeyError:
        pass
    except TypeError:           # unhashable: named by its text
        return _name(str(name))
    with _lock:
        if name in _names:
            return _names[name]
        if len(_names) >= _max_names():
            _warn("names", "more than %d distinct span names; later ones are recorded as %s"
                  " (raise %s, or name spans by kind, not by value)" % (len(_names), OTHER, NAMES_ENV))
            return OTHER
        used = _names[name] = _clean(name)
        return used


def _otel_labels(labels):
    """trace_id and span_id of OpenTelemetry's current span, if any."""
    if not _otel:
        try:
            from opentelemetry import trace
        except Exception:
            trace = None
        _otel.append(trace)
        if trace is None:       # no span to ask for: spanobj.c fires the probes itself
            _pyperfmap._span_plain()
    trace = _otel[0]
    if trace is None:
        return labels
    try:
        ctx = trace.get_current_span().get_span_context()
        if ctx.is_valid:
            labels = dict(labels, trace_id="%032x" % ctx.trace_id, span_id="%016x" % ctx.span_id)
    except Exception:
        pass
    return labels


def _label_text(labels):
    """key=value lines; a value's own line breaks become spaces."""
    return "\n".join("%s=%s" % (k, str(v).replace("\n", " ")) for k, v in labels.items())


# One entered span, what the context variable holds: a list made by
# _pyperfmap.Span (spanobj.c), indexed by these.
ID, NAME, PARENT, THREAD, GENERATION, CLOSED, TOKEN, LATE = range(8)


def _live(s):
    """s or its nearest ancestor still open in this process."""
    generation = _pyperfmap._span_state()[0]
    while s is not None and (s[CLOSED] or s[GENERATION] != generation):
        s = s[PARENT]
    return s


class _Hooks:
    """What _pyperfmap.Span asks Python for: the rare and the traced."""

    @staticmethod
    def name(raw):
        return _name(raw)

    @staticmethod
    def enter(s, o):
        parent = o[PARENT]
        _fire_enter(o[ID], parent[ID] if parent else 0, s.name, _label_text(_otel_labels(s.labels)))

    @staticmethod
    def exit(o, parent):
        _fire_exit(o[ID], parent[ID] if parent else 0, _label_text(o[LATE]) if o[LATE] else "")

    @staticmethod
    def pop(s):
        """The entry an exit closes when it is not the latest: this
        context's, else this thread's latest, else the latest (one closed
        in another thread)."""
        cur, opened, me = _current.get(), s._open, _get_ident()
        for want in (lambda o: o is cur, lambda o: o[THREAD] == me):
            for i in range(len(opened) - 1, -1, -1):
                if want(opened[i]):
                    return opened.pop(i)
        return opened.pop()

    live = staticmethod(_live)

    @staticmethod
    def extra(s):
        _warn("extra", "span %r was exited more often than entered; the extra exit is ignored" % s.name)

    @staticmethod
    def crossed(o):
        _warn("thread", "span %r was closed in another thread or task than the one that"
              " opened it; it ends there, and the opener's later spans go under its parent"
              % o[NAME])


_pyperfmap._span_setup(_current, _names, _Hooks)


class span(_pyperfmap.Span):
    """A named span of time: ``with pyperfmap.span("checkout", user=u):``
    or ``@pyperfmap.span("load")``.  Labels are recorded with it (pprof
    sample labels).  Spans nest; each thread and each asyncio task has its
    own current one.  One span object may be entered again, also nested."""
    __slots__ = ()

    def set(self, **labels):
        """Labels known only while the span runs (a response's status),
        recorded at its exit: the innermost open entry of this span in this
        thread or task."""
        cur, me = _current.get(), _get_ident()
        for o in reversed(self._open):
            if o is cur or o[THREAD] == me:
                o[LATE] = dict(o[LATE] or {}, **labels)
                return

    def __call__(self, fn):
        """As a decorator: each call of fn runs in a span of this name."""
        name, labels = self.name, self.labels
        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def run_async(*args, **kwargs):
                with span(name, **labels):
                    return await fn(*args, **kwargs)
            return run_async

        @functools.wraps(fn)
        def run(*args, **kwargs):
            with span(name, **labels):
                return fn(*args, **kwargs)
        return run


def current_span():
    """The name of this thread's or task's current span, or None."""
    s = _live(_current.get())
    return s[NAME] if s else None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_pyperfmap._span_forked)
