"""What a refusal says, how a round ends early, and the guards of the table's totals
(docs/rules.md sections 2, 4, 5 and 10).

A refusal's message is what a player reads (the service sends it as the status message), so it
names what is wrong: the seat, the phase, the amount, the cards. A round in play that a seat
forfeits is settled at the current stake against the forfeiting side; one abandoned settles
nothing but keeps what the auction decided.
"""

from __future__ import annotations

import pytest

from dizhu.rules import (
    Bid,
    Phase,
    Play,
    Refusal,
    Settlement,
    Variant,
    abandon,
    book_settlement,
    forfeit,
    new_match,
    record_round,
)
from tests.support.rounds import arranged_round, bid, cards_of, make_landlord, play, refusal_message, scenario_round

# Once per rules engine: a play's refusal depends on its reading, computed by each engine.
pytestmark = pytest.mark.usefixtures("each_engine")


class TestRefusalsSayWhatIsWrong:
    def test_a_seat_the_table_does_not_have_is_named(self, variant: Variant) -> None:
        reason, message = refusal_message(arranged_round(variant), Bid(variant.players, 1))
        assert reason is Refusal.INVALID_SEAT
        assert f"no seat {variant.players}" in message
        assert variant.name in message

    def test_a_bid_in_the_play_names_the_call_and_the_phase(self, variant: Variant) -> None:
        state = make_landlord(arranged_round(variant), 0, 1)
        reason, message = refusal_message(state, Bid(0, 2))
        assert reason is Refusal.WRONG_PHASE
        assert message == "cannot bid in the play phase"

    def test_a_play_in_the_auction_names_the_call_and_the_phase(self, variant: Variant) -> None:
        state = arranged_round(variant)
        reason, message = refusal_message(state, Play(state.turn, ()))
        assert reason is Refusal.WRONG_PHASE
        assert message == "cannot play cards in the auction phase"

    def test_out_of_turn_names_both_seats(self, variant: Variant) -> None:
        state = make_landlord(arranged_round(variant), 0, 1)
        reason, message = refusal_message(state, Play(1, ()))
        assert reason is Refusal.NOT_YOUR_TURN
        assert message == "it is seat 0's turn, not seat 1's"

    def test_a_bid_out_of_range_names_the_amount(self, variant: Variant) -> None:
        state = arranged_round(variant)
        reason, message = refusal_message(state, Bid(state.turn, 4))
        assert reason is Refusal.INVALID_BID
        assert message.endswith("not 4")

    def test_a_bid_too_low_names_the_bid_to_beat(self, variant: Variant) -> None:
        state = bid(arranged_round(variant), 2)
        reason, message = refusal_message(state, Bid(state.turn, 2))
        assert reason is Refusal.BID_TOO_LOW
        assert message == "a bid must be higher than 2"

    def test_the_leader_passing_is_told_to_lead(self, variant: Variant) -> None:
        state = make_landlord(arranged_round(variant), 0, 1)
        reason, message = refusal_message(state, Play(0, ()))
        assert reason is Refusal.MUST_LEAD
        assert message == "the leader of a trick cannot pass"

    def test_no_combination_names_the_cards(self, variant: Variant) -> None:
        state = make_landlord(arranged_round(variant, ("3 4",)), 0, 1)
        reason, message = refusal_message(state, Play(0, cards_of(state, 0, "3 4")))
        assert reason is Refusal.ILLEGAL_COMBINATION
        assert message.startswith("[3")
        assert "is no combination" in message

    def test_not_beating_names_both_plays(self, variant: Variant) -> None:
        state = make_landlord(arranged_round(variant, ("K", "3")), 0, 1)
        led = play(state, 0, "K").state
        reason, message = refusal_message(led, Play(1, cards_of(led, 1, "3")))
        assert reason is Refusal.DOES_NOT_BEAT
        assert "does not beat" in message
        assert message.index("3") < message.index("does not beat") < message.index("K")

    def test_a_card_listed_twice_is_told_apart_from_a_card_not_held(self, variant: Variant) -> None:
        state = make_landlord(arranged_round(variant, ("3 4", "K")), 0, 1)
        (held,) = cards_of(state, 0, "4")
        (other,) = cards_of(state, 1, "K")
        twice = refusal_message(state, Play(0, (held, held)))
        missing = refusal_message(state, Play(0, (other,)))
        assert twice == (Refusal.CARDS_NOT_IN_HAND, f"[{held} {held}] lists a card twice")
        assert missing == (Refusal.CARDS_NOT_IN_HAND, f"the hand holds no [{other}]")


