"""``pytest --cpu-report=FILE``: each test's CPU seconds and wall seconds, one JSON line per test.

A test's CPU is its worker's own and that of the child processes the worker waited for while the
test ran (``os.times``): a referee or bot started and stopped by the test counts, one started for
the whole module counts where it is stopped. Under ``-n`` every worker appends to FILE (a line is
written at once, whole, by one ``write``). The suite is CPU-bound on two cores: this says where its
minutes go (docs/testing.md, Wall time); ``--durations`` says only how long each test waited.
``python -m tests.support.cpu_report FILE`` sums it by module, the costliest first.
"""

from __future__ import annotations

import collections
import json
import os
import sys
import time
from collections.abc import Generator, Iterable

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--cpu-report",
        metavar="FILE",
        default=None,
        help="append each test's CPU and wall seconds to FILE as JSON lines (tests/support/cpu_report.py)",
    )


def _cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    report = item.config.getoption("--cpu-report")
    if report is None:
        yield
        return
    cpu, wall = _cpu_seconds(), time.monotonic()
    yield
    line = {
        "test": item.nodeid,
        # The worker of this run (a pytest started by a test inherits its worker's environment).
        "worker": getattr(item.config, "workerinput", {}).get("workerid", "main"),
        "cpu_s": round(_cpu_seconds() - cpu, 3),
        "wall_s": round(time.monotonic() - wall, 3),
    }
    descriptor = os.open(report, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(descriptor, (json.dumps(line) + "\n").encode())
    finally:
        os.close(descriptor)


def by_module(lines: Iterable[str]) -> list[tuple[str, float, float, int]]:
    """Each module's CPU seconds, wall seconds and tests, the most CPU first."""
    cpu: collections.Counter[str] = collections.Counter()
    wall: collections.Counter[str] = collections.Counter()
    tests: collections.Counter[str] = collections.Counter()
    for line in lines:
        test = json.loads(line)
        module = test["test"].partition("::")[0]
        cpu[module] += test["cpu_s"]
        wall[module] += test["wall_s"]
        tests[module] += 1
    return sorted(
        ((module, cpu[module], wall[module], tests[module]) for module in tests), key=lambda row: (-row[1], row[0])
    )


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m tests.support.cpu_report FILE", file=sys.stderr)
        return 2
    with open(argv[0]) as report:
        rows = by_module(report)
    print(f"{sum(row[1] for row in rows):.0f} CPU s in {sum(row[3] for row in rows)} tests")
    print(f"{'CPU s':>8} {'wall s':>8} {'tests':>6}  module")
    for module, cpu, wall, tests in rows:
        print(f"{cpu:8.1f} {wall:8.1f} {tests:6d}  {module}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
