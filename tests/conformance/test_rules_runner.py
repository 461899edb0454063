"""The rules runner: both engines pass every vector; a wrong engine fails exactly where it is wrong."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from dizhu.conformance import (
    FAMILIES,
    CoreEngine,
    EngineError,
    NativeEngineMissing,
    count_lines,
    load_engine,
    run_rules,
)
from tests.support.conformance_kit import (
    KIT,
    ReversedMovesEngine,
    StakeAddingEngine,
    TrioWithSingleBlindEngine,
    edit_json,
    kit_copy,
)


def _native_built() -> bool:
    """Whether this installation has the native engine (``dizhu.engine`` says so, once it exists)."""
    if importlib.util.find_spec("dizhu.engine") is None:
        return False
    return "native" in importlib.import_module("dizhu.engine").available()


NATIVE_BUILT = _native_built()
STDIO_ENGINE = f"cmd:{sys.executable} -m dizhu.conformance.stdio"


def _vectors() -> int:
    return sum(len(KIT.load(f"rules/{family}.json")["cases"]) for family in FAMILIES)


class TestOurEngines:
    def test_the_python_rules_core_passes_every_vector(self) -> None:
        report = run_rules(KIT, load_engine("python"))
        assert report.ok, report.to_text()
        assert report.count("passed") == _vectors()

    def test_the_native_engine_passes_every_vector_or_is_said_not_built(self) -> None:
        if NATIVE_BUILT:  # once dizhu.engine exists its native backend must pass everything
            report = run_rules(KIT, load_engine("native"))
            assert report.ok, report.to_text()
            assert report.count("passed") == _vectors()
        else:
            with pytest.raises(NativeEngineMissing, match=r"^the native engine is not built: "):
                load_engine("native")

    def test_the_stdio_protocol_carries_every_family(self) -> None:
        engine = load_engine(STDIO_ENGINE)
        try:
            report = run_rules(KIT, engine, implementation="python")
        finally:
            engine.close()  # type: ignore[attr-defined]
        assert report.ok, report.to_text()
        assert report.count("passed") == _vectors()


class TestAWrongEngine:
    def test_it_fails_the_cases_it_reads_wrong_and_only_those(self) -> None:
        report = run_rules(KIT, TrioWithSingleBlindEngine(), families=("classify",))
        failed = {result.case_id for result in report.results if result.status == "failed"}
        expected = {
            case["id"]
            for case in KIT.load("rules/classify.json")["cases"]
            if case["expect"].get("kind") == "trio_with_single"
        }
        assert expected
        assert failed == expected
        assert not report.ok

    def test_doublings_that_add_instead_of_multiply_fail_every_round_of_two_or_more(self) -> None:
        report = run_rules(KIT, StakeAddingEngine(), families=("settlement",))
        failed = {result.case_id for result in report.results if result.status == "failed"}
        compound = {
            case["id"] for case in KIT.load("rules/settlement.json")["cases"] if case["expect"]["doublings"] >= 2
        }
        assert {case_id.split(".")[1] for case_id in compound} == {"3p", "4p"}
        assert failed == compound

    def test_its_known_failing_list_makes_the_run_pass_and_a_fixed_case_fails_it(self, tmp_path: Path) -> None:
        failing = sorted(
            case["id"]
            for case in KIT.load("rules/classify.json")["cases"]
            if case["expect"].get("kind") == "trio_with_single"
        )
        listed = [*failing, "classify.3p.single"]  # one more case, which the engine gets right
        kit = kit_copy(tmp_path)
        (kit.root / "known-failing" / "trio-blind.json").write_text(
            json.dumps({"implementation": "trio-blind", "kit_version": kit.version, "cases": listed})
        )
        report = run_rules(kit, TrioWithSingleBlindEngine(), families=("classify",))
        assert report.count("known_failing") == len(failing)
        assert [r.case_id for r in report.results if r.status == "unexpected_pass"] == ["classify.3p.single"]
        assert not report.ok

    def test_a_changed_expectation_is_a_failure_that_names_the_case(self, tmp_path: Path) -> None:
        def wrong_stake(root: Path) -> None:
            edit_json(root / "rules" / "settlement.json", lambda data: data["cases"][0]["expect"].update(stake=99))

        report = run_rules(kit_copy(tmp_path, wrong_stake), CoreEngine(), families=("settlement",))
        failures = [result for result in report.results if result.status == "failed"]
        assert len(failures) == 1
        assert "'stake': 99" in failures[0].detail

    def test_an_engine_that_raises_fails_its_cases_without_ending_the_run(self) -> None:
        class Broken(CoreEngine):
            def answer(self, family: str, query: object) -> dict[str, object]:
                raise KeyError("no such thing")

        report = run_rules(KIT, Broken("broken"), families=("beats",))
        assert report.count("failed") == len(KIT.load("rules/beats.json")["cases"])
        assert report.results[0].detail == "engine raised KeyError: 'no such thing'"

    def test_an_engine_that_cannot_be_loaded_is_said_so(self) -> None:
        with pytest.raises(EngineError, match="no_such_module"):
            load_engine("no_such_module:Engine")


class TestTheOrderOfLegalMoves:
    def _reorderable(self) -> set[str]:
        """The legal_moves cases with two moves or more, which a reversed list gets wrong."""
        return {case["id"] for case in KIT.load("rules/legal_moves.json")["cases"] if len(case["expect"]["moves"]) > 1}

    def test_the_kit_says_the_order_is_normative(self) -> None:
        assert KIT.load("rules/legal_moves.json")["ordered"] is True

    def test_the_right_moves_in_another_order_fail_the_ordered_comparison(self) -> None:
        report = run_rules(KIT, ReversedMovesEngine(), families=("legal_moves",))
        failed = [result for result in report.results if result.status == "failed"]
        assert {result.case_id for result in failed} == self._reorderable()
        assert all(result.detail.startswith("the right moves in another order: move 0 is ") for result in failed)
        assert report.comparison == {"legal_moves": "ordered"}
        assert not report.ok

    def test_unordered_compares_them_as_sets_and_the_report_says_so(self) -> None:
        report = run_rules(KIT, ReversedMovesEngine(), families=("legal_moves",), unordered=True)
        assert report.ok, report.to_text()
        assert report.to_json()["comparison"] == {"legal_moves": "unordered"}
        assert "passed (unordered)" in report.to_text()

    def test_a_kit_that_does_not_say_the_order_is_normative_compares_sets(self, tmp_path: Path) -> None:
        kit = kit_copy(
            tmp_path, lambda root: edit_json(root / "rules" / "legal_moves.json", lambda d: d.pop("ordered"))
        )
        report = run_rules(kit, ReversedMovesEngine(), families=("legal_moves",))
        assert report.ok, report.to_text()
        assert report.comparison == {"legal_moves": "unordered"}

    def test_a_missing_move_is_reported_as_such_even_when_ordered(self) -> None:
        class OneShort(CoreEngine):
            def answer(self, family: str, query: Mapping[str, Any]) -> dict[str, Any]:
                found = super().answer(family, query)
                return {**found, "moves": found["moves"][1:]}

        report = run_rules(KIT, OneShort("one-short"), families=("legal_moves",))
        first = report.results[0]
        assert first.status == "failed"
        assert "missing ['3']" in first.detail


class TestPerft:
    def test_lines_end_when_a_hand_is_empty(self) -> None:
        position = {"hands": ["3", "4", "5"], "turn": 0, "to_beat": None, "last_player": None, "passes": 0}
        assert count_lines(CoreEngine(), "3p", position, 2) == [1, 0]

    def test_a_trick_closes_after_every_other_seat_passed(self) -> None:
        # Seat 0 leads 3 or 4; seat 1 plays its 5 (and is out) or passes; after a pass seat 2 plays
        # its 6 (out) or passes; after two passes the trick closes and seat 0 leads its last card.
        position = {"hands": ["3 4", "5", "6"], "turn": 0, "to_beat": None, "last_player": None, "passes": 0}
        assert count_lines(CoreEngine(), "3p", position, 4) == [2, 4, 4, 2]


#: A stdio engine in a few lines, over the reference's answers, that cannot read beats queries
#: and exits at the first settlement query: what the runner makes of an engine's own faults.
_FAULTY_STDIO = """
import json, sys
from dizhu.conformance.engines import CoreEngine
from dizhu.conformance.stdio import answer_line
engine = CoreEngine()
for line in sys.stdin:
    family = json.loads(line)["family"]
    if family == "settlement":
        sys.exit(3)
    answer = {"error": "beats not read yet"} if family == "beats" else answer_line(engine, line)
    print(json.dumps(answer), flush=True)
