"""Standings, intervals and ratings from game outcomes (pure: no referee needed)."""

from __future__ import annotations

import math

import pytest

from dizhu.tournament.ratings import rate
from dizhu.tournament.stats import GameOutcome, mean_interval, pairwise, ranking, standings, t975, wilson


def outcome(game: int, deal_set: int, seating: str, landlord: int, landlord_won: bool, stake: int = 2) -> GameOutcome:
    changes = [(-stake if landlord_won else stake)] * 3
    changes[landlord] = -sum(changes) + changes[landlord]
    return GameOutcome(
        game=game,
        deal_set=deal_set,
        lineup=0,
        seating=tuple(seating),
        outcome="landlord_won" if landlord_won else "farmers_won",
        landlord=landlord,
        changes=tuple(changes),
        faults=({}, {}, {}),
    )


class TestIntervals:
    def test_t_quantiles(self) -> None:
        assert t975(1) == pytest.approx(12.706)
        assert t975(10) == pytest.approx(2.228, abs=2e-3)
        assert t975(30) == pytest.approx(2.042, abs=1e-3)
        assert t975(10_000) == pytest.approx(1.96, abs=1e-3)

    def test_mean_interval(self) -> None:
        interval = mean_interval([1.0, 2.0, 3.0, 4.0, 5.0])
        assert interval.mean == 3.0
        assert interval.high - 3.0 == pytest.approx(2.776 * math.sqrt(2.5) / math.sqrt(5), rel=1e-3)
        assert interval.excludes_zero

    def test_one_value_says_nothing(self) -> None:
        assert not mean_interval([5.0]).excludes_zero

    def test_wilson(self) -> None:
        interval = wilson(8, 10)
        assert interval.mean == 0.8
        assert interval.low == pytest.approx(0.4902, abs=1e-3)
        assert interval.high == pytest.approx(0.9433, abs=1e-3)
        assert wilson(0, 0).n == 0


class TestStandings:
    def test_a_strong_entrant_against_two_weak_ones(self) -> None:
        # In every deal, whoever holds seat 0 is landlord; "a" wins every game it plays as landlord,
        # and as a farmer its side wins too.
        games = []
        for deal_set in range(6):
            for i, seating in enumerate(("abc", "bca", "cab")):
                a_seat = seating.index("a")
                games.append(outcome(3 * deal_set + i, deal_set, seating, landlord=0, landlord_won=a_seat == 0))
        table = standings(games, ["a", "b", "c"])
        assert table["a"]["games"] == 18
        assert table["a"]["win_rate"]["mean"] == 1.0
        assert table["a"]["landlord"]["games"] == 6
        assert table["a"]["farmer"]["games"] == 12
        assert table["a"]["points"]["mean"] > 0 > table["b"]["points"]["mean"]
        assert table["a"]["differential"]["low"] > 0
        assert table["a"]["faults"] == {"timeouts": 0, "crashes": 0, "hangs": 0, "illegal": 0, "garbage": 0}
        pairs = {(p["a"], p["b"]): p for p in pairwise(games, ["a", "b", "c"])}
        assert pairs["a", "b"]["significant"]
        assert pairs["a", "b"]["blocks"] == 6
        assert pairs["a", "b"]["games"] == 18
        assert pairs["a", "b"]["games_needed"] >= 6
        assert not pairs["b", "c"]["significant"]

    def test_void_games_count_as_played_not_as_decided(self) -> None:
        void = GameOutcome(0, 0, 0, ("a", "b", "c"), "void", None, (0, 0, 0), ({}, {"timeouts": 2}, {}))
        table = standings([void], ["a", "b", "c"])
        assert table["a"]["games"] == 1
        assert table["a"]["win_rate"]["n"] == 0
        assert table["b"]["faults"]["timeouts"] == 2


class TestRatings:
    def test_the_winner_rates_highest_and_history_is_kept(self) -> None:
        games = [outcome(i, i, "abc", landlord=0, landlord_won=True) for i in range(20)]
        ratings = rate(games, ["a", "b", "c"])
        assert ratings.final["a"]["mu"] > 25 > ratings.final["b"]["mu"]
        assert ratings.final["a"]["ordinal"] == pytest.approx(
            ratings.final["a"]["mu"] - 3 * ratings.final["a"]["sigma"], abs=1e-3
        )
        assert ratings.history[0]["games"] == 0
        assert ratings.history[-1]["games"] == 20

    def test_the_order_of_arrival_does_not_matter(self) -> None:
        games = [outcome(i, i, "abc" if i % 2 else "bca", landlord=i % 3, landlord_won=i % 4 != 0) for i in range(12)]
        assert rate(games, ["a", "b", "c"]) == rate(list(reversed(games)), ["a", "b", "c"])


class TestRanking:
    @staticmethod
    def entry(mean: float, n: int = 4) -> dict[str, object]:
        return {"differential": {"mean": mean, "low": mean - 1, "high": mean + 1, "n": n}}

    def test_by_differential_best_first_equal_ones_sharing_a_rank(self) -> None:
        table = {"c": self.entry(-1.5), "a": self.entry(0.75), "b": self.entry(0.75), "idle": self.entry(0.0, n=0)}
        pairs = [
            {"a": "a", "b": "b", "significant": False},
            {"a": "a", "b": "c", "significant": True},
            {"a": "b", "b": "c", "significant": False},
        ]
        order, places = ranking(table, pairs)
        assert order == ["a", "b", "c", "idle"]  # an entrant that played no block comes last
        assert [places[name]["rank"] for name in order] == [1, 1, 3, 4]
        assert places["a"]["not_separable_from"] == ["b"]
        assert places["b"]["not_separable_from"] == ["a", "c"]
        assert places["c"]["not_separable_from"] == ["b"]
        assert places["idle"]["not_separable_from"] == []
