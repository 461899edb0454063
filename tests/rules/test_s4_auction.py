"""The auction (docs/rules.md section 4), both variants.

Seats are named relative to the first bidder: ``first`` drew the face-up card, ``first + 1``
bids next, and so on, so that every scenario runs unchanged in 3p and 4p.
"""

from __future__ import annotations

import pytest

from dizhu.rules import (
    Bid,
    BidMade,
    IllegalAction,
    LandlordChosen,
    Phase,
    Play,
    Refusal,
    ThrownIn,
    Variant,
    apply,
    deal,
    legal_bids,
    start_round,
    view_for,
)
from tests.support.rounds import arranged_round, bid, make_landlord, refusal


class TestFirstBidder:
    def test_the_seat_that_drew_the_face_up_card_bids_first(self, variant: Variant) -> None:
        for face_up_seat in range(variant.players):
            state = arranged_round(variant, face_up_seat=face_up_seat, dealer=0)
            assert (state.phase, state.turn) == (Phase.AUCTION, face_up_seat)

    def test_a_seeded_round_starts_with_the_face_up_seat(self, variant: Variant) -> None:
        for dealer in range(variant.players):
            dealt = deal(bytes(range(32)), variant, dealer)
            assert start_round(dealt).turn == dealt.face_up_seat

    def test_nobody_holds_the_kitty_before_the_auction_ends(self, variant: Variant) -> None:
        state = arranged_round(variant)
        assert [len(hand) for hand in state.hands] == [variant.hand_size] * variant.players
        assert (state.bid, state.bidder, state.landlord) == (0, None, None)


class TestBidding:
    def test_every_bid_is_open_to_the_first_bidder(self, variant: Variant) -> None:
        assert legal_bids(arranged_round(variant)) == [0, 1, 2, 3]

    def test_after_a_bid_only_higher_bids_or_a_pass_are_legal(self, variant: Variant) -> None:
        assert legal_bids(bid(arranged_round(variant), 1)) == [0, 2, 3]
        assert legal_bids(bid(arranged_round(variant), 2)) == [0, 3]

    @pytest.mark.parametrize(("highest", "low"), [(1, 1), (2, 1), (2, 2)])
    def test_a_bid_not_higher_than_the_highest_is_too_low(self, variant: Variant, highest: int, low: int) -> None:
        state = bid(arranged_round(variant), highest)
        assert refusal(state, Bid(state.turn, low)) is Refusal.BID_TOO_LOW

    def test_a_bid_made_after_passes_still_must_be_higher(self, variant: Variant) -> None:
        state = bid(arranged_round(variant), 2, 0)
        assert refusal(state, Bid(state.turn, 1)) is Refusal.BID_TOO_LOW

    def test_a_higher_bid_takes_over_and_passes_the_turn_on(self, variant: Variant) -> None:
        transition = apply(bid(arranged_round(variant), 1), Bid(1, 2))
        state = transition.state
        assert transition.events == (BidMade(1, 2),)
        assert (state.bid, state.bidder, state.turn, state.phase) == (2, 1, 2, Phase.AUCTION)

    def test_a_seat_that_passed_may_bid_when_the_turn_returns(self, variant: Variant) -> None:
        # Seat 0 passes, seat 1 bids 1, the rest pass back round to seat 0 but one short of closing.
        state = bid(arranged_round(variant), 0, 1, *[0] * (variant.players - 2))
        assert (state.turn, state.phase) == (0, Phase.AUCTION)
        state = bid(state, 2)
        assert (state.bid, state.bidder) == (2, 0)

    def test_every_action_is_recorded_in_the_history(self, variant: Variant) -> None:
        state = bid(arranged_round(variant), 0, 1)
        assert state.history == (Bid(0, 0), Bid(1, 1))


class TestAuctionEnd:
    @pytest.mark.parametrize("passes_first", [0, 1, 2])
    def test_a_bid_of_three_ends_the_auction_at_once(self, variant: Variant, passes_first: int) -> None:
        state = bid(arranged_round(variant), *[0] * passes_first)
        transition = apply(state, Bid(passes_first, 3))
        assert transition.state.phase is Phase.PLAY
        assert transition.state.landlord == passes_first
        assert transition.events[0] == BidMade(passes_first, 3)
        assert isinstance(transition.events[1], LandlordChosen)

    def test_a_bid_followed_by_every_other_seat_passing_ends_the_auction(self, variant: Variant) -> None:
        state = bid(arranged_round(variant), 1, *[0] * (variant.passes_to_close - 1))
        assert state.phase is Phase.AUCTION
        transition = apply(state, Bid(state.turn, 0))
        assert transition.state.phase is Phase.PLAY
        assert transition.events == (
            BidMade(variant.passes_to_close, 0),
            LandlordChosen(0, 1, transition.state.deal.kitty),
        )

    def test_passes_to_close_is_every_other_player(self, variant: Variant) -> None:
        assert variant.passes_to_close == {"3p": 2, "4p": 3}[variant.name]

    def test_passes_before_the_first_bid_do_not_count_towards_closing(self, variant: Variant) -> None:
        last = variant.players - 1
        state = bid(arranged_round(variant), *[0] * last, 1)
        assert (state.phase, state.bidder, state.passes) == (Phase.AUCTION, last, 0)
        state = bid(state, *[0] * variant.passes_to_close)
        assert (state.phase, state.landlord) == (Phase.PLAY, last)

    def test_a_raise_restarts_the_count_of_passes(self, variant: Variant) -> None:
        state = bid(arranged_round(variant), 1, *[0] * (variant.passes_to_close - 1))
        state = bid(state, 2)
        assert (state.phase, state.passes, state.bidder) == (Phase.AUCTION, 0, variant.players - 1)
        state = bid(state, *[0] * variant.passes_to_close)
        assert (state.landlord, state.bid) == (variant.players - 1, 2)

    def test_the_highest_bidder_wins_even_if_outbid_seats_bid_later(self, variant: Variant) -> None:
        # Seat 0 bids 1, seat 1 bids 2, everyone else passes (seat 0 included).
        state = bid(arranged_round(variant), 1, 2, *[0] * variant.passes_to_close)
        assert (state.landlord, state.bid) == (1, 2)

    def test_everyone_passing_before_any_bid_throws_the_cards_in(self, variant: Variant) -> None:
        state = bid(arranged_round(variant), *[0] * (variant.players - 1))
        transition = apply(state, Bid(state.turn, 0))
        assert transition.events == (BidMade(variant.players - 1, 0), ThrownIn())
        assert transition.state.phase is Phase.THROWN_IN
        assert transition.state.is_over
        assert transition.state.landlord is None
        assert transition.state.hands == state.hands


