"""The expert bot's decisions, in this process: legal in every phase of both variants, made from the
seat's view alone, reproducible under a seed, bids that follow the hand; its budget's names."""

from __future__ import annotations

import random
from typing import ClassVar

import pytest

from dizhu.client.bots import BOT_KINDS, HeuristicBot
from dizhu.expert.arena import legal_moves_for, play_round, view_for_seat
from dizhu.expert.bot import DEFAULT_BUDGET, ExpertBot, parse_budget
from dizhu.expert.search import Budget
from dizhu.rules import (
    VARIANTS,
    Bid,
    Deal,
    Phase,
    Play,
    RoundState,
    apply,
    deal,
    parse_cards,
    start_round,
)

#: No time limit: a decision depends on the view and the seed only (tests never depend on timing).
UNTIMED = Budget(seconds=None, deals=6)
#: Deals dealt until one has a landlord (a thrown-in auction deals again).
DEALS_TO_TRY = 100


def _expert(seed: int = 1) -> ExpertBot:
    return ExpertBot(seed, UNTIMED)


def _state_in_play(variant: str, seed: int, plays: int) -> RoundState:
    """A round of deal ``seed`` after its auction (heuristic bots bid) and ``plays`` decisions of the play."""
    bots = [HeuristicBot() for _ in range(VARIANTS[variant].players)]
    rng = random.Random(seed)
    for _ in range(DEALS_TO_TRY):
        state = start_round(deal(rng.randbytes(32), VARIANTS[variant], dealer=0))
        while state.phase is Phase.AUCTION:
            state = apply(state, Bid(state.turn, bots[state.turn].choose_bid(view_for_seat(state, state.turn)))).state
        if state.phase is Phase.PLAY:
            break
    else:
        raise AssertionError(f"no auction of {DEALS_TO_TRY} deals found a landlord: do the bots see their legal bids?")
    for _ in range(plays):
        seat = state.turn
        moves, can_pass = legal_moves_for(state, seat)
        chosen = bots[seat].choose_play(view_for_seat(state, seat), moves, can_pass)
        held = {(int(card.rank) + 1, int(card.suit) + 1, card.copy): card for card in state.hands[seat]}
        state = apply(state, Play(seat, tuple(held[c.rank, c.suit, c.copy] for c in chosen))).state
        if state.is_over:
            raise AssertionError("the round ended early; choose fewer plays")
    return state


@pytest.mark.parametrize("variant", ["3p", "4p"])
class TestWholeRounds:
    def test_experts_in_every_seat_play_rounds_to_a_zero_sum_end(self, variant: str) -> None:
        players = VARIANTS[variant].players
        landlords = 0
        for round_seed in range(3):
            bots = [ExpertBot(seat + 10 * round_seed, UNTIMED) for seat in range(players)]
            # apply() refuses any illegal bid or play: every decision below was legal.
            deltas = play_round(VARIANTS[variant], bytes([round_seed]) * 32, bots)
            assert sum(deltas) == 0
            landlords += any(deltas)
        assert landlords >= 1, "some round was played out, not only thrown in"

    def test_an_expert_among_heuristic_bots_plays_legally_from_every_seat(self, variant: str) -> None:
        players = VARIANTS[variant].players
        for seat in range(players):
            bots = [HeuristicBot() for _ in range(players)]
            bots[seat] = _expert(seat)
            deltas = play_round(VARIANTS[variant], bytes([40 + seat]) * 32, bots)
            assert sum(deltas) == 0


@pytest.mark.parametrize("variant", ["3p", "4p"])
class TestViewOnly:
    def test_shuffling_the_hidden_cards_of_the_other_seats_changes_no_decision(self, variant: str) -> None:
        for plays in (0, 3, 7):
            state = _state_in_play(variant, 7 + plays, plays)
            seat = state.turn
            others = [other for other in range(len(state.hands)) if other != seat]
            hidden = [card for other in others for card in state.hands[other]]
            random.Random(plays).shuffle(hidden)
            hands = list(state.hands)
            taken = 0
            for other in others:
                size = len(state.hands[other])
                hands[other] = tuple(sorted(hidden[taken : taken + size]))
                taken += size
            shuffled = state._replace(hands=tuple(hands))
            assert shuffled.hands != state.hands
            view, shuffled_view = view_for_seat(state, seat), view_for_seat(shuffled, seat)
            assert view == shuffled_view  # the seat is shown nothing of the others' cards
            moves, can_pass = legal_moves_for(state, seat)
            first = _expert().choose_play(view, moves, can_pass)
            again = _expert().choose_play(shuffled_view, *legal_moves_for(shuffled, seat))
            assert list(first) == list(again)

    def test_the_same_seed_makes_the_same_decisions_and_another_seed_may_not(self, variant: str) -> None:
        state = _state_in_play(variant, 3, 0)
        seat = state.turn
        view = view_for_seat(state, seat)
        moves, can_pass = legal_moves_for(state, seat)
        runs = [[list(_expert(seed).choose_play(view, moves, can_pass)) for seed in (1, 2)] for _ in range(2)]
        assert runs[0] == runs[1]

    def test_the_last_search_shows_each_candidates_mean_and_the_move_played(self, variant: str) -> None:
        state = _state_in_play(variant, 5, 2)
        seat = state.turn
        moves, can_pass = legal_moves_for(state, seat)
        expert = _expert()
        played = expert.choose_play(view_for_seat(state, seat), moves, can_pass)
        search = expert.last_search
        assert search is not None
        assert len(search.candidates) == len(search.means) == len(search.deals) >= 2
        assert search.choice in search.candidates
        assert max(search.deals) == UNTIMED.deals  # the moves kept were played on every sampled deal
        kept = [mean for mean, deals in zip(search.means, search.deals, strict=True) if deals == max(search.deals)]
        assert search.means[search.candidates.index(search.choice)] == max(kept)
        wanted = [] if search.choice is None else sorted(int(rank) + 1 for rank in search.choice.ranks)
        assert sorted(card.rank for card in played) == wanted
        expert.choose_bid(view_for_seat(_auction(variant, TestBids.WEAK[variant]), 0))
        assert expert.last_search is None  # a bid searches no plays


