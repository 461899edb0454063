"""Hypothesis strategies and independent oracles for the rules-core tests.

Two oracles live here because both the strategies and the tests need them, and both are
written straight from docs/rules.md without using ``dizhu.rules.combinations`` or
``dizhu.rules.moves``:

* ``catalogue(variant)``: every distinct valid play of a variant, built type by type from
  the table of section 6, each with the reading(s) the table gives it;
* ``spec_beats(b, a, variant)``: section 7, clause by clause, on those readings.

A play is handled here as a *rank multiset*: a tuple of 15 counts indexed by rank value
(``Rank.THREE`` = 0 ... ``Rank.RED_JOKER`` = 14).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from itertools import combinations
from typing import NamedTuple

from hypothesis import strategies as st

from dizhu.rules import FOUR_PLAYER, RANKS, THREE_PLAYER, Card, Combination, CombinationKind, Variant, make_deck

Kind = CombinationKind
Counts = tuple[int, ...]

#: Rank values, spelled out so the oracle does not lean on the code under test.
THREE, ACE, TWO, BLACK_JOKER, RED_JOKER = 0, 11, 12, 13, 14
#: "Consecutive ranks run from 3 up to A only" (section 6).
CHAINABLE = range(THREE, ACE + 1)
#: Ranks that have four suits (everything but the jokers).
NORMAL = range(THREE, TWO + 1)
ALL_RANKS = range(THREE, RED_JOKER + 1)
JOKERS = (BLACK_JOKER, RED_JOKER)

#: Which table rows exist in which variant (section 6, columns 3p / 4p).
KINDS_3P = frozenset(Kind)
KINDS_4P = frozenset(Kind) - {
    Kind.TRIO_WITH_SINGLE,
    Kind.AIRPLANE_WITH_SINGLES,
    Kind.QUAD_WITH_TWO_SINGLES,
    Kind.QUAD_WITH_TWO_PAIRS,
}


class Reading(NamedTuple):
    """How the table of section 6 reads a card set: its type, main rank and size."""

    kind: CombinationKind
    main_rank: int
    size: int


class Play(NamedTuple):
    """One distinct valid play of the catalogue."""

    counts: Counts
    reading: Reading

    @property
    def ranks(self) -> tuple[int, ...]:
        """Every card's rank value, low to high."""
        return ranks_of(self.counts)

    def combination(self) -> Combination:
        """The same play as the rules core spells it (built directly, not via ``classify``)."""
        kind, main, size = self.reading
        return Combination(kind, RANKS[main], size, tuple(RANKS[rank] for rank in self.ranks))


def ranks_of(counts: Counts) -> tuple[int, ...]:
    """A rank multiset as sorted rank values."""
    return tuple(rank for rank in ALL_RANKS for _ in range(counts[rank]))


def counts_of(ranks: Iterable[int] | Iterable[Card]) -> Counts:
    """The rank multiset of ranks or cards."""
    counts = [0] * len(ALL_RANKS)
    for item in ranks:
        counts[item.rank if isinstance(item, Card) else item] += 1
    return tuple(counts)


def is_subset(part: Counts, whole: Counts) -> bool:
    """Whether multiset ``part`` is contained in ``whole``."""
    return all(p <= w for p, w in zip(part, whole, strict=True))


def kinds_of(variant: Variant) -> frozenset[CombinationKind]:
    """The table rows played in ``variant``, read from the table rather than from ``Variant``."""
    return KINDS_3P if variant.players == 3 else KINDS_4P


def deck_limit(rank: int, decks: int) -> int:
    """How many cards of ``rank`` the deck holds: 4 per deck, jokers 1 per deck."""
    return decks if rank in JOKERS else 4 * decks


def runs(min_links: int) -> Iterator[range]:
    """Every run of at least ``min_links`` consecutive chainable ranks."""
    for low in CHAINABLE:
        for high in range(low + min_links - 1, ACE + 1):
            yield range(low, high + 1)


def _table(variant: Variant) -> Iterator[tuple[dict[int, int], Reading]]:
    """Every card set each row of the table allows, as ``{rank: count}`` with its reading.

    Deck limits and the landlord's hand size are applied afterwards by ``catalogue``.
    """
    decks = variant.decks
    kinds = kinds_of(variant)
    # A pair is two cards of one rank; in 4p also two black or two red jokers.
    pair_ranks = [rank for rank in ALL_RANKS if deck_limit(rank, decks) >= 2]

    for rank in ALL_RANKS:
        yield {rank: 1}, Reading(Kind.SINGLE, rank, 1)
    for rank in pair_ranks:
        yield {rank: 2}, Reading(Kind.PAIR, rank, 2)
    for rank in NORMAL:
        yield {rank: 3}, Reading(Kind.TRIO, rank, 3)
        for other in ALL_RANKS:
            if other != rank and Kind.TRIO_WITH_SINGLE in kinds:
                yield {rank: 3, other: 1}, Reading(Kind.TRIO_WITH_SINGLE, rank, 4)
        for other in pair_ranks:
            if other != rank:
                yield {rank: 3, other: 2}, Reading(Kind.TRIO_WITH_PAIR, rank, 5)
    for width, kind, min_links in ((1, Kind.STRAIGHT, 5), (2, Kind.PAIR_SEQUENCE, 3), (3, Kind.TRIO_SEQUENCE, 2)):
        for run in runs(min_links):
            yield dict.fromkeys(run, width), Reading(kind, run[-1], width * len(run))
    for width, kind, candidates in (
        (1, Kind.AIRPLANE_WITH_SINGLES, ALL_RANKS),
        (2, Kind.AIRPLANE_WITH_PAIRS, pair_ranks),
    ):
        if kind not in kinds:
            continue
        for run in runs(2):
            others = [rank for rank in candidates if rank not in run]
            for wings in combinations(others, len(run)):
                if BLACK_JOKER in wings and RED_JOKER in wings:
                    continue  # BJ and RJ may not both be kickers / not both joker pairs
                cards = dict.fromkeys(run, 3) | dict.fromkeys(wings, width)
                yield cards, Reading(kind, run[-1], (3 + width) * len(run))
    for rank in NORMAL:
        for size in range(4, 4 * decks + 1):  # "all cards of one rank": 4 in 3p, 4..8 in 4p
            yield {rank: size}, Reading(Kind.BOMB, rank, size)
    yield dict.fromkeys(JOKERS, decks), Reading(Kind.ROCKET, RED_JOKER, 2 * decks)
    for width, kind, candidates in (
        (1, Kind.QUAD_WITH_TWO_SINGLES, ALL_RANKS),
        (2, Kind.QUAD_WITH_TWO_PAIRS, pair_ranks),
    ):
        if kind not in kinds:
            continue
        for quad in NORMAL:
            for kickers in combinations([rank for rank in candidates if rank != quad], 2):
                if set(kickers) == set(JOKERS):
                    continue
                yield {quad: 4} | dict.fromkeys(kickers, width), Reading(kind, quad, 4 + 2 * width)


