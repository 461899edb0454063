"""Classifying card sets into combinations, and what beats what (docs/rules.md sections 6 and 7).

Decision (one reading per card set): the type of a card set follows from how many cards of
each rank it holds, so ``classify`` looks only at rank counts and returns at most one
reading. Kickers never matter for comparison; suits never matter at all.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from dizhu.rules.cards import RANKS, Card, Rank, format_ranks
from dizhu.rules.engines import native_rules, on_switch
from dizhu.rules.variants import VARIANTS, CombinationKind, Variant

__all__ = ["Combination", "NotACombination", "beats", "classify", "explain", "read_ranks", "try_classify"]

_BLACK_JOKER = Rank.BLACK_JOKER
_RED_JOKER = Rank.RED_JOKER
_ACE = Rank.ACE
Kind = CombinationKind
# Looked up once: on an Enum class, attribute access costs about as much as a call.
_ROCKET = Kind.ROCKET
_BOMB = Kind.BOMB


class Combination(NamedTuple):
    """A valid play, at the level of ranks.

    Two plays with the same ``ranks`` are the same play; which physical cards make it up
    only matters for checking that the player holds them.
    """

    kind: CombinationKind
    #: The rank it is compared by: the trio's or quad's rank, the top of a sequence.
    main_rank: Rank
    #: The number of cards.
    size: int
    #: Every card's rank, low to high.
    ranks: tuple[Rank, ...]

    @property
    def is_bomb_like(self) -> bool:
        """Bombs and rockets: the plays that may beat a play of another type."""
        return self.kind is Kind.BOMB or self.kind is Kind.ROCKET

    @property
    def chain_length(self) -> int:
        """How many links a sequence or airplane has (1 for every other type)."""
        per_link = _CARDS_PER_LINK.get(self.kind)
        return self.size // per_link if per_link else 1

    def __str__(self) -> str:
        return f"{self.kind.label} [{format_ranks(self.ranks)}]"


_CARDS_PER_LINK = {
    Kind.STRAIGHT: 1,
    Kind.PAIR_SEQUENCE: 2,
    Kind.TRIO_SEQUENCE: 3,
    Kind.AIRPLANE_WITH_SINGLES: 4,
    Kind.AIRPLANE_WITH_PAIRS: 5,
}


class NotACombination(ValueError):
    """Raised by ``classify`` when a card set is no combination; the message says why."""


def _ranks_of(cards: Iterable[Card] | Iterable[Rank]) -> tuple[Rank, ...]:
    return tuple(sorted(card.rank if isinstance(card, Card) else RANKS[card] for card in cards))


def _is_run(ranks: list[int]) -> bool:
    """Whether ascending distinct ``ranks`` are consecutive and all chainable (3..A)."""
    return ranks[-1] <= _ACE and ranks[-1] - ranks[0] == len(ranks) - 1


#: Combination kinds by their number, as the native engine names them.
KIND_BY_NUMBER: dict[int, CombinationKind] = {kind.value: kind for kind in Kind}


def _read(ranks: tuple[Rank, ...], variant: Variant) -> Combination | str:
    """The one reading of ``ranks`` (sorted), or why there is none: by the native engine when it is in use."""
    native = native_rules(variant)
    if native is None:
        return _read_python(ranks, variant)
    reading = native.read(bytes(ranks))
    if isinstance(reading, str):
        return reading
    kind, main = reading
    return Combination(KIND_BY_NUMBER[kind], RANKS[main], len(ranks), ranks)


def _read_python(ranks: tuple[Rank, ...], variant: Variant) -> Combination | str:
    """The one reading of ``ranks`` (sorted), or why there is none, computed here."""
    n = len(ranks)
    if n == 0:
        return "no cards"
    counts: dict[int, int] = {}
    for rank in ranks:
        counts[rank] = counts.get(rank, 0) + 1
    decks = variant.decks
    for counted, count in counts.items():
        limit = variant.copies(counted)
        if count > limit:
            return f"the {variant.name} deck holds only {limit} {RANKS[counted].symbol}"
    if n > variant.landlord_hand_size:
        # Decision (larger than a hand): the sizes of section 6 are those one hand can hold.
        return f"a combination never uses more cards than one hand holds ({variant.landlord_hand_size} cards)"
    kinds = variant.kinds
    if len(counts) == 1:
        only = ranks[0]
        if n == 1:
            return Combination(Kind.SINGLE, only, 1, ranks)
        if n == 2:
            return Combination(Kind.PAIR, only, 2, ranks)
        if n == 3:
            return Combination(Kind.TRIO, only, 3, ranks)
        return Combination(Kind.BOMB, only, n, ranks)
    if counts.get(_BLACK_JOKER) == decks and counts.get(_RED_JOKER) == decks and n == 2 * decks:
        return Combination(Kind.ROCKET, _RED_JOKER, n, ranks)

    if n <= 3 and not (n == 3 and len(counts) == 3 and _is_run(sorted(counts))):
        return _unlike_cards(n, counts, variant)

    by_count: dict[int, list[int]] = {}
    for counted in sorted(counts):
        by_count.setdefault(counts[counted], []).append(counted)
    if len(by_count) == 1:
        width, run = next(iter(by_count.items()))
        return _read_sequence(width, run, ranks, n)
    singles = by_count.pop(1, [])
    pairs = by_count.pop(2, [])
    trios = by_count.pop(3, [])
    quads = by_count.pop(4, [])
    if by_count:
        return "no combination holds five or more of a rank unless it is a bomb"
    if trios and not quads:
        return _read_trios(trios, singles, pairs, ranks, n, kinds)
    if len(quads) == 1 and not trios:
        return _read_quad(quads[0], singles, pairs, ranks, n, kinds)
    return "no combination"


def _unlike_cards(n: int, counts: dict[int, int], variant: Variant) -> str:
    """Why two or three cards of more than one rank are no play.

    Decision (a refusal explains the most plausible reading): two cards are most plausibly
    meant as a pair and three as a trio (three consecutive ranks as a straight, said by
    ``_read_sequence``), so the reason is what a pair or a trio needs, never what a straight
    needs; jokers alone are most plausibly meant as the rocket.
    """
    if all(rank >= _BLACK_JOKER for rank in counts):  # in 4p: not all four jokers
        return f"the rocket is all {2 * variant.decks} jokers"
    return "a pair needs two cards of the same rank" if n == 2 else "a trio needs three cards of the same rank"


def _read_sequence(width: int, run: list[int], ranks: tuple[Rank, ...], n: int) -> Combination | str:
    """Several ranks, each ``width`` times: a straight or a sequence of pairs or trios."""
    kind, min_links = {1: (Kind.STRAIGHT, 5), 2: (Kind.PAIR_SEQUENCE, 3), 3: (Kind.TRIO_SEQUENCE, 2)}.get(
        width, (None, 0)
    )
    if kind is None:
        return "no combination"
    if len(run) < min_links:
        return f"a {kind.label} needs at least {min_links} consecutive ranks"
    if run[-1] > _ACE:
        return f"a {kind.label} may not contain 2 or a joker"
    if not _is_run(run):
        return f"a {kind.label} needs consecutive ranks"
    return Combination(kind, RANKS[run[-1]], n, ranks)


def _read_trios(
    trios: list[int],
    singles: list[int],
    pairs: list[int],
    ranks: tuple[Rank, ...],
    n: int,
    kinds: frozenset[CombinationKind],
) -> Combination | str:
    """Trios with kickers: trio + single/pair, or an airplane with wings."""
    links = len(trios)
    if links == 1:
        if n == 4 and singles:
            if Kind.TRIO_WITH_SINGLE not in kinds:
                return "trio with a single is not played in this variant"
            return Combination(Kind.TRIO_WITH_SINGLE, RANKS[trios[0]], n, ranks)
        if n == 5 and pairs:
            return Combination(Kind.TRIO_WITH_PAIR, RANKS[trios[0]], n, ranks)
        return "a trio takes one single or one pair of another rank"
    if not _is_run(trios):
        return "the trios of an airplane must be consecutive ranks from 3 to A"
    main = RANKS[trios[-1]]
    if len(singles) == links and not pairs:
        if Kind.AIRPLANE_WITH_SINGLES not in kinds:
            return "an airplane with single wings is not played in this variant"
        if _BLACK_JOKER in singles and _RED_JOKER in singles:
            return "both jokers may not be kickers"
        return Combination(Kind.AIRPLANE_WITH_SINGLES, main, n, ranks)
    if len(pairs) == links and not singles:
        if _BLACK_JOKER in pairs and _RED_JOKER in pairs:
            return "both joker pairs may not be kickers"
        return Combination(Kind.AIRPLANE_WITH_PAIRS, main, n, ranks)
    return f"{links} trios take {links} singles or {links} pairs, each of a different rank and none of a trio's rank"


def _read_quad(
    quad: int,
    singles: list[int],
    pairs: list[int],
    ranks: tuple[Rank, ...],
    n: int,
    kinds: frozenset[CombinationKind],
) -> Combination | str:
    """Four of a rank with kickers."""
    if len(singles) == 2 and not pairs:
        if Kind.QUAD_WITH_TWO_SINGLES not in kinds:
            return "four with two is not played in this variant"
        if singles == [_BLACK_JOKER, _RED_JOKER]:
            return "both jokers may not be kickers"
        return Combination(Kind.QUAD_WITH_TWO_SINGLES, RANKS[quad], n, ranks)
    if len(pairs) == 2 and not singles:
        if Kind.QUAD_WITH_TWO_PAIRS not in kinds:
            return "four with two pairs is not played in this variant"
        return Combination(Kind.QUAD_WITH_TWO_PAIRS, RANKS[quad], n, ranks)
    if Kind.QUAD_WITH_TWO_SINGLES not in kinds and Kind.QUAD_WITH_TWO_PAIRS not in kinds:
        # Where four of a rank never takes kickers (4p), talking of kickers would mislead.
        return "four of a rank take no kickers in this variant: alone they are a bomb"
    return "four of a rank take two singles or two pairs, of two other ranks"


#: Every valid play read so far, by variant and ranks: plays repeat endlessly, and there are
#: only some tens of thousands of them (refusals are not kept: there is no end to them).
#: Keyed by the identity of the two variants, which live as long as the module.
_VALID_READINGS: dict[int, dict[tuple[Rank, ...], Combination]] = {id(variant): {} for variant in VARIANTS.values()}


def _forget_readings() -> None:
    for readings in _VALID_READINGS.values():
        readings.clear()


on_switch(_forget_readings)


def read_ranks(ranks: tuple[Rank, ...], variant: Variant) -> Combination | str:
    """The one reading of ``ranks`` (sorted low to high) in ``variant``, or why there is none."""
    known = _VALID_READINGS.get(id(variant))
    if known is None:  # a variant of the caller's own making
        return _read(ranks, variant)
    reading = known.get(ranks)
    if reading is None:
        found = _read(ranks, variant)
        if isinstance(found, str):
            return found
        reading = known[ranks] = found
    return reading


def try_classify(cards: Iterable[Card] | Iterable[Rank], variant: Variant) -> Combination | None:
    """The combination ``cards`` form in ``variant``, or None."""
    reading = read_ranks(_ranks_of(cards), variant)
    return reading if isinstance(reading, Combination) else None


def classify(cards: Iterable[Card] | Iterable[Rank], variant: Variant) -> Combination:
    """The combination ``cards`` (or bare ranks) form in ``variant``.

    Raises ``NotACombination`` with the reason when they form none.
    """
    ranks = _ranks_of(cards)
    reading = read_ranks(ranks, variant)
    if isinstance(reading, str):
        raise NotACombination(f"[{format_ranks(ranks)}] is no combination: {reading}")
    return reading


def explain(cards: Iterable[Card] | Iterable[Rank], variant: Variant) -> str | None:
    """Why ``cards`` are no combination in ``variant``, or None when they are one."""
    reading = read_ranks(_ranks_of(cards), variant)
    return reading if isinstance(reading, str) else None


def beats(play: Combination, to_beat: Combination) -> bool:
    """Whether ``play`` beats ``to_beat``, the last play of the trick (section 7).

    Bombs compare by size, then rank; in 3p all bombs have four cards, so this is the
    3p rule too.
    """
    kind = play.kind
    if kind is _ROCKET:
        return to_beat.kind is not _ROCKET
    if kind is _BOMB:
        if to_beat.kind is _BOMB:
            return (play.size, play.main_rank) > (to_beat.size, to_beat.main_rank)
        return to_beat.kind is not _ROCKET
    return kind is to_beat.kind and play.size == to_beat.size and play.main_rank > to_beat.main_rank
