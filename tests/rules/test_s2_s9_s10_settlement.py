"""Settlement, the spring house rule and the table's series of rounds (docs/rules.md sections 2, 9, 10).

Whole rounds come from the scripted scenarios of ``helpers.SCENARIOS`` (seat 0 is the
landlord): "landlord sweeps" (no farmer plays a card), "landlord wins" (seat 1 plays once),
"farmers sweep" (the landlord plays only the opening lead) and "farmers win" (it plays twice).
"""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dizhu.rules import (
    FOUR_PLAYER,
    THREE_PLAYER,
    CardsPlayed,
    HouseRules,
    MatchState,
    RoundState,
    Settlement,
    Variant,
    new_match,
    record_round,
    settle,
    standings,
)
from dizhu.rules.random_play import random_round
from tests.support.rounds import arranged_round, bid, make_landlord, play, scenario_round

SPRING = HouseRules(spring=True)

#: Doubling plays in each scenario: 3p's bomb 2222 and rocket; 4p's rocket only (its bombs
#: have four and five cards).
SCENARIO_DOUBLINGS = {
    ("3p", "landlord sweeps"): 2,
    ("3p", "landlord wins"): 2,
    ("4p", "landlord sweeps"): 1,
    ("4p", "landlord wins"): 1,
}


def doublings_of(variant: Variant, name: str) -> int:
    return SCENARIO_DOUBLINGS.get((variant.name, name), 0)


def thrown_in(variant: Variant) -> RoundState:
    """A round where every seat passed."""
    return bid(arranged_round(variant), *[0] * variant.players)


def bomb_lead(variant: Variant, size: int) -> tuple[RoundState, CardsPlayed]:
    """Seat 0, the landlord at 1, leads a bomb of ``size`` threes; the state and its event."""
    state = make_landlord(arranged_round(variant, ("3 " * size,)), 0, 1)
    transition = play(state, 0, "3 " * size)
    event = transition.events[0]
    assert isinstance(event, CardsPlayed)
    return transition.state, event


class TestStake:
    @pytest.mark.parametrize("amount", [1, 2, 3])
    @pytest.mark.parametrize("doublings", [0, 1, 2, 5])
    def test_the_stake_is_the_bid_doubled_once_per_doubling_play(
        self, variant: Variant, amount: int, doublings: int
    ) -> None:
        finished = scenario_round(variant, "farmers win", amount=amount)
        state = finished._replace(doublings=doublings)
        assert state.stake == settle(state).stake == amount * 2**doublings

    @pytest.mark.parametrize("amount", [1, 2, 3])
    def test_the_stake_starts_at_the_winning_bid(self, variant: Variant, amount: int) -> None:
        state = make_landlord(arranged_round(variant), 0, amount)
        assert (state.stake, state.doublings) == (amount, 0)

    def test_ordinary_plays_do_not_double(self, variant: Variant) -> None:
        state = scenario_round(variant, "farmers win", amount=2)
        assert (state.doublings, state.stake, settle(state).stake) == (0, 2, 2)

    @pytest.mark.parametrize("name", ["landlord sweeps", "landlord wins"])
    def test_the_scenarios_count_their_doubling_plays(self, variant: Variant, name: str) -> None:
        state = scenario_round(variant, name, amount=3)
        assert settle(state).doublings == state.doublings == doublings_of(variant, name)
        assert settle(state).stake == 3 * 2 ** doublings_of(variant, name)


