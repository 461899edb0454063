"""The two engines agree on a million seeded random positions, and no divergence is accepted."""

from __future__ import annotations

import os
import random

from differential import Report, known_divergences, run

#: Positions per run (docs/engine.md): about half a minute of one core.
POSITIONS = int(os.environ.get("DIZHU_DIFFERENTIAL_POSITIONS", "1000000"))


def test_a_million_random_positions_get_the_same_answers_from_both_engines() -> None:
    seed = int(os.environ.get("DIZHU_DIFFERENTIAL_SEED", random.randrange(2**32)))
    report = run(seed, POSITIONS)
    assert report.total >= POSITIONS, report.positions
    assert set(report.positions) == {
        "classification",
        "beats",
        "legal moves",
        "deals",
        "round actions",
        "settlements",
    }
    assert report.mismatches == [], f"DIZHU_DIFFERENTIAL_SEED={seed} reproduces:\n" + "\n".join(report.mismatches)


def test_the_list_of_known_divergences_is_empty() -> None:
    assert known_divergences() == [], "the engines must agree: a divergence is a bug to fix, not to list"


def test_a_mismatch_is_reported_with_the_question() -> None:
    report = Report()
    report.compare("legal_moves", ("3p", "3 4"), ["a"], ["b"])
    report.compare("legal_moves", ("3p", "3 4"), ["a"], ["a"])
    assert report.mismatches == ["legal_moves ('3p', '3 4'): python ['a'], native ['b']"]
