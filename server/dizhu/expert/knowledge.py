"""What one seat knows of a round, read from the ``TableView`` a referee sends it.

The expert decides from this alone: its own hand, how many cards each seat holds, every play
made so far (the view's ``history``), the auction, the landlord and the kitty shown to all, the
trick. From these follow the cards it cannot see (``unseen``), and the kitty cards the landlord
must still hold (it took them, and has not played that many of their ranks since).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dizhu.rules import RANKS, VARIANTS, Combination, Variant, classify
from dizhu.v1 import cards_pb2, table_pb2

__all__ = ["Knowledge", "knowledge_of", "variant_of"]

_VARIANTS = {cards_pb2.VARIANT_THREE_PLAYER: VARIANTS["3p"], cards_pb2.VARIANT_FOUR_PLAYER: VARIANTS["4p"]}


def variant_of(view: table_pb2.TableView) -> Variant:
    """The rules variant of a view's table."""
    return _VARIANTS[view.settings.variant]


def _counts(cards: Iterable[cards_pb2.Card]) -> list[int]:
    counts = [0] * len(RANKS)
    for card in cards:
        counts[card.rank - 1] += 1  # the contract numbers ranks from 1 (RANK_THREE)
    return counts


@dataclass(frozen=True, slots=True)
class Knowledge:
    """One seat's knowledge of the running deal (see the module docstring). Counts are by rank."""

    variant: Variant
    seat: int
    hand: tuple[int, ...]
    #: Cards each seat holds, by seat.
    sizes: tuple[int, ...]
    landlord: int | None
    #: Cards not in this seat's hand and not played yet: the other seats hold them (and, during
    #: the auction, the kitty).
    unseen: tuple[int, ...]
    #: Kitty cards the landlord still holds, at least (zero when this seat is the landlord).
    landlord_keeps: tuple[int, ...]
    #: The play to beat and who made it; None when this seat leads.
    to_beat: Combination | None
    to_beat_seat: int | None
    #: Passes since the play to beat.
    passes: int
    #: The stake so far (the bid doubled per doubling play), and the doublings.
    stake: int
    doublings: int
    highest_bid: int
    #: Bids so far in this deal's auction.
    bids_made: int


def knowledge_of(view: table_pb2.TableView) -> Knowledge:
    """What the viewing seat of ``view`` knows (see the module docstring)."""
    variant = variant_of(view)
    seat = view.your_seat
    hand = _counts(view.your_hand)
    played_by = [[0] * len(RANKS) for _ in range(variant.players)]
    for action in view.history:
        if action.deal_number == view.deal_number and not action.HasField("bid"):
            for card in action.cards:
                played_by[action.seat][card.rank - 1] += 1
    unseen = [
        variant.copies(rank) - hand[rank] - sum(played[rank] for played in played_by) for rank in range(len(RANKS))
    ]
    landlord = view.landlord_seat if view.HasField("landlord_seat") else None
    keeps = [0] * len(RANKS)
    if landlord is not None and landlord != seat:
        kitty = _counts(view.kitty)
        keeps = [max(0, kitty[rank] - played_by[landlord][rank]) for rank in range(len(RANKS))]
    to_beat: Combination | None = None
    to_beat_seat: int | None = None
    passes = 0
    if (
        view.phase == table_pb2.PHASE_PLAY
        and view.HasField("to_beat")
        and view.to_beat.cards
        and view.to_beat.seat != seat
    ):
        to_beat = classify([RANKS[card.rank - 1] for card in view.to_beat.cards], variant)
        to_beat_seat = view.to_beat.seat
        for entry in reversed(view.trick.plays):
            if entry.cards:
                break
            passes += 1
    return Knowledge(
        variant=variant,
        seat=seat,
        hand=tuple(hand),
        sizes=tuple(entry.cards_left for entry in view.seats),
        landlord=landlord,
        unseen=tuple(max(0, n) for n in unseen),
        landlord_keeps=tuple(keeps),
        to_beat=to_beat,
        to_beat_seat=to_beat_seat,
        passes=passes,
        stake=max(1, view.stake),
        doublings=view.doublings,
        highest_bid=view.highest_bid,
        bids_made=len(view.bids),
    )