class TestDoublingPlays:
    def test_a_3p_bomb_doubles_the_stake(self) -> None:
        state, event = bomb_lead(THREE_PLAYER, 4)
        assert (event.doubled, state.doublings, state.stake) == (True, 1, 2)

    @pytest.mark.parametrize(("size", "doubles"), [(4, False), (5, False), (6, True), (7, True), (8, True)], ids=str)
    def test_a_4p_bomb_doubles_only_with_six_or_more_cards(self, size: int, doubles: bool) -> None:
        state, event = bomb_lead(FOUR_PLAYER, size)
        assert (event.doubled, state.doublings, state.stake) == (doubles, int(doubles), 1 + doubles)

    def test_the_rocket_doubles_the_stake(self, variant: Variant) -> None:
        rocket = " ".join(["BJ"] * variant.decks + ["RJ"] * variant.decks)
        state = make_landlord(arranged_round(variant, (rocket,)), 0, 2)
        transition = play(state, 0, rocket)
        assert transition.events[0].doubled
        assert (transition.state.doublings, transition.state.stake) == (1, 4)

    def test_a_bomb_on_a_bomb_doubles_twice(self, variant: Variant) -> None:
        size = variant.min_doubling_bomb_size
        state = make_landlord(arranged_round(variant, ("3 " * size, "4 " * size)), 0, 1)
        state = play(state, 0, "3 " * size).state
        state = play(state, 1, "4 " * size).state
        assert (state.doublings, state.stake) == (2, 4)

    def test_a_pass_never_doubles(self, variant: Variant) -> None:
        state, _ = bomb_lead(variant, variant.min_doubling_bomb_size)
        transition = play(state, 1)
        assert not transition.events[0].doubled
        assert transition.state.doublings == 1


class TestPayments:
    @pytest.mark.parametrize("name", ["landlord sweeps", "landlord wins"])
    def test_when_the_landlord_wins_every_farmer_pays_the_stake(self, variant: Variant, name: str) -> None:
        settlement = settle(scenario_round(variant, name, amount=2))
        stake = 2 * 2 ** doublings_of(variant, name)
        assert settlement.stake == stake
        assert settlement.deltas == ((variant.players - 1) * stake, *[-stake] * (variant.players - 1))
        assert (settlement.landlord, settlement.landlord_won, settlement.spring) == (0, True, False)

    @pytest.mark.parametrize("name", ["farmers sweep", "farmers win"])
    def test_when_a_farmer_goes_out_the_landlord_pays_every_farmer(self, variant: Variant, name: str) -> None:
        settlement = settle(scenario_round(variant, name, amount=3))
        assert settlement.deltas == (-(variant.players - 1) * 3, *[3] * (variant.players - 1))
        assert (settlement.landlord, settlement.landlord_won, settlement.stake) == (0, False, 3)

    def test_the_landlord_wins_or_loses_two_stakes_in_3p_and_three_in_4p(self, variant: Variant) -> None:
        won = settle(scenario_round(variant, "farmers win")).deltas[0]
        assert won == -{"3p": 2, "4p": 3}[variant.name]

    @pytest.mark.parametrize("name", ["landlord sweeps", "landlord wins", "farmers sweep", "farmers win"])
    def test_every_settlement_sums_to_zero(self, variant: Variant, name: str) -> None:
        for house_rules in (HouseRules(), SPRING):
            assert sum(settle(scenario_round(variant, name, house_rules=house_rules)).deltas) == 0

    def test_a_thrown_in_round_settles_nothing(self, variant: Variant) -> None:
        assert settle(thrown_in(variant)) == Settlement(stake=0, deltas=(0,) * variant.players)

    def test_a_round_still_being_played_cannot_be_settled(self, variant: Variant) -> None:
        with pytest.raises(ValueError, match="auction"):
            settle(arranged_round(variant))
        with pytest.raises(ValueError, match="play"):
            settle(make_landlord(arranged_round(variant), 0))


