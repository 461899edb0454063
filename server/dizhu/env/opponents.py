"""The bundled bots (``dizhu.client.bots.BOT_KINDS``: ``"random"``, ``"heuristic"``, ``"expert"``, also
``"expert:200ms"``), or any ``dizhu.client.Bot``, as opponents in an environment.

A ``BotOpponent`` shows its bot the seat's ``TableView`` as a referee would and the legal moves
its ``RulesService`` would list, in the same order, and plays the answer: the bot decides as it
would at a referee (``tests/env/test_bot_opponents.py`` plays the same seeded rounds both ways
and finds the same moves). The view is built from what the seat sees (a ``Seen`` row), so it
costs no replay of the round. What a bot cannot tell apart: the view's cards carry the lowest
suits of their ranks (suits never matter in the rules), and it has no history, no table id and
no clock -- the random and heuristic bots read none of them; the expert, which counts the cards
played from the history, then draws the other hands from every card it cannot see (docs/bots.md).
A bot's methods must answer at once (not ``async``).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Sequence
from typing import TYPE_CHECKING, TypeVar, cast

from dizhu.client import Bot
from dizhu.client.bots import BOT_KINDS
from dizhu.env.actions import PASS, ActionTable
from dizhu.env.info import AUCTION, NONE, RANKS
from dizhu.rules import Rank, Variant, classify, legal_moves
from dizhu.v1 import cards_pb2, rules_service_pb2, table_pb2

if TYPE_CHECKING:
    from dizhu.env.game import Game
    from dizhu.env.native import NativeGame

__all__ = ["BOT_KINDS", "BotOpponent", "bundled_bot"]

_VARIANT_IDS = {"3p": cards_pb2.VARIANT_THREE_PLAYER, "4p": cards_pb2.VARIANT_FOUR_PLAYER}
_JOKERS = (Rank.BLACK_JOKER, Rank.RED_JOKER)
_SUITS = 4
_T = TypeVar("_T")


@functools.cache
def _card(rank: int, nth: int) -> cards_pb2.Card:
    """The ``nth`` card (from 0) of ``rank`` in a hand: the lowest suits of the first deck, then the second's."""
    proto_rank = cast(cards_pb2.Rank, rank + 1)  # the contract numbers ranks from 1 (RANK_THREE)
    if rank in _JOKERS:
        return cards_pb2.Card(rank=proto_rank, suit=cards_pb2.SUIT_JOKER, copy=nth)
    return cards_pb2.Card(rank=proto_rank, suit=cast(cards_pb2.Suit, nth % _SUITS + 1), copy=nth // _SUITS)


def _cards(counts: Sequence[int]) -> list[cards_pb2.Card]:
    return [_card(rank, nth) for rank in range(RANKS) for nth in range(int(counts[rank]))]


@functools.cache
def _combination(ranks: tuple[int, ...], variant: Variant) -> cards_pb2.Combination:
    combination = classify([Rank(rank) for rank in ranks], variant)
    return cards_pb2.Combination(
        kind=int(combination.kind),  # type: ignore[arg-type]
        main_rank=int(combination.main_rank) + 1,  # type: ignore[arg-type]
        size=combination.size,
        ranks=[int(rank) + 1 for rank in combination.ranks],  # type: ignore[misc]
    )


def _ranks_of(counts: Sequence[int]) -> tuple[int, ...]:
    return tuple(rank for rank in range(RANKS) for _ in range(int(counts[rank])))


def table_view(game: Game | NativeGame, seat: int, bids: Sequence[tuple[int, int]]) -> table_pb2.TableView:
    """What ``seat`` is shown by a referee now (see the module docstring); ``bids``: this deal's
    auction so far, in order, as (seat, amount)."""
    seen = game.seen
    variant = game.variant
    in_auction = seen.phase[0] == AUCTION
    view = table_pb2.TableView(
        phase=table_pb2.PHASE_AUCTION if in_auction else table_pb2.PHASE_PLAY,
        your_seat=seat,
        turn_seat=seat,
        dealer_seat=int(seen.dealer[0]),
        face_up_card=_card(int(seen.face_up_rank[0]), 0),
        face_up_seat=int(seen.face_up_seat[0]),
        highest_bid=int(seen.bid[0]),
        doublings=int(seen.doublings[0]),
        your_hand=_cards(seen.hands[0, seat]),
        seats=[
            table_pb2.SeatView(seat=other, occupied=True, cards_left=int(seen.hand_sizes[0, other]))
            for other in range(variant.players)
        ],
        bids=[table_pb2.AuctionBid(seat=bidder, amount=amount) for bidder, amount in bids],
    )
    view.settings.variant = _VARIANT_IDS[variant.name]
    if in_auction:  # the auction's action indices are the bid amounts (PASS = 0)
        view.legal_bids.extend(game.legal)
    landlord = int(seen.landlord[0])
    if landlord != NONE:
        view.landlord_seat = landlord
        view.kitty.extend(_cards(seen.kitty[0]))
    if seen.to_beat_kind[0]:
        beat = seen.to_beat[0]
        play = table_pb2.TrickPlay(
            seat=int(seen.last_player[0]), cards=_cards(beat), combination=_combination(_ranks_of(beat), variant)
        )
        view.trick.plays.append(play)
        view.to_beat.CopyFrom(play)  # as a referee's view says it
    return view


def legal_moves_shown(view: table_pb2.TableView, variant: Variant) -> tuple[list[rules_service_pb2.LegalMove], bool]:
    """The legal moves a referee's ``ListLegalMoves`` lists for the viewer's hand against the play
    to beat, in its order, each with the hand's lowest cards of its ranks; and whether it may pass."""
    hand = [Rank(card.rank - 1) for card in view.your_hand]
    beat = view.trick.plays[-1] if view.trick.plays else None
    to_beat = classify([Rank(rank - 1) for rank in beat.combination.ranks], variant) if beat is not None else None
    by_rank: dict[int, list[cards_pb2.Card]] = {}
    for card in view.your_hand:
        by_rank.setdefault(card.rank, []).append(card)
    moves = []
    for play in legal_moves(hand, to_beat, variant):
        ranks = tuple(int(rank) for rank in play.ranks)
        taken: dict[int, int] = {}
        cards = []
        for rank in ranks:
            nth = taken.get(rank, 0)
            taken[rank] = nth + 1
            cards.append(by_rank[rank + 1][nth])
        moves.append(rules_service_pb2.LegalMove(combination=_combination(ranks, variant), cards=cards))
    return moves, to_beat is not None


class BotOpponent:
    """``bot`` playing a seat of an environment (see the module docstring)."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    def act(self, game: Game | NativeGame, bids: Sequence[tuple[int, int]]) -> int:
        """The action index of the bot's decision for the seat to act (``bids``: this deal's auction)."""
        seat = game.turn
        view = table_view(game, seat, bids)
        if view.phase == table_pb2.PHASE_AUCTION:
            return int(_answer(self.bot.choose_bid(view)))
        moves, can_pass = legal_moves_shown(view, game.variant)
        cards = _answer(self.bot.choose_play(view, moves, can_pass))
        if not cards:
            return PASS
        table: ActionTable = game.table
        try:
            return table.index_of_ranks(tuple(sorted(card.rank - 1 for card in cards)))
        except KeyError:
            return -1  # no play of the variant: illegal, replaced as every illegal action is


def _answer(value: _T | Awaitable[_T]) -> _T:
    if inspect.isawaitable(value):
        close = getattr(value, "close", None)
        if close is not None:
            close()
        raise TypeError("an environment opponent's bot must answer at once: its methods cannot be async")
    return value


def bundled_bot(kind: str, seed: int | None = None) -> BotOpponent:
    """The bundled bot ``kind`` (a name of ``BOT_KINDS``, e.g. ``"heuristic"`` or ``"expert:50ms"``) as an
    opponent, made from ``seed``."""
    try:
        make = BOT_KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown bot {kind!r}: expected one of {', '.join(sorted(BOT_KINDS))}") from None
    return BotOpponent(make(seed))
