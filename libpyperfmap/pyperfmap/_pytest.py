"""pytest plugin (entry point pytest11 "pyperfmap"): with --pyperfmap, a
pyperfmap.span per test, named by its node id, so that one recording of a
suite (pyperf-record -o DIR -- pytest --pyperfmap) gives every test's
profile (pymerge --span, --by-span).  Setup and teardown have spans of
their own, "NODEID [setup]" and "NODEID [teardown]", apart from the call's
"NODEID"; a test using pytest-benchmark's benchmark fixture runs its
rounds inside its call, so the call's span covers them.  Without the
option the plugin does nothing.
"""
import pytest

from . import _spans


def pytest_addoption(parser):
    parser.getgroup("pyperfmap").addoption(
        "--pyperfmap", action="store_true",
        help="one pyperfmap.span per test (its node id), and its setup and teardown apart,"
             " for pyperf-record (docs/spans.md)")


def _on(item):
    return item.config.getoption("pyperfmap", False)


def pytest_collection_finish(session):
    """A suite's node ids are its own names, not unbounded values: room
    for all of them (three spans a test) above the cap."""
    if session.config.getoption("pyperfmap", False):
        _spans.reserve_names(3 * len(session.items))


def _phase(item, suffix):
    """The body of a hook wrapper: the phase runs inside its span when the
    item is profiled."""
    if not _on(item):
        yield
        return
    with _spans.span(item.nodeid + suffix):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    yield from _phase(item, " [setup]")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    yield from _phase(item, "")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    yield from _phase(item, " [teardown]")