"""


class TestTheAdapterInterface:
    """Third-party engines plug in as docs/conformance.md says: a Python entry point, or stdio JSON lines."""

    def test_a_python_entry_point_is_loaded_by_module_and_class_and_judged(self) -> None:
        done = subprocess.run(
            [
                sys.executable,
                *("-m", "dizhu.cli", "conformance", "rules", "--json", "--family", "classify"),
                *("--engine", "conformance_kit:TrioWithSingleBlindEngine"),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "support")},
        )
        assert done.returncode == 1, done.stderr
        report = json.loads(done.stdout)
        assert report["implementation"] == "trio-blind"
        failed = {case["case_id"] for case in report["cases"] if case["status"] == "failed"}
        assert failed == {
            case["id"]
            for case in KIT.load("rules/classify.json")["cases"]
            if case["expect"].get("kind") == "trio_with_single"
        }

    def test_an_instance_is_an_entry_point_too(self) -> None:
        engine = load_engine("tests.support.conformance_kit:ENGINE_INSTANCE")
        assert engine.name == "reversed"

    def test_a_stdio_engine_error_fails_its_cases_and_an_engine_that_exits_fails_the_rest(self) -> None:
        engine = load_engine(f"cmd:{sys.executable} -c '{_FAULTY_STDIO}'")
        try:
            report = run_rules(KIT, engine, families=("classify", "beats", "settlement"), implementation="faulty")
        finally:
            engine.close()  # type: ignore[attr-defined]
        by_family: dict[str, set[str]] = {}
        for result in report.results:
            by_family.setdefault(result.group, set()).add(result.detail if result.status == "failed" else "passed")
        assert by_family["classify"] == {"passed"}
        assert by_family["beats"] == {"engine error: " + engine.name + ": beats not read yet"}
        assert by_family["settlement"] == {"engine error: " + engine.name + " exited (status 3) without answering"}
        assert not report.ok


class TestCommandLine:
    def _dizhu(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "dizhu.cli", "conformance", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def test_rules_prints_a_json_report_and_exits_0(self) -> None:
        done = self._dizhu("rules", "--json", "--family", "beats", "--family", "perft")
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["ok"] is True
        assert set(report["groups"]) == {"beats", "perft"}
        assert report["totals"]["failed"] == 0

    def test_unordered_is_an_option_of_rules_and_shows_in_the_report(self) -> None:
        done = self._dizhu("rules", "--json", "--family", "legal_moves", "--unordered")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["comparison"] == {"legal_moves": "unordered"}

    def test_native_without_the_native_engine_exits_2_saying_so(self) -> None:
        done = self._dizhu("rules", "--engine", "native", "--family", "deals")
        if NATIVE_BUILT:
            assert done.returncode == 0, done.stdout + done.stderr
        else:
            assert done.returncode == 2
            assert "the native engine is not built" in done.stderr

    def test_a_failing_run_exits_1(self, tmp_path: Path) -> None:
        def wrong(root: Path) -> None:
            edit_json(root / "rules" / "beats.json", lambda data: data["cases"][0]["expect"].update(a_beats_b=False))

        done = self._dizhu("rules", "--kit", str(kit_copy(tmp_path, wrong).root), "--family", "beats")
        assert done.returncode == 1
        assert "FAILED beats.3p.single-higher" in done.stdout