@functools.cache
def readings(variant: Variant) -> dict[Counts, tuple[Reading, ...]]:
    """Every card set the table allows in ``variant`` (at most a landlord's hand), with all its readings."""
    found: dict[Counts, list[Reading]] = {}
    for cards, reading in _table(variant):
        if reading.size > variant.landlord_hand_size:
            continue
        if any(count > deck_limit(rank, variant.decks) for rank, count in cards.items()):
            continue
        counts = tuple(cards.get(rank, 0) for rank in ALL_RANKS)
        assert sum(counts) == reading.size, (cards, reading)
        found.setdefault(counts, []).append(reading)
    return {counts: tuple(found_readings) for counts, found_readings in found.items()}


@functools.cache
def catalogue(variant: Variant) -> tuple[Play, ...]:
    """Every distinct valid play of ``variant`` that fits in a hand, each with its (first) reading."""
    return tuple(Play(counts, found[0]) for counts, found in readings(variant).items())


def spec_beats(b: Reading, a: Reading, variant: Variant) -> bool:
    """Section 7: whether play ``b`` beats ``a``, the last play of the trick."""
    if b.kind is Kind.ROCKET:  # 1. a rocket beats everything (there is only one)
        return a.kind is not Kind.ROCKET
    if b.kind is Kind.BOMB and a.kind not in (Kind.BOMB, Kind.ROCKET):  # 2.
        return True
    if b.kind is Kind.BOMB and a.kind is Kind.BOMB:  # 3.
        if variant.players == 3:
            return b.main_rank > a.main_rank
        return b.size > a.size or (b.size == a.size and b.main_rank > a.main_rank)
    return b.kind is a.kind and b.size == a.size and b.main_rank > a.main_rank  # 4.


# -- strategies ------------------------------------------------------------------------------

VARIANT_LIST = (THREE_PLAYER, FOUR_PLAYER)


def variants() -> st.SearchStrategy[Variant]:
    """Either variant."""
    return st.sampled_from(VARIANT_LIST)


@st.composite
def hands(draw: st.DrawFn, variant: Variant, min_size: int = 1, max_size: int | None = None) -> tuple[Card, ...]:
    """A random hand: distinct physical cards of ``variant``'s deck, at most a landlord's hand by default."""
    size = draw(st.integers(min_size, variant.landlord_hand_size if max_size is None else max_size))
    deck = make_deck(variant.decks)
    return tuple(sorted(draw(st.lists(st.sampled_from(deck), min_size=size, max_size=size, unique=True))))


@functools.cache
def _by_kind(variant: Variant) -> tuple[tuple[Play, ...], ...]:
    groups: dict[CombinationKind, list[Play]] = {}
    for play in catalogue(variant):
        groups.setdefault(play.reading.kind, []).append(play)
    return tuple(tuple(group) for group in groups.values())


def plays(variant: Variant) -> st.SearchStrategy[Play]:
    """A random valid play of ``variant``: a type drawn uniformly, then a play of that type.

    Drawing the type first keeps the many airplanes from crowding out singles and bombs.
    """
    return st.sampled_from(_by_kind(variant)).flatmap(st.sampled_from)


@st.composite
def hands_holding_a_play(draw: st.DrawFn, variant: Variant) -> tuple[Card, ...]:
    """A random hand that holds at least one random valid play (so long sequences and airplanes occur)."""
    play = draw(plays(variant))
    rest = list(make_deck(variant.decks))
    held = []
    for rank in play.ranks:
        card = next(card for card in rest if card.rank == rank)
        rest.remove(card)
        held.append(card)
    room = variant.landlord_hand_size - len(held)
    extra = draw(st.lists(st.sampled_from(rest), max_size=room, unique=True))
    return tuple(sorted(held + extra))


def plays_to_beat(variant: Variant) -> st.SearchStrategy[Play | None]:
    """None (leading the trick) or a random valid play to beat."""
    return st.none() | plays(variant)


@st.composite
def variant_hand_and_play(
    draw: st.DrawFn, max_size: int | None = None
) -> tuple[Variant, tuple[Card, ...], Play | None]:
    """A variant, a random hand in it (up to ``max_size`` cards) and a random play to beat (or None)."""
    variant = draw(variants())
    hand_strategy = hands(variant, max_size=max_size)
    if max_size is None:
        hand_strategy |= hands_holding_a_play(variant)
    return variant, draw(hand_strategy), draw(plays_to_beat(variant))
