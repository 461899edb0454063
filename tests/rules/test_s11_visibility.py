"""What each viewer sees of a round (docs/rules.md section 11), both variants."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dizhu.rules import (
    Card,
    Phase,
    Play,
    RoundState,
    Variant,
    commitment,
    deal,
    start_round,
    view_for,
)
from dizhu.rules.random_play import random_round
from tests.support.rounds import arranged_round, bid, cards_in, make_landlord, play, scenario_round


def viewers(variant: Variant) -> list[int | None]:
    """A spectator, then every seat."""
    return [None, *range(variant.players)]


def public_cards(state: RoundState) -> set[Card]:
    """Cards of current hands that everyone may see: the face-up card, the kitty once taken."""
    public = {state.deal.face_up}
    if state.landlord is not None:
        public.update(state.deal.kitty)
    return public


def leaked(state: RoundState, viewer: int | None, memo: dict[int, Any] | None = None) -> set[Card]:
    """Cards of another seat's current hand that are not public yet appear in ``viewer``'s view."""
    seen = cards_in(view_for(state, viewer), memo)
    others = {card for seat, hand in enumerate(state.hands) if seat != viewer for card in hand}
    return (seen & others) - public_cards(state)


def finished_seeded_round(variant: Variant) -> RoundState:
    """The end of the first random round (from a fixed generator) that is not thrown in."""
    rng = random.Random(7)
    while True:
        state = start_round(deal(rng.randbytes(32), variant, 0))
        for _, transition in random_round(variant, rng):
            state = transition.state
        if state.phase is Phase.FINISHED:
            return state


class TestSpectator:
    def test_a_spectator_sees_no_hand(self, variant: Variant) -> None:
        for state in (arranged_round(variant), make_landlord(arranged_round(variant), 0)):
            view = view_for(state, None)
            assert (view.viewer, view.hand, view.dealt_hands, view.seed) == (None, None, None, None)

    def test_a_spectator_sees_how_many_cards_each_seat_holds(self, variant: Variant) -> None:
        state = make_landlord(arranged_round(variant), 1)
        expected = tuple(
            variant.landlord_hand_size if seat == 1 else variant.hand_size for seat in range(variant.players)
        )
        assert view_for(state, None).hand_sizes == expected

    def test_a_spectator_sees_every_public_fact(self, variant: Variant) -> None:
        dealt = deal(bytes(range(32)), variant, 1)
        state = bid(start_round(dealt), 2)
        view = view_for(state, None)
        assert (view.dealer, view.face_up, view.face_up_seat) == (1, dealt.face_up, dealt.face_up_seat)
        assert view.commitment == commitment(bytes(range(32)))
        assert (view.bid, view.bidder, view.history, view.phase, view.turn) == (
            2,
            dealt.face_up_seat,
            state.history,
            Phase.AUCTION,
            state.turn,
        )


class TestSeat:
    def test_a_seat_sees_its_own_hand(self, variant: Variant) -> None:
        state = arranged_round(variant)
        for seat in range(variant.players):
            assert view_for(state, seat).hand == state.hands[seat]

    def test_a_seat_sees_no_other_seats_card_but_the_face_up_one(self, variant: Variant) -> None:
        state = arranged_round(variant, face_up_seat=1)
        for seat in range(variant.players):
            assert leaked(state, seat) == set()
        assert state.deal.face_up in set(cards_in(view_for(state, 0)))

    def test_a_seat_that_does_not_exist_has_no_view(self, variant: Variant) -> None:
        for seat in (-1, variant.players):
            with pytest.raises(ValueError, match="no seat"):
                view_for(arranged_round(variant), seat)

    def test_played_cards_are_public(self, variant: Variant) -> None:
        state = make_landlord(arranged_round(variant, ("3 3",)), 0)
        state = play(state, 0, "3 3").state
        played = state.history[-1]
        assert isinstance(played, Play)
        for viewer in viewers(variant):
            view = view_for(state, viewer)
            assert set(played.cards) <= set(cards_in(view.history))
            assert view.last_play == state.last_play


class TestKitty:
    def test_the_kitty_is_hidden_during_the_auction(self, variant: Variant) -> None:
        state = bid(arranged_round(variant), 1)
        for viewer in viewers(variant):
            view = view_for(state, viewer)
            assert view.kitty is None
            assert not set(cards_in(view)) & set(state.deal.kitty)

    def test_the_kitty_is_public_once_the_landlord_takes_it(self, variant: Variant) -> None:
        state = make_landlord(arranged_round(variant), 2)
        assert all(view_for(state, viewer).kitty == state.deal.kitty for viewer in viewers(variant))


class TestAfterTheRound:
    @pytest.mark.parametrize("name", ["landlord sweeps", "farmers win"])
    def test_every_dealt_hand_is_public_after_the_round(self, variant: Variant, name: str) -> None:
        state = scenario_round(variant, name)
        for viewer in viewers(variant):
            view = view_for(state, viewer)
            assert (view.dealt_hands, view.kitty) == (state.deal.hands, state.deal.kitty)

    def test_the_seed_is_revealed_after_a_finished_round(self, variant: Variant) -> None:
        state = finished_seeded_round(variant)
        assert state.phase is Phase.FINISHED
        for viewer in viewers(variant):
            view = view_for(state, viewer)
            assert view.seed == state.deal.seed
            assert view.commitment == commitment(view.seed)

    def test_a_thrown_in_round_reveals_its_seed_and_hands(self, variant: Variant) -> None:
        dealt = deal(bytes(range(32)), variant, 0)
        state = bid(start_round(dealt), *[0] * variant.players)
        view = view_for(state, None)
        assert (view.phase, view.seed, view.dealt_hands) == (Phase.THROWN_IN, dealt.seed, dealt.hands)

    def test_the_seed_stays_secret_while_the_round_is_played(self, variant: Variant) -> None:
        state = make_landlord(start_round(deal(bytes(32), variant, 0)), 1)
        assert all(view_for(state, viewer).seed is None for viewer in viewers(variant))


class TestNoLeaks:
    @given(seed=st.integers(0, 2**64), data=st.data())
    def test_no_view_ever_shows_another_seats_private_card(
        self, variant: Variant, seed: int, data: st.DataObject
    ) -> None:
        dealer = data.draw(st.integers(0, variant.players - 1), label="dealer")
        rng = random.Random(seed)
        states = [transition.state for _, transition in random_round(variant, rng, dealer=dealer)]
        states.insert(0, start_round(states[0].deal))
        memo: dict[int, Any] = {}  # the states stay alive, so object ids stay valid
        for state in states:
            if state.is_over:
                continue
            for viewer in viewers(variant):
                assert leaked(state, viewer, memo) == set(), f"viewer {viewer} after {state.history}"