class TestSpring:
    def test_the_spring_house_rule_is_off_by_default(self, variant: Variant) -> None:
        assert HouseRules().spring is False
        state = scenario_round(variant, "landlord sweeps")
        assert state.house_rules == HouseRules()
        assert settle(state).spring is False
        assert settle(state).stake == 2 ** doublings_of(variant, "landlord sweeps")

    def test_a_landlord_win_without_any_farmer_card_doubles_once_more(self, variant: Variant) -> None:
        settlement = settle(scenario_round(variant, "landlord sweeps", amount=3, house_rules=SPRING))
        stake = 3 * 2 ** (doublings_of(variant, "landlord sweeps") + 1)
        assert (settlement.spring, settlement.stake) == (True, stake)
        assert settlement.deltas[0] == (variant.players - 1) * stake

    def test_a_landlord_win_after_a_farmer_played_is_no_spring(self, variant: Variant) -> None:
        settlement = settle(scenario_round(variant, "landlord wins", house_rules=SPRING))
        assert (settlement.spring, settlement.stake) == (False, 2 ** doublings_of(variant, "landlord wins"))

    def test_a_farmer_win_when_the_landlord_played_only_the_opening_lead_doubles_once_more(
        self, variant: Variant
    ) -> None:
        settlement = settle(scenario_round(variant, "farmers sweep", amount=2, house_rules=SPRING))
        assert (settlement.spring, settlement.stake) == (True, 4)
        assert settlement.deltas[0] == -(variant.players - 1) * 4

    def test_a_farmer_win_when_the_landlord_played_twice_is_no_spring(self, variant: Variant) -> None:
        settlement = settle(scenario_round(variant, "farmers win", amount=2, house_rules=SPRING))
        assert (settlement.spring, settlement.stake) == (False, 2)

    def test_the_spring_does_not_change_the_running_stake(self, variant: Variant) -> None:
        state = scenario_round(variant, "farmers sweep", amount=2, house_rules=SPRING)
        assert state.stake == 2

    def test_a_thrown_in_round_is_never_a_spring(self, variant: Variant) -> None:
        state = thrown_in(variant)._replace(house_rules=SPRING)
        assert settle(state) == Settlement.nothing(variant.players)


class TestMatch:
    def test_a_new_table_starts_level_with_the_default_redeal_cap(self, variant: Variant) -> None:
        match = new_match(variant, 1)
        assert (match.dealer, match.redeal_cap, match.round_limit) == (1, 10, 0)
        assert (match.rounds_played, match.redeals, match.balances) == (0, 0, (0,) * variant.players)
        assert not match.is_over

    def test_a_first_dealer_outside_the_table_is_refused(self, variant: Variant) -> None:
        for dealer in (-1, variant.players):
            with pytest.raises(ValueError, match="no seat"):
                new_match(variant, dealer)

    @pytest.mark.parametrize("setting", ["redeal_cap", "round_limit"])
    def test_a_negative_cap_or_limit_is_refused(self, variant: Variant, setting: str) -> None:
        with pytest.raises(ValueError, match="negative"):
            new_match(variant, 0, **{setting: -1})

    def test_a_settled_round_moves_the_deal_to_the_next_seat_and_books_the_balance(self, variant: Variant) -> None:
        match = new_match(variant, variant.players - 1)
        outcome = record_round(match, scenario_round(variant, "farmers win", amount=2))
        assert (outcome.redeal, outcome.void) == (False, False)
        assert outcome.match.dealer == 0
        assert outcome.match.rounds_played == 1
        assert (
            outcome.match.balances
            == outcome.settlement.deltas
            == (-(variant.players - 1) * 2, *[2] * (variant.players - 1))
        )

    def test_the_deal_passes_round_the_table_every_round(self, variant: Variant) -> None:
        match = new_match(variant, 0)
        dealers = []
        for _ in range(2 * variant.players):
            dealers.append(match.dealer)
            match = record_round(match, scenario_round(variant, "landlord wins")).match
        assert dealers == [seat % variant.players for seat in range(2 * variant.players)]

    def test_balances_accumulate_over_rounds(self, variant: Variant) -> None:
        match = new_match(variant, 0)
        for name in ("landlord wins", "farmers win", "farmers win"):
            match = record_round(match, scenario_round(variant, name)).match
        landlord_won = (variant.players - 1) * 2 ** doublings_of(variant, "landlord wins")
        assert match.balances[0] == landlord_won - 2 * (variant.players - 1)
        assert sum(match.balances) == 0

    def test_a_thrown_in_round_is_redealt_by_the_same_dealer(self, variant: Variant) -> None:
        match = new_match(variant, 2)
        outcome = record_round(match, thrown_in(variant))
        assert (outcome.redeal, outcome.void) == (True, False)
        assert outcome.settlement == Settlement.nothing(variant.players)
        assert (outcome.match.dealer, outcome.match.redeals, outcome.match.rounds_played) == (2, 1, 0)
        assert outcome.match.balances == match.balances

    def test_the_round_is_void_when_the_redeal_cap_is_hit(self, variant: Variant) -> None:
        match = new_match(variant, 1)
        for redeal in range(1, 11):
            outcome = record_round(match, thrown_in(variant))
            assert (outcome.redeal, outcome.match.redeals) == (True, redeal)
            match = outcome.match
        outcome = record_round(match, thrown_in(variant))
        assert (outcome.redeal, outcome.void) == (False, True)
        assert outcome.settlement == Settlement.nothing(variant.players)
        assert (outcome.match.dealer, outcome.match.redeals, outcome.match.rounds_played) == (2, 0, 1)
        assert outcome.match.balances == (0,) * variant.players

    def test_a_redeal_cap_of_zero_voids_the_first_throw_in(self, variant: Variant) -> None:
        outcome = record_round(new_match(variant, 0, redeal_cap=0), thrown_in(variant))
        assert (outcome.redeal, outcome.void, outcome.match.dealer) == (False, True, 1)

    def test_a_settled_round_resets_the_redeal_count(self, variant: Variant) -> None:
        match = record_round(new_match(variant, 0), thrown_in(variant)).match
        match = record_round(match, scenario_round(variant, "farmers win")).match
        assert (match.redeals, match.rounds_played, match.dealer) == (0, 1, 1)

    def test_the_table_ends_after_its_round_limit(self, variant: Variant) -> None:
        match = new_match(variant, 0, round_limit=2)
        match = record_round(match, scenario_round(variant, "farmers win")).match
        assert not match.is_over
        match = record_round(match, scenario_round(variant, "landlord wins")).match
        assert match.is_over
        with pytest.raises(ValueError, match="last round"):
            record_round(match, scenario_round(variant, "farmers win"))

    def test_a_void_round_counts_towards_the_round_limit(self, variant: Variant) -> None:
        match = new_match(variant, 0, redeal_cap=0, round_limit=1)
        assert record_round(match, thrown_in(variant)).match.is_over

    def test_a_table_without_a_round_limit_never_ends_by_itself(self, variant: Variant) -> None:
        match = dataclasses.replace(new_match(variant, 0), rounds_played=10_000)
        assert not match.is_over

    def test_a_round_still_being_played_cannot_be_booked(self, variant: Variant) -> None:
        with pytest.raises(ValueError, match="cannot be settled"):
            record_round(new_match(variant, 0), arranged_round(variant))

    @given(seed=st.integers(0, 2**64), rounds=st.integers(1, 6))
    def test_balances_always_sum_to_zero(self, variant: Variant, seed: int, rounds: int) -> None:
        rng = random.Random(seed)
        match = new_match(variant, rng.randrange(variant.players), redeal_cap=2, round_limit=rounds)
        while not match.is_over:
            state = None
            for _, transition in random_round(variant, rng, dealer=match.dealer, house_rules=SPRING):
                state = transition.state
            assert state is not None
            match = record_round(match, state).match
            assert sum(match.balances) == 0
        assert match.rounds_played == rounds


