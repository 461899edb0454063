"""Card notation for bot authors: ``"3 3 4 T J Q K A 2 BJ RJ"`` to and from ``dizhu.v1.Card``.

The same notation as the rule book and the referee's logs:

* ranks ``3 4 5 6 7 8 9 T J Q K A 2 BJ RJ`` (``10`` is accepted for ``T``; case-insensitive);
* an optional suit letter ``c d h s`` after a rank (``Th`` is the ten of hearts); jokers have none;
* an optional ``'`` marks a card of the second deck in the four-player variant (``Th'``);
* spaces and commas between cards are optional: ``"33344"`` and ``"3c 3d 3h 4s 4c"`` both parse.

Cards are the generated ``dizhu.v1.cards_pb2.Card`` messages in canonical form (see
``docs/api.md`` § Cards); ranks are ``dizhu.v1.cards_pb2.Rank`` numbers (``RANK_THREE`` = 1
... ``RANK_RED_JOKER`` = 15), so comparing numbers compares ranks. Self-contained: this
module needs only the generated stubs.

>>> format_cards(parse_cards("3 3 BJ"))
'3c 3d BJ'
>>> format_cards(pick(parse_cards("3c 3h 4d 5s"), "3 4"))
'3c 4d'
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Final, cast

from dizhu.v1 import cards_pb2

__all__ = [
    "Card",
    "NotationError",
    "card_from_id",
    "card_id",
    "format_card",
    "format_cards",
    "format_ranks",
    "parse_cards",
    "parse_ranks",
    "pick",
    "rank_counts",
    "rank_symbol",
    "sorted_cards",
]

Card = cards_pb2.Card
Rank = cards_pb2.Rank

_CARDS_PER_DECK: Final = 54
_RANK_SYMBOLS: Final = ("3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K", "A", "2", "BJ", "RJ")
_SYMBOL_TO_RANK: Final = {symbol: number for number, symbol in enumerate(_RANK_SYMBOLS, start=1)} | {"10": 8}
_SUIT_LETTERS: Final = "cdhs"
_BLACK_JOKER: Final = int(cards_pb2.RANK_BLACK_JOKER)
_SUIT_JOKER: Final = int(cards_pb2.SUIT_JOKER)


class NotationError(ValueError):
    """The text is not valid card notation; the message says where and why."""


def _rank(number: int) -> cards_pb2.Rank:
    return cast(cards_pb2.Rank, number)


def _suit(number: int) -> cards_pb2.Suit:
    return cast(cards_pb2.Suit, number)


def rank_symbol(rank: int) -> str:
    """A rank number in notation: ``RANK_TEN`` -> ``"T"``, ``RANK_RED_JOKER`` -> ``"RJ"``."""
    if not 1 <= rank <= len(_RANK_SYMBOLS):
        raise ValueError(f"no rank has number {rank}")
    return _RANK_SYMBOLS[rank - 1]


def card_id(card: cards_pb2.Card) -> int:
    """The canonical card id: ``54*copy + 4*(rank-1) + (suit-1)``, jokers ``54*copy + 52/53``."""
    if card.rank >= _BLACK_JOKER:
        return _CARDS_PER_DECK * card.copy + 52 + (card.rank - _BLACK_JOKER)
    return _CARDS_PER_DECK * card.copy + 4 * (card.rank - 1) + (card.suit - 1)


def card_from_id(number: int) -> cards_pb2.Card:
    """The card with a canonical id, ``0 <= number < 108``."""
    if not 0 <= number < 2 * _CARDS_PER_DECK:
        raise ValueError(f"no card has id {number}")
    copy, index = divmod(number, _CARDS_PER_DECK)
    if index >= 52:
        return cards_pb2.Card(rank=_rank(_BLACK_JOKER + index - 52), suit=_suit(_SUIT_JOKER), copy=copy)
    rank, suit = divmod(index, 4)
    return cards_pb2.Card(rank=_rank(rank + 1), suit=_suit(suit + 1), copy=copy)


def sorted_cards(cards: Iterable[cards_pb2.Card]) -> list[cards_pb2.Card]:
    """The cards sorted by rank, then suit, then deck (the order the notation prints)."""
    return sorted(cards, key=lambda card: (card.rank, card.suit, card.copy))


def format_card(card: cards_pb2.Card) -> str:
    """One card in notation: ``"Th"``, ``"BJ"``, ``"Th'"`` (second deck)."""
    suit = "" if card.suit in (_SUIT_JOKER, 0) else _SUIT_LETTERS[card.suit - 1]
    return rank_symbol(card.rank) + suit + "'" * card.copy


def format_cards(cards: Iterable[cards_pb2.Card]) -> str:
    """Cards in notation, low to high, space-separated: ``"3c 3h Ts BJ"``."""
    return " ".join(format_card(card) for card in sorted_cards(cards))


def format_ranks(ranks: Iterable[int]) -> str:
    """Rank numbers in notation, low to high: ``"3 3 4 T BJ"``."""
    return " ".join(rank_symbol(rank) for rank in sorted(ranks))


def _tokens(text: str) -> list[tuple[int, int | None, int | None]]:
    """``(rank, suit or None, copy or None)`` per card written; None: not written."""
    tokens: list[tuple[int, int | None, int | None]] = []
    upper = text.upper()
    i = 0
    while i < len(text):
        if text[i].isspace() or text[i] == ",":
            i += 1
            continue
        for width in (2, 1):
            if (symbol := upper[i : i + width]) in _SYMBOL_TO_RANK:
                rank = _SYMBOL_TO_RANK[symbol]
                i += width
                break
        else:
            raise NotationError(f"{text!r}: {text[i]!r} at position {i} is not a rank (3-9 T J Q K A 2 BJ RJ)")
        suit: int | None = None
        if i < len(text) and text[i].lower() in _SUIT_LETTERS:
            if rank >= _BLACK_JOKER:
                raise NotationError(f"{text!r}: a joker has no suit (position {i})")
            suit = _SUIT_LETTERS.index(text[i].lower()) + 1
            i += 1
        copy: int | None = None
        if i < len(text) and text[i] == "'":
            copy = 1
            i += 1
        tokens.append((rank, suit, copy))
    return tokens


def parse_ranks(text: str) -> list[cards_pb2.Rank]:
    """Notation as rank numbers, low to high (suits and deck marks are ignored)."""
    return sorted(_rank(rank) for rank, _, _ in _tokens(text))


def parse_cards(text: str, *, decks: int = 1) -> list[cards_pb2.Card]:
    """Notation as distinct canonical cards from ``decks`` decks (2 for the four-player variant).

    A card written without a suit is the lowest-id card of its rank (and deck, if marked)
    not taken yet, so ``parse_cards("333")`` is three different threes. Asking for a card
    twice, for more cards of a rank than the decks hold, or for ``'`` with one deck is a
    :class:`NotationError`.
    """
    taken: set[int] = set()
    unsuited: list[tuple[int, int | None]] = []
    for rank, suit, copy in _tokens(text):
        if copy is not None and copy >= decks:
            raise NotationError(f"{text!r}: {rank_symbol(rank)}' needs a second deck")
        if suit is None and rank < _BLACK_JOKER:
            unsuited.append((rank, copy))
            continue
        if rank >= _BLACK_JOKER and copy is None:
            unsuited.append((rank, None))
            continue
        number = card_id(cards_pb2.Card(rank=_rank(rank), suit=_suit(suit or _SUIT_JOKER), copy=copy or 0))
        if number in taken:
            raise NotationError(f"{text!r}: {format_card(card_from_id(number))} is listed twice")
        taken.add(number)
    for rank, copy in unsuited:
        for number in range(_CARDS_PER_DECK * decks):
            card = card_from_id(number)
            if card.rank == rank and (copy is None or card.copy == copy) and number not in taken:
                taken.add(number)
                break
        else:
            raise NotationError(f"{text!r}: {decks} deck(s) hold no further {rank_symbol(rank)}")
    return sorted_cards(card_from_id(number) for number in taken)


def pick(hand: Sequence[cards_pb2.Card], text: str) -> list[cards_pb2.Card]:
    """The cards of ``hand`` that ``text`` names, ready for ``Play``.

    A rank without a suit takes the hand's lowest-id card of that rank not taken yet; a
    card written in full must be in the hand. Raises :class:`NotationError` when the hand
    does not hold what the text asks for.
    """
    left = sorted(hand, key=card_id)
    chosen: list[cards_pb2.Card] = []
    tokens = _tokens(text)
    # Cards written in full first, so that "3 3h" does not take the 3h for the bare 3.
    for rank, suit, copy in sorted(tokens, key=lambda token: token[1] is None):
        for card in left:
            if card.rank == rank and (suit is None or card.suit == suit) and (copy is None or card.copy == copy):
                left.remove(card)
                chosen.append(card)
                break
        else:
            written = rank_symbol(rank) + ("" if suit is None else _SUIT_LETTERS[suit - 1]) + "'" * (copy or 0)
            raise NotationError(f"{text!r}: the hand holds no (further) {written}")
    return sorted(chosen, key=card_id)


def rank_counts(cards: Iterable[cards_pb2.Card | int]) -> Counter[int]:
    """How many cards of each rank number (cards or rank numbers)."""
    return Counter(item if isinstance(item, int) else int(item.rank) for item in cards)