class TestLandlord:
    @pytest.mark.parametrize("amount", [1, 2, 3])
    def test_the_landlord_takes_the_kitty(self, variant: Variant, amount: int) -> None:
        before = arranged_round(variant, face_up_seat=1)
        state = make_landlord(before, 2, amount)
        assert len(state.hands[2]) == variant.landlord_hand_size == {"3p": 20, "4p": 33}[variant.name]
        assert sorted(state.hands[2]) == sorted(before.hands[2] + before.deal.kitty)
        assert all(state.hands[seat] == before.hands[seat] for seat in range(variant.players) if seat != 2)

    def test_the_kitty_is_public_in_the_landlord_chosen_event(self, variant: Variant) -> None:
        state = arranged_round(variant, kitty="RJ 2")
        transition = apply(state, Bid(0, 3))
        assert transition.events[-1] == LandlordChosen(seat=0, bid=3, kitty=state.deal.kitty)
        assert {card.rank.symbol for card in state.deal.kitty} >= {"RJ", "2"}

    def test_the_kitty_is_hidden_from_views_until_the_landlord_takes_it(self, variant: Variant) -> None:
        state = bid(arranged_round(variant), 1)
        assert all(view_for(state, viewer).kitty is None for viewer in [None, *range(variant.players)])
        state = bid(state, *[0] * variant.passes_to_close)
        assert all(view_for(state, viewer).kitty == state.deal.kitty for viewer in [None, *range(variant.players)])

    def test_the_landlord_leads_the_first_trick(self, variant: Variant) -> None:
        state = make_landlord(arranged_round(variant), 1, 2)
        assert (state.phase, state.turn, state.landlord, state.bid) == (Phase.PLAY, 1, 1, 2)
        assert (state.last_play, state.last_player, state.passes, state.stake) == (None, None, 0, 2)

    def test_no_bids_are_legal_once_the_auction_is_over(self, variant: Variant) -> None:
        assert legal_bids(make_landlord(arranged_round(variant), 0)) == []


class TestRefusals:
    def test_a_bid_out_of_turn_is_refused(self, variant: Variant) -> None:
        state = arranged_round(variant)
        assert refusal(state, Bid(1, 1)) is Refusal.NOT_YOUR_TURN

    def test_a_pass_out_of_turn_is_refused(self, variant: Variant) -> None:
        state = arranged_round(variant)
        assert refusal(state, Bid(variant.players - 1, 0)) is Refusal.NOT_YOUR_TURN

    @pytest.mark.parametrize("amount", [4, -1, 100])
    def test_a_bid_outside_zero_to_three_is_invalid(self, variant: Variant, amount: int) -> None:
        assert refusal(arranged_round(variant), Bid(0, amount)) is Refusal.INVALID_BID

    def test_a_bid_during_play_is_in_the_wrong_phase(self, variant: Variant) -> None:
        state = make_landlord(arranged_round(variant), 0)
        assert refusal(state, Bid(0, 3)) is Refusal.WRONG_PHASE

    def test_playing_cards_during_the_auction_is_in_the_wrong_phase(self, variant: Variant) -> None:
        state = arranged_round(variant)
        assert refusal(state, Play(0, state.hands[0][:1])) is Refusal.WRONG_PHASE
        assert refusal(state, Play(0)) is Refusal.WRONG_PHASE

    def test_a_bid_after_a_throw_in_is_in_the_wrong_phase(self, variant: Variant) -> None:
        state = bid(arranged_round(variant), *[0] * variant.players)
        assert refusal(state, Bid(state.turn, 1)) is Refusal.WRONG_PHASE

    @pytest.mark.parametrize("where", ["below", "above"])
    def test_a_seat_that_does_not_exist_is_invalid(self, variant: Variant, where: str) -> None:
        seat = -1 if where == "below" else variant.players
        assert refusal(arranged_round(variant), Bid(seat, 1)) is Refusal.INVALID_SEAT

    def test_a_refusal_says_why_in_its_message(self, variant: Variant) -> None:
        with pytest.raises(IllegalAction, match="NOT_YOUR_TURN: it is seat 0's turn, not seat 1's"):
            apply(arranged_round(variant), Bid(1, 1))
