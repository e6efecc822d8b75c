"""A small benchmark suite for the CI gate's worked example (docs/ci.md).

Each test does a fixed amount of pure-Python work, so its CPU time per
run moves only with the machine, not with calibration.  GATE_SLOWDOWN
(a factor, default 1) makes one function of one benchmark, parse_fields
in test_parse, do that much more work: GATE_SLOWDOWN=1.3 is the
deliberate 30% slowdown the gate must catch and name."""
import os

SLOWDOWN = float(os.environ.get("GATE_SLOWDOWN", "1"))


def parse_fields(n):
    fields = 0
    for i in range(int(n * SLOWDOWN)):
        fields += (i * 7 + 3) % 11
    return fields


def check_fields(n):
    ok = 0
    for i in range(n):
        ok += i & 5
    return ok


def sort_rows(n):
    total = 0
    for i in range(n):
        total += (i * 2654435761) % 1000
    return total


def hash_keys(n):
    h = 0
    for i in range(n):
        h = (h * 31 + i) & 0xFFFFFFFF
    return h


# Each benchmark works in rounds, as a benchmark of a pipeline does: its
# functions take turns, so a change of the machine's speed during the run
# falls on all of them alike.
def test_parse():
    for _ in range(40):
        assert parse_fields(36000) >= 0
        assert check_fields(30000) >= 0


def test_sort():
    for _ in range(40):
        assert sort_rows(24000) >= 0
        assert check_fields(8000) >= 0


def test_hash():
    for _ in range(40):
        assert hash_keys(24000) >= 0
        assert check_fields(8000) >= 0
