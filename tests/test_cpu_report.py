"""``pytest --cpu-report=FILE`` (tests/support/cpu_report.py), run by pytest itself in a child process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cpu_report import by_module

pytest_plugins = ["pytester"]


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A pytest of its own, with the plugin and nothing else of the suite's."""
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[1]))
    pytester.makeconftest('pytest_plugins = ["tests.support.cpu_report"]')
    return pytester


def test_each_test_gets_a_line_counting_the_children_it_waited_for(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_work="""
        import subprocess
        import sys
        import time

        BUSY = "import os\\nsum(range(3_000_000))\\nt = os.times()\\nprint(t.user + t.system)"


        def test_a_busy_child(tmp_path):
            spent = subprocess.run([sys.executable, "-c", BUSY], capture_output=True, text=True, check=True)
            (tmp_path.parent / "child_cpu").write_text(spent.stdout)


        def test_a_sleep():
            time.sleep(0.2)
        """
    )
    report = pytester.path / "cpu.jsonl"
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", f"--cpu-report={report}", "--basetemp=tmp")
    result.assert_outcomes(passed=2)
    lines = {line["test"]: line for line in map(json.loads, report.read_text().splitlines())}
    assert lines.keys() == {"test_work.py::test_a_busy_child", "test_work.py::test_a_sleep"}
    busy, sleep = lines["test_work.py::test_a_busy_child"], lines["test_work.py::test_a_sleep"]
    assert busy["worker"] == sleep["worker"] == "main"
    child_cpu = float((pytester.path / "tmp" / "child_cpu").read_text())
    assert busy["cpu_s"] >= round(child_cpu, 3) - 0.001  # the child's CPU, counted once it was waited for
    assert sleep["wall_s"] >= 0.2


def test_without_the_option_nothing_is_written(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert sorted(path.name for path in pytester.path.iterdir() if path.suffix == ".jsonl") == []


def test_the_summary_adds_each_modules_tests_and_puts_the_costliest_first() -> None:
    lines = [
        json.dumps({"test": test, "worker": "gw0", "cpu_s": cpu, "wall_s": wall})
        for test, cpu, wall in [("a.py::t1", 1.0, 2.0), ("b.py::t", 5.0, 1.0), ("a.py::t2[x]", 0.5, 0.25)]
    ]
    assert by_module(lines) == [("b.py", 5.0, 1.0, 1), ("a.py", 1.5, 2.25, 2)]
