"""Bots playing rounds in this process, shown the views a referee would show them.

For the benchmark of bots (``bench/bench_bots.py``) and the tests: a round runs on the rules
core, and at each turn the seat's bot gets the seat's ``TableView`` (hand, seats' card counts,
auction, landlord and kitty, trick, history, stake) and the legal moves ``RulesService`` would
list. Strength is measured through the referee itself with ``dizhu tournament``
(docs/bots.md); this is the quick, in-process look.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import cast

from dizhu.client import Bot
from dizhu.rules import (
    Bid,
    Card,
    Phase,
    Play,
    RoundState,
    Variant,
    apply,
    deal,
    legal_bids,
    legal_moves,
    pick_cards,
    settle,
    start_round,
)
from dizhu.v1 import cards_pb2, rules_service_pb2, table_pb2

__all__ = ["legal_moves_for", "play_round", "view_for_seat"]

_VARIANT_IDS = {"3p": cards_pb2.VARIANT_THREE_PLAYER, "4p": cards_pb2.VARIANT_FOUR_PLAYER}


def _card(card: Card) -> cards_pb2.Card:
    return cards_pb2.Card(
        rank=cast(cards_pb2.Rank, int(card.rank) + 1),
        suit=cast(cards_pb2.Suit, int(card.suit) + 1),  # the contract numbers suits from 1, the jokers' last
        copy=card.copy,
    )


def _cards(cards: Sequence[Card]) -> list[cards_pb2.Card]:
    return [_card(card) for card in sorted(cards, key=lambda card: card.id)]


def view_for_seat(state: RoundState, seat: int) -> table_pb2.TableView:
    """What a referee shows ``seat`` of ``state`` (a round in its auction or play; one deal)."""
    variant = state.variant
    view = table_pb2.TableView(
        phase=table_pb2.PHASE_AUCTION if state.phase is Phase.AUCTION else table_pb2.PHASE_PLAY,
        your_seat=seat,
        turn_seat=state.turn,
        deal_number=1,
        dealer_seat=state.deal.dealer,
        face_up_seat=state.deal.face_up_seat,
        face_up_card=_card(state.deal.face_up),
        highest_bid=state.bid,
        legal_bids=legal_bids(state),
        doublings=state.doublings,
        stake=state.stake if state.landlord is not None else 0,
        your_hand=_cards(state.hands[seat]),
        seats=[
            table_pb2.SeatView(seat=other, occupied=True, cards_left=len(state.hands[other]))
            for other in range(variant.players)
        ],
    )
    view.settings.variant = _VARIANT_IDS[variant.name]
    trick: list[table_pb2.TrickPlay] = []
    for action in state.history:
        if isinstance(action, Bid):
            view.bids.append(table_pb2.AuctionBid(seat=action.seat, amount=action.amount))
            view.history.append(table_pb2.RoundAction(deal_number=1, seat=action.seat, bid=action.amount))
        else:
            assert isinstance(action, Play)
            view.history.append(table_pb2.RoundAction(deal_number=1, seat=action.seat, cards=_cards(action.cards)))
            trick.append(table_pb2.TrickPlay(seat=action.seat, cards=_cards(action.cards)))
    if state.landlord is not None:
        view.landlord_seat = state.landlord
        view.kitty.extend(_cards(state.deal.kitty))
    if state.last_play is not None and state.last_player is not None:
        plays = trick[len(trick) - 1 - state.passes :]
        view.trick.plays.extend(plays)
        view.to_beat.CopyFrom(plays[0])
        view.to_beat.combination.size = state.last_play.size
    return view


def legal_moves_for(state: RoundState, seat: int) -> tuple[list[rules_service_pb2.LegalMove], bool]:
    """The legal moves ``RulesService`` lists for ``seat`` (the hand's lowest cards of each play), and
    whether it may pass."""
    hand = state.hands[seat]
    to_beat = state.last_play if state.last_player != seat else None
    moves = [
        rules_service_pb2.LegalMove(cards=_cards(pick_cards(hand, play)))
        for play in legal_moves(hand, to_beat, state.variant)
    ]
    return moves, to_beat is not None


def _answer(value: object) -> object:
    if inspect.isawaitable(value):
        raise TypeError("an arena's bots answer at once: their methods cannot be async")
    return value


def play_round(
    variant: Variant,
    seed: bytes,
    bots: Sequence[Bot],
    *,
    dealer: int = 0,
    on_landlord: Callable[[int], object] | None = None,
) -> tuple[int, ...]:
    """Plays one deal of ``seed`` between ``bots`` (by seat): every seat's points (all zero if thrown in).

    ``on_landlord`` is told the landlord's seat once the auction has chosen one."""
    state = start_round(deal(seed, variant, dealer=dealer))
    while not state.is_over:
        seat = state.turn
        view = view_for_seat(state, seat)
        bot = bots[seat]
        if state.phase is Phase.AUCTION:
            amount = cast(int, _answer(bot.choose_bid(view)))
            state = apply(state, Bid(seat, amount)).state
            if state.landlord is not None and on_landlord is not None:
                on_landlord(state.landlord)
            continue
        moves, can_pass = legal_moves_for(state, seat)
        chosen = cast(Sequence[cards_pb2.Card], _answer(bot.choose_play(view, moves, can_pass)))
        held = {(int(card.rank) + 1, int(card.suit) + 1, card.copy): card for card in state.hands[seat]}
        cards = tuple(held[card.rank, card.suit, card.copy] for card in chosen)
        state = apply(state, Play(seat, cards)).state
    return settle(state).deltas
