"""The two engines agree on a million seeded random positions (half of a fixed seed, half of a seed
drawn for the run), and no divergence is accepted."""

from __future__ import annotations

import os
import random

from tests.support.differential import Report, known_divergences, run

#: Positions per run (docs/engine.md), split between a fixed seed and a rotating one: about
#: half a minute of one core in all.
POSITIONS = int(os.environ.get("DIZHU_DIFFERENTIAL_POSITIONS", "1000000"))
#: The seed every run asks: a red run is red again on any machine.
FIXED_SEED = 20261203


def _agree(seed: int, positions: int) -> None:
    report = run(seed, positions)
    assert report.total >= positions, report.positions
    assert set(report.positions) == {
        "classification",
        "beats",
        "legal moves",
        "deals",
        "round actions",
        "settlements",
    }
    assert report.mismatches == [], f"DIZHU_DIFFERENTIAL_SEED={seed} reproduces:\n" + "\n".join(report.mismatches)


def test_half_a_million_positions_of_the_fixed_seed_get_the_same_answers_from_both_engines() -> None:
    _agree(FIXED_SEED, POSITIONS // 2)


def test_half_a_million_positions_of_a_new_seed_get_the_same_answers_from_both_engines() -> None:
    """A seed drawn for this run (printed when it fails; ``DIZHU_DIFFERENTIAL_SEED`` takes it again)."""
    _agree(int(os.environ.get("DIZHU_DIFFERENTIAL_SEED", random.randrange(2**32))), POSITIONS - POSITIONS // 2)


def test_the_list_of_known_divergences_is_empty() -> None:
    assert known_divergences() == [], "the engines must agree: a divergence is a bug to fix, not to list"


def test_a_mismatch_is_reported_with_the_question() -> None:
    report = Report()
    report.compare("legal_moves", ("3p", "3 4"), ["a"], ["b"])
    report.compare("legal_moves", ("3p", "3 4"), ["a"], ["a"])
    assert report.mismatches == ["legal_moves ('3p', '3 4'): python ['a'], native ['b']"]
