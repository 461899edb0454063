"""Legal moves agree with RLCard's Dou Dizhu wherever the rules agree (3p; RLCard is test-only).

Every play RLCard allows that the rules refuse must be explained by a named rule line
(``bench/crosscheck.py``); the rules must never allow a play RLCard refuses.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from crosscheck import EXPLANATIONS, cross_check, explain


class TestExplanations:
    @pytest.mark.parametrize(
        ("play", "key"),
        [
            ("3 3 3 3 A A", "quad_with_a_pair_as_two_singles"),
            ("5 5 7 7 7 8 8 8", "airplane_single_wings_of_one_rank"),
            ("5 5 5 6 6 6 7 7 7 Q Q Q", "airplane_single_wings_of_one_rank"),
            ("3 3 3 4", None),
            ("3 3 3 4 4 4 5 6", None),
        ],
    )
    def test_each_known_difference_is_named(self, play: str, key: str | None) -> None:
        assert explain(play) == key


class TestCrossCheck:
    def test_thousands_of_positions_differ_only_where_the_rules_say_why(self) -> None:
        report = cross_check(positions=3000, seed=7)
        assert report.positions == 3000
        assert report.ours_only == [], f"plays RLCard refuses: {report.ours_only[:5]}"
        unexplained = report.rlcard_only.get(None, 0)
        assert unexplained == 0, f"unexplained RLCard-only plays, e.g. {report.examples.get(None)}"
        assert set(report.rlcard_only) <= set(EXPLANATIONS)
        # The differences are real and both kinds show up: the check is not vacuous.
        assert report.rlcard_only["airplane_single_wings_of_one_rank"] > 0
        assert report.plays_compared > 20_000
