"""Play: leading, following, closing tricks and going out (docs/rules.md section 5), both variants.

Seat 0 is the landlord (it draws the face-up card and bids 3). The hands hold at least the
ranks spelled below; the rest of each hand is filled from the remaining deck.
"""

from __future__ import annotations

import pytest

from dizhu.rules import (
    THREE_PLAYER,
    Bid,
    Card,
    CardsPlayed,
    CombinationKind,
    IllegalAction,
    Phase,
    Play,
    Rank,
    Refusal,
    RoundFinished,
    RoundState,
    Suit,
    TrickClosed,
    Variant,
    apply,
    classify,
    legal_plays,
    pick_cards,
)
from tests.support.rounds import (
    SCENARIOS,
    advance,
    arranged_round,
    cards_of,
    make_landlord,
    play,
    refusal,
    scenario_round,
)

# Once per rules engine: plays are read, and follows listed, by each engine.
pytestmark = pytest.mark.usefixtures("each_engine")

#: Landlord, then the farmers (4p uses all four).
HANDS = ("3 3 5 7 9 J", "4 4 5 6 8 T", "4 6 8 T", "6 8 T")


def opening(variant: Variant) -> RoundState:
    """Seat 0 is the landlord at 3 and leads the first trick."""
    return make_landlord(arranged_round(variant, HANDS[: variant.players]), 0, 3)


def after_lead(variant: Variant, ranks: str = "5") -> RoundState:
    """Seat 0 has led ``ranks``; seat 1 is to follow."""
    return play(opening(variant), 0, ranks).state


def close_trick(state: RoundState) -> RoundState:
    """Every seat passes until the trick closes."""
    while state.last_play is not None:
        state = apply(state, Play(state.turn)).state
    return state


