"""The schedule: deals from the tournament seed, duplicate seatings complete and balanced, line-ups."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from dizhu.rules.deal import derive_seed
from dizhu.tournament.config import EntrantSpec, TournamentConfig
from dizhu.tournament.schedule import build_schedule, lineups, seatings


def config(names: list[str], **changes: object) -> TournamentConfig:
    entrants = tuple(EntrantSpec(name=name, bot="random") for name in names)
    return TournamentConfig(entrants=entrants, **changes).check()  # type: ignore[arg-type]


class TestSeatings:
    @pytest.mark.parametrize(
        ("players", "mode", "count"), [(3, "all", 6), (3, "rotations", 3), (4, "all", 24), (4, "rotations", 4)]
    )
    def test_every_seating_once(self, players: int, mode: str, count: int) -> None:
        orders = seatings(players, mode)
        assert len(orders) == len(set(orders)) == count
        assert all(sorted(order) == list(range(players)) for order in orders)

    @pytest.mark.parametrize(("players", "mode"), [(3, "all"), (3, "rotations"), (4, "all"), (4, "rotations")])
    def test_each_member_holds_each_seat_equally_often(self, players: int, mode: str) -> None:
        orders = seatings(players, mode)
        per_seat = Counter((seat, member) for order in orders for seat, member in enumerate(order))
        assert set(per_seat.values()) == {len(orders) // players}
        assert len(per_seat) == players * players


class TestDuplicateSchedule:
    @pytest.mark.parametrize(("variant", "names"), [("3p", ["a", "b", "c"]), ("4p", ["a", "b", "c", "d"])])
    def test_every_deal_set_is_one_deal_played_in_every_seating(self, variant: str, names: list[str]) -> None:
        schedule = build_schedule(config(names, variant=variant, deal_sets=3))
        per_set = 6 if variant == "3p" else 24
        assert len(schedule) == 3 * per_set
        for deal_set, games in itertools.groupby(schedule, key=lambda g: g.deal_set):
            games_of_set = list(games)
            assert {g.seed for g in games_of_set} == {
                derive_seed(config(names).seed_bytes(), "tournament-deal", deal_set)
            }
            assert len({g.seating for g in games_of_set}) == per_set == len(games_of_set)

    def test_each_entrant_holds_each_hand_once_per_deal_set(self) -> None:
        schedule = build_schedule(config(["a", "b", "c"], deal_sets=2, seatings="rotations"))
        for deal_set in (0, 1):
            seats = Counter(
                (seat, name) for g in schedule if g.deal_set == deal_set for seat, name in enumerate(g.seating)
            )
            assert seats == Counter({(seat, name): 1 for seat in range(3) for name in "abc"})

    def test_more_entrants_than_seats_every_seat_and_opponent_equally(self) -> None:
        names = ["a", "b", "c", "d", "e"]
        schedule = build_schedule(config(names, deal_sets=1))
        assert len(schedule) == len(lineups(names, 3)) * 6 == 60
        seats = Counter((seat, name) for g in schedule for seat, name in enumerate(g.seating))
        assert set(seats.values()) == {12}  # each of 5 entrants in each of 3 seats
        opponents = Counter(frozenset(pair) for g in schedule for pair in itertools.combinations(g.seating, 2))
        assert len(opponents) == 10
        assert set(opponents.values()) == {18}  # every pair meets equally often

    def test_lineups_per_set_cycle_through_every_lineup(self) -> None:
        names = ["a", "b", "c", "d"]
        schedule = build_schedule(config(names, deal_sets=4, lineups_per_set=1, seatings="rotations"))
        assert len(schedule) == 4 * 3
        assert sorted({g.lineup for g in schedule}) == [0, 1, 2, 3]
        assert Counter(name for g in schedule for name in g.seating) == Counter(dict.fromkeys(names, 9))


class TestSeeds:
    def test_same_seed_same_schedule_bit_for_bit(self) -> None:
        assert build_schedule(config(["a", "b", "c"], seed="s")) == build_schedule(config(["a", "b", "c"], seed="s"))

    def test_another_seed_other_deals(self) -> None:
        one = {g.seed for g in build_schedule(config(["a", "b", "c"], seed="s"))}
        two = {g.seed for g in build_schedule(config(["a", "b", "c"], seed="t"))}
        assert one.isdisjoint(two)

    def test_hex_seed_is_taken_as_written(self) -> None:
        assert config(["a", "b", "c"], seed="ab" * 32).seed_bytes() == bytes.fromhex("ab" * 32)


class TestRandomFormat:
    def test_one_game_per_deal_each_with_its_own_deal(self) -> None:
        schedule = build_schedule(config(["a", "b", "c"], format="random", deal_sets=30))
        assert len(schedule) == 30
        assert len({g.seed for g in schedule}) == 30
        assert len({g.seating for g in schedule}) > 1  # seatings are drawn, not fixed
        assert all(sorted(g.seating) == ["a", "b", "c"] for g in schedule)
