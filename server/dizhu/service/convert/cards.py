"""Cards, ranks, variants and combinations: the contract's ``cards.proto`` and the rules core's values."""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

from dizhu.referee.errors import InvalidArgument
from dizhu.rules import (
    FOUR_PLAYER,
    RANKS,
    THREE_PLAYER,
    VARIANTS,
    Card,
    Combination,
    CombinationKind,
    Rank,
    Suit,
    Variant,
    make_deck,
)
from dizhu.v1 import cards_pb2, table_pb2

__all__ = [
    "DOUBLING_CAUSES",
    "ID_OF",
    "card_id",
    "card_to_proto",
    "cards_from_proto",
    "cards_of_variant",
    "cards_to_proto",
    "combination_to_proto",
    "ranks_from_proto",
    "variant_from_proto",
    "variant_to_proto",
]

_VARIANTS = {cards_pb2.VARIANT_THREE_PLAYER: THREE_PLAYER, cards_pb2.VARIANT_FOUR_PLAYER: FOUR_PLAYER}
_VARIANT_TO_PB = {variant.name: pb for pb, variant in _VARIANTS.items()}
#: Proto enum numbers are the core's values plus one (0 is UNSPECIFIED).
_PB_RANKS = tuple(cast(cards_pb2.Rank, rank + 1) for rank in RANKS)
_PB_SUITS = tuple(cast(cards_pb2.Suit, suit + 1) for suit in Suit)


def variant_from_proto(value: int, field: str = "variant") -> Variant:
    variant = _VARIANTS.get(cast(cards_pb2.Variant, value))
    if variant is None:
        raise InvalidArgument(field, "choose VARIANT_THREE_PLAYER or VARIANT_FOUR_PLAYER")
    return variant


def variant_to_proto(variant: Variant) -> cards_pb2.Variant:
    return _VARIANT_TO_PB[variant.name]


def _rank_from_proto(value: int, field: str) -> Rank:
    if not 1 <= value <= len(RANKS):
        raise InvalidArgument(field, f"{value} is not a rank")
    return RANKS[value - 1]


_MOST_DECKS = max(variant.decks for variant in VARIANTS.values())
#: Every card of the largest deck by its fields on the wire, ``(rank, suit, copy)``: a valid card
#: is found here, without an enum call or a new tuple (a 33-card hand cost 0.1 ms built card by card).
_CARD_OF_FIELDS: dict[tuple[int, int, int], Card] = {
    (_PB_RANKS[card.rank], _PB_SUITS[card.suit], card.copy): card for card in make_deck(_MOST_DECKS)
}


def cards_from_proto(
    cards: Iterable[cards_pb2.Card], variant: Variant | None, field: str = "cards"
) -> tuple[Card, ...]:
    """Canonical cards of ``variant`` (of any variant when None: checks that need no table);
    anything else is INVALID_ARGUMENT naming the card."""
    decks = _MOST_DECKS if variant is None else variant.decks
    result = []
    for index, card in enumerate(cards):
        known = _CARD_OF_FIELDS.get((card.rank, card.suit, card.copy))
        result.append(
            known if known is not None and known.copy < decks else _card_from_proto(card, decks, field, index)
        )
    return tuple(result)


def _card_from_proto(card: cards_pb2.Card, decks: int, field: str, index: int) -> Card:
    """The card ``card`` names, or INVALID_ARGUMENT naming its first wrong field."""
    rank = _rank_from_proto(card.rank, f"{field}[{index}].rank")
    if rank.is_joker != (card.suit == cards_pb2.SUIT_JOKER) or not 1 <= card.suit <= len(_PB_SUITS):
        raise InvalidArgument(f"{field}[{index}].suit", "jokers have SUIT_JOKER, every other card a real suit")
    if card.copy >= decks:
        raise InvalidArgument(f"{field}[{index}].copy", f"the table's variant has {decks} deck(s)")
    return Card(rank, Suit(card.suit - 1), card.copy)


def cards_of_variant(cards: tuple[Card, ...], variant: Variant, field: str = "cards") -> tuple[Card, ...]:
    """``cards`` as :func:`cards_from_proto` gave them for any variant, checked against ``variant``
    (its number of decks), as :func:`cards_from_proto` with ``variant`` would."""
    for index, card in enumerate(cards):
        if card.copy >= variant.decks:
            raise InvalidArgument(f"{field}[{index}].copy", f"the table's variant has {variant.decks} deck(s)")
    return cards


def ranks_from_proto(ranks: Iterable[int], field: str) -> tuple[Rank, ...]:
    return tuple(_rank_from_proto(value, f"{field}[{index}]") for index, value in enumerate(ranks))


def card_to_proto(card: Card) -> cards_pb2.Card:
    return cards_pb2.Card(rank=_PB_RANKS[card.rank], suit=_PB_SUITS[card.suit], copy=card.copy)


#: Every card's canonical id, looked up without a call into Python (hands are sorted by it on every view).
ID_OF: dict[Card, int] = {card: card.id for card in make_deck(max(variant.decks for variant in VARIANTS.values()))}
card_id = ID_OF.__getitem__


def cards_to_proto(cards: Iterable[Card]) -> list[cards_pb2.Card]:
    """Cards in canonical id order (the contract's order for hands, kitties and plays)."""
    return [card_to_proto(card) for card in sorted(cards, key=card_id)]


def combination_to_proto(combination: Combination) -> cards_pb2.Combination:
    return cards_pb2.Combination(
        kind=cast(cards_pb2.CombinationKind, int(combination.kind)),
        main_rank=_PB_RANKS[combination.main_rank],
        size=combination.size,
        ranks=[_PB_RANKS[rank] for rank in combination.ranks],
    )


#: Why a play that doubled the stake did, by its combination's kind (only these two double).
DOUBLING_CAUSES = {
    CombinationKind.BOMB: table_pb2.DOUBLING_CAUSE_BOMB,
    CombinationKind.ROCKET: table_pb2.DOUBLING_CAUSE_ROCKET,
}