class TestLeading:
    def test_the_leader_cannot_pass(self, variant: Variant) -> None:
        assert refusal(opening(variant), Play(0)) is Refusal.MUST_LEAD

    def test_the_leader_may_play_any_combination(self, variant: Variant) -> None:
        state = opening(variant)
        transition = play(state, 0, "3 3")
        cards = cards_of(state, 0, "3 3")
        assert transition.events == (CardsPlayed(0, cards, classify(cards, variant)),)
        after = transition.state
        assert (after.turn, after.last_player, after.last_play.kind) == (1, 0, CombinationKind.PAIR)
        assert not set(cards) & set(after.hands[0])
        assert len(after.hands[0]) == variant.landlord_hand_size - 2
        assert after.plays_made[0] == 1
        assert after.history[-1] == Play(0, cards)

    def test_the_leader_of_a_later_trick_cannot_pass_either(self, variant: Variant) -> None:
        state = close_trick(after_lead(variant))
        assert state.turn == 0
        assert refusal(state, Play(0)) is Refusal.MUST_LEAD

    def test_every_legal_play_of_the_leader_is_accepted(self, variant: Variant) -> None:
        state = opening(variant)
        plays = legal_plays(state)
        assert plays
        assert all(play.size > 0 for play in plays)
        for combination in plays[:: max(1, len(plays) // 25)]:
            cards = pick_cards(state.hands[0], combination)
            assert apply(state, Play(0, cards)).state.last_play == combination


class TestFollowing:
    def test_a_follower_may_pass(self, variant: Variant) -> None:
        transition = apply(after_lead(variant), Play(1))
        assert transition.events == (CardsPlayed(1, (), None),)
        assert (transition.state.turn, transition.state.passes) == (2, 1)

    def test_a_higher_card_of_the_same_type_beats_the_last_play(self, variant: Variant) -> None:
        state = play(after_lead(variant), 1, "6").state
        assert (state.last_player, state.last_play.main_rank, state.turn) == (1, Rank.SIX, 2)

    @pytest.mark.parametrize(
        ("lead", "follow"),
        [("5", "4"), ("5", "5"), ("5", "4 4"), ("3 3", "T"), ("7", "6")],
        ids=["5 <- 4 lower", "5 <- 5 equal", "5 <- 44 other type", "33 <- T other type", "7 <- 6 lower"],
    )
    def test_a_play_that_does_not_beat_the_last_is_refused(self, variant: Variant, lead: str, follow: str) -> None:
        state = after_lead(variant, lead)
        assert refusal(state, Play(1, cards_of(state, 1, follow))) is Refusal.DOES_NOT_BEAT

    def test_a_follow_that_is_no_combination_is_refused_as_such(self, variant: Variant) -> None:
        state = after_lead(variant, "3 3")
        assert refusal(state, Play(1, cards_of(state, 1, "4 4 6"))) is Refusal.ILLEGAL_COMBINATION

    def test_a_higher_pair_beats_a_pair(self, variant: Variant) -> None:
        state = play(after_lead(variant, "3 3"), 1, "4 4").state
        assert (state.last_player, state.last_play.kind, state.last_play.main_rank) == (
            1,
            CombinationKind.PAIR,
            Rank.FOUR,
        )

    def test_a_seat_that_passed_may_play_again_in_the_same_trick(self, variant: Variant) -> None:
        state = apply(after_lead(variant), Play(1)).state
        state = play(state, 2, "6").state
        # Everybody else passes back round to seat 1, one pass short of closing the trick.
        while state.turn != 1:
            state = apply(state, Play(state.turn)).state
        assert state.last_player == 2
        state = play(state, 1, "8").state
        assert (state.last_player, state.last_play.main_rank) == (1, Rank.EIGHT)


class TestTrickClosing:
    def test_the_trick_closes_after_every_other_seat_passes(self, variant: Variant) -> None:
        state = after_lead(variant)
        for _ in range(variant.passes_to_close - 1):
            state = apply(state, Play(state.turn)).state
        assert (state.passes, state.last_player) == (variant.passes_to_close - 1, 0)
        transition = apply(state, Play(state.turn))
        assert transition.events == (CardsPlayed(variant.players - 1, (), None), TrickClosed(leader=0))
        closed = transition.state
        assert (closed.turn, closed.last_play, closed.last_player, closed.passes) == (0, None, None, 0)

    def test_whoever_played_last_leads_the_next_trick(self, variant: Variant) -> None:
        state = play(after_lead(variant), 1, "6").state
        for _ in range(variant.passes_to_close):
            transition = apply(state, Play(state.turn))
            state = transition.state
        assert transition.events[-1] == TrickClosed(leader=1)
        assert (state.turn, state.last_play) == (1, None)

    def test_passes_to_close_is_two_in_3p_and_three_in_4p(self, variant: Variant) -> None:
        assert variant.passes_to_close == variant.players - 1 == {"3p": 2, "4p": 3}[variant.name]


class TestRoundEnd:
    @pytest.mark.parametrize("name", ["landlord sweeps", "landlord wins"])
    def test_the_landlord_going_out_wins_for_the_landlord(self, variant: Variant, name: str) -> None:
        state = scenario_round(variant, name)
        assert (state.phase, state.winner, state.hands[0]) == (Phase.FINISHED, 0, ())
        assert state.is_over

    @pytest.mark.parametrize("name", ["farmers sweep", "farmers win"])
    def test_a_farmer_going_out_wins_for_the_farmers(self, variant: Variant, name: str) -> None:
        state = scenario_round(variant, name)
        assert (state.phase, state.winner, state.hands[1]) == (Phase.FINISHED, 1, ())
        assert len(state.hands[0]) > 0

    @pytest.mark.parametrize(("name", "winner"), [("landlord sweeps", 0), ("farmers sweep", 1)])
    def test_the_last_card_ends_the_round_with_a_round_finished_event(
        self, variant: Variant, name: str, winner: int
    ) -> None:
        scenario = SCENARIOS[name][variant.name]
        state = make_landlord(arranged_round(variant, scenario.hands, scenario.kitty), 0, 1)
        for seat, ranks in scenario.steps[:-1]:
            state = advance(state, seat, ranks).state
        seat, ranks = scenario.steps[-1]
        transition = advance(state, seat, ranks)
        assert transition.events[-1] == RoundFinished(seat=winner, landlord_won=winner == 0)
        assert transition.state.turn == winner

    def test_nothing_can_be_played_once_the_round_is_over(self, variant: Variant) -> None:
        state = scenario_round(variant, "landlord sweeps")
        assert legal_plays(state) == []
        assert refusal(state, Play(1)) is Refusal.WRONG_PHASE
        assert refusal(state, Play(1, state.hands[1][:1])) is Refusal.WRONG_PHASE
        assert refusal(state, Bid(1, 1)) is Refusal.WRONG_PHASE


class TestRefusals:
    def test_playing_out_of_turn_is_refused(self, variant: Variant) -> None:
        state = opening(variant)
        assert refusal(state, Play(1, cards_of(state, 1, "4"))) is Refusal.NOT_YOUR_TURN
        assert refusal(after_lead(variant), Play(2)) is Refusal.NOT_YOUR_TURN

    def test_playing_another_seats_card_is_refused(self, variant: Variant) -> None:
        state = opening(variant)
        assert refusal(state, Play(0, cards_of(state, 1, "4"))) is Refusal.CARDS_NOT_IN_HAND

    def test_listing_the_same_card_twice_is_refused(self, variant: Variant) -> None:
        state = opening(variant)
        three = cards_of(state, 0, "3")[0]
        assert refusal(state, Play(0, (three, three))) is Refusal.CARDS_NOT_IN_HAND

    def test_playing_a_card_already_played_is_refused(self, variant: Variant) -> None:
        state = opening(variant)
        five = cards_of(state, 0, "5")
        state = close_trick(play(state, 0, "5").state)
        assert refusal(state, Play(0, five)) is Refusal.CARDS_NOT_IN_HAND

    def test_a_card_held_alongside_one_not_held_is_refused(self, variant: Variant) -> None:
        state = opening(variant)
        mixed = (*cards_of(state, 0, "3"), *cards_of(state, 1, "4"))
        assert refusal(state, Play(0, mixed)) is Refusal.CARDS_NOT_IN_HAND

    def test_a_second_deck_card_does_not_exist_in_3p(self) -> None:
        state = opening(THREE_PLAYER)
        assert refusal(state, Play(0, (Card(Rank.THREE, Suit.CLUBS, 1),))) is Refusal.CARDS_NOT_IN_HAND

    @pytest.mark.parametrize("ranks", ["3 5", "3 3 5 7", "5 7 9 J"])
    def test_cards_that_form_no_combination_are_refused(self, variant: Variant, ranks: str) -> None:
        state = opening(variant)
        assert refusal(state, Play(0, cards_of(state, 0, ranks))) is Refusal.ILLEGAL_COMBINATION

    def test_a_trio_with_a_single_is_a_combination_only_in_3p(self, variant: Variant) -> None:
        state = make_landlord(arranged_round(variant, ("3 3 3 5",)), 0, 1)
        cards = cards_of(state, 0, "3 3 3 5")
        if variant.name == "3p":
            assert apply(state, Play(0, cards)).state.last_play.kind is CombinationKind.TRIO_WITH_SINGLE
        else:
            assert refusal(state, Play(0, cards)) is Refusal.ILLEGAL_COMBINATION

    def test_a_refused_play_leaves_the_turn_and_hand_as_they_were(self, variant: Variant) -> None:
        state = after_lead(variant, "9")
        snapshot = state._replace()
        for action in (Play(1, cards_of(state, 1, "4")), Play(0), Play(1, cards_of(state, 2, "4"))):
            with pytest.raises(IllegalAction):
                apply(state, action)
        assert state == snapshot
        assert state.turn == 1