class TestStandings:
    @pytest.mark.parametrize(
        ("balances", "expected"),
        [
            ((4, -2, -2), [(1, 0, 4), (2, 1, -2), (2, 2, -2)]),
            ((-4, 2, 2), [(1, 1, 2), (1, 2, 2), (3, 0, -4)]),
            ((0, 0, 0), [(1, 0, 0), (1, 1, 0), (1, 2, 0)]),
            ((-9, 3, 3, 3), [(1, 1, 3), (1, 2, 3), (1, 3, 3), (4, 0, -9)]),
            ((6, -6, 2, -2), [(1, 0, 6), (2, 2, 2), (3, 3, -2), (4, 1, -6)]),
        ],
        ids=str,
    )
    def test_seats_are_ranked_by_balance_and_ties_share_a_place(
        self, balances: tuple[int, ...], expected: list[tuple[int, int, int]]
    ) -> None:
        variant = THREE_PLAYER if len(balances) == 3 else FOUR_PLAYER
        match = MatchState(variant, dealer=0, redeal_cap=10, balances=balances)
        assert standings(match) == expected

    def test_standings_after_real_rounds_put_the_winning_landlord_first(self, variant: Variant) -> None:
        match = record_round(new_match(variant, 0), scenario_round(variant, "landlord wins")).match
        places = standings(match)
        assert places[0][:2] == (1, 0)
        assert {place for place, _, _ in places[1:]} == {2}