def _auction(variant: str, hand: str) -> RoundState:
    """A round whose first bidder, seat 0, holds ``hand`` (the other cards dealt in order)."""
    chosen = VARIANTS[variant]
    cards = parse_cards(hand, chosen.decks)
    base = deal(bytes(32), chosen, dealer=0)
    rest = [card for pile in (*base.hands, base.kitty) for card in pile if card not in cards]
    size = chosen.hand_size
    hands = [tuple(cards), *(tuple(rest[i * size : (i + 1) * size]) for i in range(chosen.players - 1))]
    kitty = tuple(rest[(chosen.players - 1) * size :])
    dealt = Deal.arranged(chosen, hands, kitty, dealer=chosen.players - 1, face_up_seat=0)
    return start_round(dealt)


class TestBids:
    #: Jokers, 2s, aces and long runs; and low cards only (the landlord's share in playouts: about
    #: 0.8 and 0.45 strong, 3p and 4p, about 0.3 and 0.2 weak).
    STRONG: ClassVar = {
        "3p": "RJ BJ 2c 2d 2h 2s Ac Ad Ah Kc Kd Kh Qc Qd Qh Jc Jd",
        "4p": "RJ RJ' BJ BJ' 2c 2d 2h 2c' Ac Ad Ah 3c 4c 5c 6c 7c 8c 9c Tc Jc Qc Kc 3d 4d 5d",
    }
    WEAK: ClassVar = {
        "3p": "3c 3d 3h 4c 4d 5c 7c 7d 8c 9c 9d Tc Jc Jd Qc Kc Kd",
        "4p": "3c 3d 3h 4c 4d 5c 7c 7d 8c 9c 9d Tc Jc Jd Qc Kc Kd 3c' 4c' 6c' 6d' 8d' Td' Qd' Kh'",
    }
    #: Enough playouts that a share is known to a few hundredths.
    BIDDING = Budget(seconds=None, deals=160)

    @pytest.mark.parametrize("variant", ["3p", "4p"])
    def test_a_strong_hand_bids_and_a_weak_one_passes(self, variant: str) -> None:
        strong = _auction(variant, self.STRONG[variant])
        weak = _auction(variant, self.WEAK[variant])
        strong_bid = ExpertBot(1, self.BIDDING).choose_bid(view_for_seat(strong, 0))
        assert strong_bid == (3 if variant == "3p" else 1)
        assert ExpertBot(1, self.BIDDING).choose_bid(view_for_seat(weak, 0)) == 0

    def test_a_bid_is_always_above_the_highest_or_a_pass(self) -> None:
        state = _auction("3p", self.STRONG["3p"])
        state = apply(state, Bid(0, 0)).state
        state = apply(state, Bid(1, 2)).state  # seat 2 speaks after a 2
        amount = ExpertBot(1, self.BIDDING).choose_bid(view_for_seat(state, 2))
        assert amount in (0, 3)
        apply(state, Bid(2, amount))  # the rules take it (an illegal bid raises IllegalAction)


class TestBudget:
    def test_the_budget_is_named_by_time_deals_or_both(self) -> None:
        assert parse_budget("") == DEFAULT_BUDGET
        assert parse_budget("200ms") == Budget(seconds=0.2, deals=DEFAULT_BUDGET.deals)
        assert parse_budget("1.5s") == Budget(seconds=1.5, deals=DEFAULT_BUDGET.deals)
        assert parse_budget("200ms,48deals") == Budget(seconds=0.2, deals=48)

    @pytest.mark.parametrize("wrong", ["fast", "0ms", "61s", "0deals", "2.5deals", "200"])
    def test_a_wrong_budget_is_refused_saying_how_to_write_one(self, wrong: str) -> None:
        with pytest.raises(ValueError, match="expert budget"):
            parse_budget(wrong)

    def test_the_catalogue_names_the_expert_with_and_without_a_budget(self) -> None:
        assert "expert" in list(BOT_KINDS)
        assert isinstance(BOT_KINDS["expert"](1), ExpertBot)
        made = BOT_KINDS["expert:250ms,12deals"](1)
        assert isinstance(made, ExpertBot)
        assert made.budget == Budget(seconds=0.25, deals=12)
        assert "expert:soon" not in BOT_KINDS
        assert "heuristic:200ms" not in BOT_KINDS  # the heuristic bot takes no options
        with pytest.raises(KeyError, match="expert budget"):
            BOT_KINDS["expert:soon"]
