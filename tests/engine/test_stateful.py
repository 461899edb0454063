"""A hypothesis state machine drives both engines through rounds with random hands and actions.

Each step is one action, legal or not, applied to a Python ``RoundState`` and to the native
engine's round: both must accept it with the same events and reach the same state, or refuse it
for the same reason.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from dizhu import engine
from dizhu.rules import (
    FOUR_PLAYER,
    THREE_PLAYER,
    Bid,
    HouseRules,
    Play,
    RoundState,
    deal,
    legal_plays,
    make_deck,
    pick_cards,
    settle,
    start_round,
)
from tests.support.differential import apply_to_both, native_state, python_state, start_native_round


class BothEngines(RuleBasedStateMachine):
    state: RoundState
    native: Any

    @initialize(
        variant=st.sampled_from([THREE_PLAYER, FOUR_PLAYER]),
        seed=st.binary(min_size=32, max_size=32),
        dealer=st.integers(0, 3),
        spring=st.booleans(),
    )
    def deal_a_round(self, variant: Any, seed: bytes, dealer: int, spring: bool) -> None:
        with engine.using("python"):
            self.state = start_round(deal(seed, variant, dealer % variant.players), HouseRules(spring))
        with engine.using("native"):
            self.native = start_native_round(self.state, spring)

    def _apply(self, action: Bid | Play) -> None:
        with engine.using("python"):
            python_answer, native_answer, self.state = apply_to_both(self.state, self.native, action)
        assert python_answer == native_answer, action

    @rule(seat=st.integers(-1, 4), amount=st.integers(-1, 4))
    def bid(self, seat: int, amount: int) -> None:
        self._apply(Bid(seat, amount))

    @rule(data=st.data())
    def bid_in_turn(self, data: st.DataObject) -> None:
        self._apply(Bid(self.state.turn, data.draw(st.integers(0, 3))))

    @precondition(lambda self: legal_plays(self.state))
    @rule(data=st.data())
    def play_a_legal_play(self, data: st.DataObject) -> None:
        play = data.draw(st.sampled_from(legal_plays(self.state)))
        self._apply(Play(self.state.turn, pick_cards(self.state.hands[self.state.turn], play)))

    @rule(seat=st.integers(0, 3), data=st.data())
    def play_any_cards(self, seat: int, data: st.DataObject) -> None:
        deck = make_deck(self.state.variant.decks)
        held = self.state.hands[self.state.turn]
        cards = data.draw(
            st.lists(st.sampled_from(held or deck), max_size=6) | st.lists(st.sampled_from(deck), max_size=3)
        )
        self._apply(Play(seat % self.state.variant.players, tuple(cards)))

    @invariant()
    def both_engines_are_in_the_same_state(self) -> None:
        assert python_state(self.state) == native_state(self.native)
        if self.state.is_over:
            settled = settle(self.state)
            stake, deltas, landlord, landlord_won, doublings, spring = self.native.settle()
            assert (settled.stake, settled.deltas, settled.landlord) == (stake, tuple(deltas), landlord)
            assert (settled.landlord_won, settled.doublings, settled.spring) == (landlord_won, doublings, spring)


BothEngines.TestCase.settings = settings(
    max_examples=60, stateful_step_count=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
TestBothEngines = BothEngines.TestCase