class TestEndingsOfTheAuctionAndTheRound:
    def test_a_thrown_in_deal_keeps_every_pass_in_its_history(self, variant: Variant) -> None:
        state = bid(arranged_round(variant), *[0] * variant.players)
        assert state.phase is Phase.THROWN_IN
        assert state.passes == variant.players
        assert [(action.seat, action.amount) for action in state.history if isinstance(action, Bid)] == [
            ((arranged_round(variant).turn + n) % variant.players, 0) for n in range(variant.players)
        ]

    def test_a_finished_round_counts_no_pass_after_the_last_play(self, variant: Variant) -> None:
        state = scenario_round(variant, "landlord sweeps")
        assert state.phase is Phase.FINISHED
        assert state.passes == 0


class TestForfeit:
    @pytest.mark.parametrize(("seat", "landlord_won"), [(0, False), (1, True)], ids=["landlord", "farmer"])
    def test_the_forfeiting_side_loses_the_current_stake(self, variant: Variant, seat: int, landlord_won: bool) -> None:
        state = make_landlord(arranged_round(variant, ("3 3 3 3",)), 0, 2)
        state = play(state, 0, "3 3 3 3").state  # a bomb: in 3p it doubles the stake
        settled = forfeit(state, seat)
        stake = state.stake
        assert stake == (4 if variant.players == 3 else 2)
        farmer = -stake if landlord_won else stake
        assert settled == Settlement(
            stake=stake,
            deltas=(-farmer * (variant.players - 1), *([farmer] * (variant.players - 1))),
            landlord=0,
            landlord_won=landlord_won,
            doublings=state.doublings,
        )

    def test_a_forfeit_in_the_auction_settles_nothing(self, variant: Variant) -> None:
        state = bid(arranged_round(variant), 2)
        assert forfeit(state, 0) == Settlement.nothing(variant.players)

    def test_a_forfeit_after_the_round_ended_settles_nothing(self, variant: Variant) -> None:
        state = scenario_round(variant, "landlord wins")
        assert forfeit(state, 1) == Settlement.nothing(variant.players)


class TestAbandon:
    def test_an_abandoned_round_in_play_keeps_its_landlord_and_doublings_and_moves_nothing(
        self, variant: Variant
    ) -> None:
        rocket = "BJ RJ" if variant.players == 3 else "BJ BJ RJ RJ"
        state = make_landlord(arranged_round(variant, (rocket,)), 0, 3)
        state = play(state, 0, rocket).state  # the rocket doubles in both variants
        assert abandon(state) == Settlement(
            stake=0, deltas=(0,) * variant.players, landlord=0, landlord_won=None, doublings=1
        )

    def test_an_abandoned_auction_has_no_landlord(self, variant: Variant) -> None:
        state = bid(arranged_round(variant), 1)
        assert abandon(state) == Settlement(stake=0, deltas=(0,) * variant.players)


class TestTheTotalsGuards:
    def test_booking_after_the_last_round_is_refused(self, variant: Variant) -> None:
        match = book_settlement(new_match(variant, 0, round_limit=1), Settlement.nothing(variant.players))
        assert match.is_over
        with pytest.raises(ValueError, match=r"^the table has played its last round$"):
            book_settlement(match, Settlement.nothing(variant.players))
        with pytest.raises(ValueError, match=r"^the table has played its last round$"):
            record_round(match, scenario_round(variant, "landlord wins"))

    def test_a_settlement_for_another_number_of_seats_is_refused(self, variant: Variant) -> None:
        with pytest.raises(ValueError, match="zip"):
            book_settlement(new_match(variant, 0), Settlement.nothing(variant.players + 1))

    @pytest.mark.parametrize("setting", ["redeal_cap", "round_limit"])
    def test_a_negative_cap_or_limit_says_so(self, variant: Variant, setting: str) -> None:
        with pytest.raises(ValueError, match=r"^the redeal cap and round limit cannot be negative$"):
            new_match(variant, 0, **{setting: -1})
