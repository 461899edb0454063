"""Cards, ranks, suits, decks and the compact notation (docs/rules.md section 1).

Suits never matter for the rules; they exist so that every physical card is a distinct,
printable object a player either holds or does not. In the 4-player variant two decks are
shuffled together, so the same rank and suit occur twice: ``Card.copy`` tells them apart.

Notation (used in tests, error messages and logs):

* ranks ``3 4 5 6 7 8 9 T J Q K A 2 BJ RJ`` (``10`` is accepted for ``T``; case-insensitive);
* a card may carry a suit letter ``c d h s`` and, for the second deck in 4p, a trailing
  ``'`` (``Th'`` is the ten of hearts of the second deck);
* spaces are optional between ranks: ``"33344"``, ``"3 3 3 4 4"`` and ``"3c3d3h4s4c"`` all parse.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from typing import NamedTuple

__all__ = [
    "RANKS",
    "Card",
    "NotationError",
    "Rank",
    "Suit",
    "card_by_id",
    "cards_by_id",
    "format_cards",
    "format_ranks",
    "make_deck",
    "parse_cards",
    "parse_ranks",
    "rank_counts",
    "sorted_cards",
]


class Rank(enum.IntEnum):
    """A card rank, in rule order: a higher value beats a lower one."""

    THREE = 0
    FOUR = 1
    FIVE = 2
    SIX = 3
    SEVEN = 4
    EIGHT = 5
    NINE = 6
    TEN = 7
    JACK = 8
    QUEEN = 9
    KING = 10
    ACE = 11
    TWO = 12
    BLACK_JOKER = 13
    RED_JOKER = 14

    @property
    def is_chainable(self) -> bool:
        """Whether the rank may be part of a sequence: 3 up to A only (section 6)."""
        return self <= Rank.ACE

    @property
    def is_joker(self) -> bool:
        """Whether the rank is one of the two jokers."""
        return self >= Rank.BLACK_JOKER

    @property
    def symbol(self) -> str:
        """The rank in notation: ``3``..``9``, ``T``, ``J``, ``Q``, ``K``, ``A``, ``2``, ``BJ``, ``RJ``."""
        return _RANK_SYMBOLS[self]


#: Every rank, indexable by value: ``RANKS[i] is Rank(i)``, without the enum call's cost.
RANKS: tuple[Rank, ...] = tuple(Rank)
_RANK_SYMBOLS = ("3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K", "A", "2", "BJ", "RJ")
_SYMBOL_TO_RANK = dict(zip(_RANK_SYMBOLS, RANKS, strict=True))
_SYMBOL_TO_RANK["10"] = Rank.TEN


class Suit(enum.IntEnum):
    """A suit. Suits never matter for the rules; jokers carry none."""

    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3
    #: The jokers' "suit": they have none.
    NONE = 4

    @property
    def symbol(self) -> str:
        """The suit letter in notation (empty for jokers)."""
        return "cdhs"[self] if self is not Suit.NONE else ""


_SUIT_LETTERS = {"c": Suit.CLUBS, "d": Suit.DIAMONDS, "h": Suit.HEARTS, "s": Suit.SPADES}
CARDS_PER_DECK = 54


class Card(NamedTuple):
    """One physical card.

    A tuple underneath so that hands (tuples of cards) hash, compare and sort fast;
    every card is created once per deck (see ``card_by_id``).
    """

    rank: Rank
    suit: Suit
    #: Which physical deck the card comes from: always 0 in 3p, 0 or 1 in 4p.
    copy: int = 0

    @property
    def id(self) -> int:
        """The canonical card id: ``54*copy + 4*rank + suit``, jokers ``54*copy + 52/53``.

        Ids order cards by copy, then rank, then suit; the shuffle (section 8) permutes them.
        """
        found = _CARD_IDS.get(self)
        return _id_of(self) if found is None else found

    def __str__(self) -> str:
        return self.rank.symbol + self.suit.symbol + ("'" * self.copy)

    def __repr__(self) -> str:
        return f"Card({self})"


def _id_of(card: Card) -> int:
    if card.rank.is_joker:
        return CARDS_PER_DECK * card.copy + 52 + (card.rank - Rank.BLACK_JOKER)
    return CARDS_PER_DECK * card.copy + 4 * card.rank + card.suit


def _card_from_id(card_id: int) -> Card:
    copy, index = divmod(card_id, CARDS_PER_DECK)
    if index >= 52:
        return Card(RANKS[Rank.BLACK_JOKER + index - 52], Suit.NONE, copy)
    rank, suit = divmod(index, 4)
    return Card(RANKS[rank], Suit(suit), copy)


_ALL_CARDS: tuple[Card, ...] = tuple(_card_from_id(i) for i in range(2 * CARDS_PER_DECK))
#: Every card's id, looked up rather than computed: ids are read on every state (de)serialisation.
_CARD_IDS: dict[Card, int] = {card: _id_of(card) for card in _ALL_CARDS}


def card_by_id(card_id: int) -> Card:
    """The card with a canonical id (``0 <= card_id < 108``)."""
    if not 0 <= card_id < len(_ALL_CARDS):
        raise ValueError(f"no card has id {card_id}")
    return _ALL_CARDS[card_id]


def cards_by_id(card_ids: Iterable[int]) -> tuple[Card, ...]:
    """The cards with these canonical ids, in the same order."""
    ids = list(card_ids)
    if ids and not 0 <= min(ids) <= max(ids) < len(_ALL_CARDS):
        raise ValueError(f"no card has id {min(ids) if min(ids) < 0 else max(ids)}")
    return tuple(map(_ALL_CARDS.__getitem__, ids))


#: Sort keys by card id for the order hands are kept in (by rank, suit, copy): not id order
#: in 4p, where ids run by copy first.
_SORT_KEYS: tuple[int, ...] = tuple(16 * card.rank + 2 * card.suit + card.copy for card in _ALL_CARDS)


def sorted_cards(card_ids: Iterable[int]) -> tuple[Card, ...]:
    """The cards with these canonical ids (assumed valid), sorted as hands are kept."""
    return tuple(map(_ALL_CARDS.__getitem__, sorted(card_ids, key=_SORT_KEYS.__getitem__)))


def make_deck(decks: int) -> tuple[Card, ...]:
    """All cards of ``decks`` full 54-card decks, in canonical id order."""
    return _ALL_CARDS[: CARDS_PER_DECK * decks]


def rank_counts(ranks: Iterable[int]) -> list[int]:
    """How many cards of each rank: a list indexed by rank value."""
    counts = [0] * len(RANKS)
    for rank in ranks:
        counts[rank] += 1
    return counts


class NotationError(ValueError):
    """Raised when a string is not valid card notation; the message says where and why."""


def _tokens(text: str) -> list[tuple[Rank, Suit | None, int | None]]:
    """Split notation into (rank, suit or None, copy or None) tokens; None: not written."""
    tokens: list[tuple[Rank, Suit | None, int | None]] = []
    upper = text.upper()
    i = 0
    while i < len(text):
        char = text[i]
        if char.isspace() or char == ",":
            i += 1
            continue
        for width in (2, 1):
            symbol = upper[i : i + width]
            if symbol in _SYMBOL_TO_RANK:
                rank = _SYMBOL_TO_RANK[symbol]
                i += width
                break
        else:
            raise NotationError(f"{text!r}: {char!r} at position {i} is not a rank (3-9 T J Q K A 2 BJ RJ)")
        suit: Suit | None = None
        if i < len(text) and text[i].lower() in _SUIT_LETTERS:
            if rank.is_joker:
                raise NotationError(f"{text!r}: a joker has no suit (position {i})")
            suit = _SUIT_LETTERS[text[i].lower()]
            i += 1
        copy: int | None = None
        if i < len(text) and text[i] == "'":
            copy = 1
            i += 1
        tokens.append((rank, suit, copy))
    return tokens


def parse_ranks(text: str) -> tuple[Rank, ...]:
    """Parse notation into ranks, sorted low to high (suits and copies are ignored)."""
    return tuple(sorted(rank for rank, _, _ in _tokens(text)))


def parse_cards(text: str, decks: int = 1) -> tuple[Card, ...]:
    """Parse notation into distinct physical cards from ``decks`` decks, sorted by rank.

    A card written without a suit takes the lowest-id card of that rank (and of the second
    deck if marked ``'``) not yet taken, so ``parse_cards("333")`` is three distinct threes.
    Cards written in full are taken first. Asking for a card twice, for more cards of a
    rank than the decks hold, or for a second-deck card with one deck is a ``NotationError``.
    """
    taken: set[Card] = set()
    cards: list[Card] = []
    unsuited: list[tuple[Rank, int | None]] = []
    for rank, suit, copy in _tokens(text):
        if copy is not None and copy >= decks:
            raise NotationError(f"{text!r}: {rank.symbol}' needs a second deck")
        if suit is None and not (rank.is_joker and copy is not None):
            unsuited.append((rank, copy))
            continue
        card = Card(rank, Suit.NONE if suit is None else suit, copy or 0)
        if card in taken:
            raise NotationError(f"{text!r}: {card} is listed twice")
        taken.add(card)
        cards.append(card)
    deck = make_deck(decks)
    for rank, copy in unsuited:
        for card in deck:
            if card.rank == rank and (copy is None or card.copy == copy) and card not in taken:
                taken.add(card)
                cards.append(card)
                break
        else:
            raise NotationError(f"{text!r}: {decks} deck(s) hold no further {rank.symbol}")
    return tuple(sorted(cards))


def format_ranks(ranks: Iterable[int]) -> str:
    """Ranks in notation, low to high, space-separated: ``"3 3 4 T BJ"``."""
    return " ".join(RANKS[rank].symbol for rank in sorted(ranks))


def format_cards(cards: Sequence[Card]) -> str:
    """Cards in notation with suits, sorted by rank then suit: ``"3c 3h Ts BJ"``."""
    return " ".join(str(card) for card in sorted(cards))
