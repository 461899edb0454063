"""Properties of whole random rounds, both variants (docs/rules.md sections 3, 5, 8, 9).

Every round is dealt from a seed and played to the end by ``random_round``: players that pick
uniformly among their legal actions, through the same public API a referee uses.
"""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dizhu.rules import (
    Bid,
    Card,
    HouseRules,
    Phase,
    Play,
    RoundState,
    Variant,
    apply,
    from_bytes,
    from_plain,
    make_deck,
    settle,
    start_round,
    to_bytes,
    to_plain,
)
from dizhu.rules.random_play import random_round
from dizhu.rules.serialization import action_to_plain
from tests.support.rounds import scenario_round

# Once per rules engine: rounds read and generate their plays with the engine in use.
pytestmark = pytest.mark.usefixtures("each_engine")

rng_seeds = st.integers(0, 2**64)
house_rules = st.builds(HouseRules, spring=st.booleans())


def played_round(variant: Variant, seed: int, dealer_pick: int, rules: HouseRules) -> list[RoundState]:
    """Every state of one random round, the state before the first bid included."""
    rng = random.Random(seed)
    dealer = dealer_pick % variant.players
    states = [transition.state for _, transition in random_round(variant, rng, dealer=dealer, house_rules=rules)]
    return [start_round(states[0].deal, rules), *states]


def played_cards(state: RoundState) -> list[Card]:
    return [card for action in state.history if isinstance(action, Play) for card in action.cards]


class TestCardsAreAccountedFor:
    @given(seed=rng_seeds, dealer=st.integers(0, 3), rules=house_rules)
    def test_hands_kitty_and_played_cards_always_make_up_the_deck(
        self, variant: Variant, seed: int, dealer: int, rules: HouseRules
    ) -> None:
        deck = Counter(make_deck(variant.decks))
        for state in played_round(variant, seed, dealer, rules):
            in_hands = [card for hand in state.hands for card in hand]
            kitty = list(state.deal.kitty) if state.landlord is None else []
            every_card = Counter(in_hands + kitty + played_cards(state))
            assert every_card == deck
            assert max(every_card.values()) == 1

    @given(seed=rng_seeds, dealer=st.integers(0, 3))
    def test_each_hand_shrinks_by_exactly_the_cards_its_seat_played(
        self, variant: Variant, seed: int, dealer: int
    ) -> None:
        final = played_round(variant, seed, dealer, HouseRules())[-1]
        for seat in range(variant.players):
            played = sum(len(a.cards) for a in final.history if isinstance(a, Play) and a.seat == seat)
            dealt = variant.landlord_hand_size if seat == final.landlord else variant.hand_size
            assert len(final.hands[seat]) == dealt - played

    @given(seed=rng_seeds, dealer=st.integers(0, 3))
    def test_hands_stay_sorted_by_rank(self, variant: Variant, seed: int, dealer: int) -> None:
        for state in played_round(variant, seed, dealer, HouseRules()):
            assert all(list(hand) == sorted(hand) for hand in state.hands)


class TestRoundsEnd:
    @given(seed=rng_seeds, dealer=st.integers(0, 3), rules=house_rules)
    def test_a_round_ends_thrown_in_or_with_one_empty_hand(
        self, variant: Variant, seed: int, dealer: int, rules: HouseRules
    ) -> None:
        final = played_round(variant, seed, dealer, rules)[-1]
        assert final.is_over
        if final.phase is Phase.THROWN_IN:
            assert all(isinstance(action, Bid) and action.is_pass for action in final.history)
            assert len(final.history) == variant.players
        else:
            assert [seat for seat, hand in enumerate(final.hands) if not hand] == [final.winner]

    @given(seed=rng_seeds, dealer=st.integers(0, 3), rules=house_rules)
    def test_every_settlement_sums_to_zero(self, variant: Variant, seed: int, dealer: int, rules: HouseRules) -> None:
        final = played_round(variant, seed, dealer, rules)[-1]
        settlement = settle(final)
        assert sum(settlement.deltas) == 0
        assert len(settlement.deltas) == variant.players
        if final.phase is Phase.FINISHED:
            assert settlement.stake == final.stake << settlement.spring
            assert settlement.deltas[final.landlord] != 0

    @given(seed=rng_seeds, dealer=st.integers(0, 3))
    def test_the_doublings_count_the_doubling_plays(self, variant: Variant, seed: int, dealer: int) -> None:
        final = played_round(variant, seed, dealer, HouseRules())[-1]
        doubling = 0
        state = start_round(final.deal)
        for action in final.history:
            transition = apply(state, action)
            doubling += sum(getattr(event, "doubled", False) for event in transition.events)
            state = transition.state
        assert final.doublings == doubling


class TestSerialization:
    @given(seed=rng_seeds, dealer=st.integers(0, 3), rules=house_rules)
    def test_every_state_round_trips_through_plain_data_and_bytes(
        self, variant: Variant, seed: int, dealer: int, rules: HouseRules
    ) -> None:
        for state in played_round(variant, seed, dealer, rules):
            assert from_plain(to_plain(state)) == state
            assert from_bytes(to_bytes(state)) == state

    @given(seed=rng_seeds, dealer=st.integers(0, 3))
    def test_serialising_is_deterministic(self, variant: Variant, seed: int, dealer: int) -> None:
        final = played_round(variant, seed, dealer, HouseRules())[-1]
        data = to_bytes(final)
        assert to_bytes(from_bytes(data)) == data
        assert json.loads(data) == json.loads(json.dumps(to_plain(final)))  # tuples and lists read back alike

    @given(seed=rng_seeds, dealer=st.integers(0, 3))
    def test_the_history_can_be_left_out_and_added_entry_by_entry(
        self, variant: Variant, seed: int, dealer: int
    ) -> None:
        for state in played_round(variant, seed, dealer, HouseRules()):
            plain = to_plain(state, history=False)
            assert plain["history"] == []
            assert {**plain, "history": [action_to_plain(action) for action in state.history]} == to_plain(state)

    def test_an_arranged_deal_without_a_seed_round_trips(self, variant: Variant) -> None:
        state = scenario_round(variant, "landlord wins", house_rules=HouseRules(spring=True))
        assert state.deal.seed is None
        assert from_bytes(to_bytes(state)) == state

    def test_a_foreign_format_version_is_refused(self, variant: Variant) -> None:
        plain = {**to_plain(scenario_round(variant, "farmers win")), "v": 99}
        with pytest.raises(ValueError, match="unsupported round state format 99"):
            from_plain(plain)


class TestReplay:
    @given(seed=rng_seeds, dealer=st.integers(0, 3), rules=house_rules)
    def test_replaying_the_history_from_the_deal_reproduces_the_final_state(
        self, variant: Variant, seed: int, dealer: int, rules: HouseRules
    ) -> None:
        final = played_round(variant, seed, dealer, rules)[-1]
        state = start_round(final.deal, rules)
        for action in final.history:
            state = apply(state, action).state
        assert state == final

    @given(seed=rng_seeds, dealer=st.integers(0, 3))
    def test_the_same_generator_plays_the_same_round(self, variant: Variant, seed: int, dealer: int) -> None:
        first = played_round(variant, seed, dealer, HouseRules())
        assert played_round(variant, seed, dealer, HouseRules()) == first
