"""The suite's ``each_engine`` fixture: a module runs on both engines, and no later test inherits one.

A test outside the rules modules runs on the engine a process starts with, as a referee does
(``dizhu serve`` says which in its "serving" line). Run by pytest itself, in a child process.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]


def test_a_module_run_on_each_engine_leaves_the_next_module_on_the_engine_the_process_started_with(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    pytester.makeconftest(
        """
        import pytest

        from dizhu import engine
        from tests.support.engine_fixtures import each_engine

        STARTED_ON = engine.backend()


        @pytest.fixture
        def started_on():
            return STARTED_ON
        """
    )
    pytester.makepyfile(
        test_a_rules="""
        import pytest

        from dizhu import engine

        pytestmark = pytest.mark.usefixtures("each_engine")


        def test_on_the_engine_of_its_turn(each_engine):
            assert engine.backend() == each_engine
        """,
        test_b_service="""
        from dizhu import engine


        def test_on_the_engine_the_process_started_with(started_on):
            assert engine.backend() == started_on
        """,
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        ["*test_on_the_engine_of_its_turn?native?*", "*test_on_the_engine_of_its_turn?python?*"]
    )
