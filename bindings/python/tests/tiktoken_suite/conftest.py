"""Runs tiktoken's vendored test suite against turnfit.tiktoken (see README.md).

The outcome is checked against two committed lists: EXPECTED_PASSES (one
collected test per line, parameters included: 33 in tiktoken 0.14.0) and
KNOWN_FAILURES below (with the reason). The run
fails when a listed test stops passing, when a test not listed starts passing
(update EXPECTED_PASSES), or when a known failure passes (strict xfail)."""

import sys
from pathlib import Path

import pytest

import turnfit.tiktoken

sys.modules["tiktoken"] = turnfit.tiktoken

HERE = Path(__file__).resolve().parent
EXPECTED_PASSES = {
    line.strip() for line in (HERE / "EXPECTED_PASSES").read_text().splitlines() if line.strip() and not line.startswith("#")
}

# test (file::name, any parameters) -> why it cannot pass.
KNOWN_FAILURES = {
    "test_pickle.py::test_pickle": "pickles tiktoken's Python objects and builds a custom Encoding from "
    "rank dicts and a regex (tiktoken internals turnfit does not have: its encodings are the embedded ones)",
}

_outcomes: dict = {}


def _key(nodeid: str) -> str:
    return nodeid.split("/")[-1]


def pytest_collection_modifyitems(config, items):
    for item in items:
        k = _key(item.nodeid)
        _outcomes.setdefault(k, True)
        reason = KNOWN_FAILURES.get(k.split("[")[0])
        if reason is not None:
            item.add_marker(pytest.mark.xfail(reason=reason, strict=True))


def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome == "failed" or hasattr(report, "wasxfail"):
        k = _key(report.nodeid)
        ok = report.outcome == "passed" and not hasattr(report, "wasxfail")
        _outcomes[k] = _outcomes.get(k, True) and ok


def pytest_sessionfinish(session, exitstatus):
    if not _outcomes:
        return
    passed = {k for k, ok in _outcomes.items() if ok}
    lost = sorted(EXPECTED_PASSES - passed)
    new = sorted(passed - EXPECTED_PASSES)
    print(f"\ntiktoken 0.14.0 suite against turnfit.tiktoken: {len(passed)}/{len(_outcomes)} tests pass")
    for k in sorted(set(_outcomes) - passed):
        print(f"  fails: {k}: {KNOWN_FAILURES.get(k.split('[')[0], 'NOT A KNOWN FAILURE')}")
    for k in lost:
        print(f"  REGRESSION: {k} is in EXPECTED_PASSES but did not pass")
    for k in new:
        print(f"  NEW PASS: {k} passes but is not in EXPECTED_PASSES (add it)")
    if lost or new:
        session.exitstatus = 1
