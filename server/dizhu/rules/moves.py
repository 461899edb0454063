"""Legal-move generation (RULES.md sections 5, 6 and 7).

``legal_moves`` lists every play a hand may make, deduplicated by ranks (each choice of
kickers is its own play), in a fixed order: the plays of the type to beat first, lowest
first, then bombs from weakest to strongest, then the rocket. Passing is not a play: it is
allowed exactly when there is a play to beat (the leader of a trick cannot pass).

Generation works on rank counts and builds only plays of the right shape, so following a
play costs little and leading with the 4p landlord's 33 cards stays fast.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import combinations

from dizhu.rules.cards import RANKS, Card, Rank
from dizhu.rules.combinations import Combination
from dizhu.rules.variants import CombinationKind, Variant

__all__ = ["legal_moves", "pick_cards"]

Kind = CombinationKind
_BLACK_JOKER = int(Rank.BLACK_JOKER)
_RED_JOKER = int(Rank.RED_JOKER)
_ACE = int(Rank.ACE)
_TWO = int(Rank.TWO)
_RANK_COUNT = len(RANKS)

#: ``_REPEAT[r][c]`` is rank ``r`` written ``c`` times: the building block of every play.
_REPEAT: tuple[tuple[tuple[Rank, ...], ...], ...] = tuple(
    tuple((rank,) * count for count in range(9)) for rank in RANKS
)


def _hand_counts(hand: Iterable[Card] | Iterable[Rank]) -> list[int]:
    counts = [0] * _RANK_COUNT
    for item in hand:
        counts[item.rank if isinstance(item, Card) else item] += 1
    return counts


def legal_moves(
    hand: Iterable[Card] | Iterable[Rank],
    to_beat: Combination | None,
    variant: Variant,
) -> list[Combination]:
    """Every play ``hand`` can make on ``to_beat`` (None when leading the trick)."""
    counts = _hand_counts(hand)
    if to_beat is None:
        return list(_leads(counts, variant))
    moves: list[Combination] = []
    kind = to_beat.kind
    if kind is Kind.ROCKET:
        return moves
    if kind is not Kind.BOMB:
        moves.extend(_of_kind(kind, counts, variant, to_beat.size, to_beat.main_rank))
    moves.extend(_bombs(counts, variant, to_beat if kind is Kind.BOMB else None))
    moves.extend(_rocket(counts, variant))
    return moves


def _leads(counts: list[int], variant: Variant) -> Iterator[Combination]:
    kinds = variant.kinds
    for kind in CombinationKind:
        if kind in kinds and kind is not Kind.BOMB and kind is not Kind.ROCKET:
            yield from _of_kind(kind, counts, variant, None, -1)
    yield from _bombs(counts, variant, None)
    yield from _rocket(counts, variant)


def _of_kind(
    kind: CombinationKind, counts: list[int], variant: Variant, size: int | None, above: int
) -> Iterator[Combination]:
    """Plays of one non-bomb ``kind`` with main rank above ``above`` (and ``size`` cards if given)."""
    if kind is Kind.SINGLE:
        return _sets(kind, counts, 1, above)
    if kind is Kind.PAIR:
        return _sets(kind, counts, 2, above)
    if kind is Kind.TRIO:
        return _sets(kind, counts, 3, above)
    if kind is Kind.TRIO_WITH_SINGLE:
        return _trio_with(kind, counts, 1, above)
    if kind is Kind.TRIO_WITH_PAIR:
        return _trio_with(kind, counts, 2, above)
    if kind is Kind.STRAIGHT:
        return _chains(kind, counts, 1, 5, size, above)
    if kind is Kind.PAIR_SEQUENCE:
        return _chains(kind, counts, 2, 3, size, above)
    if kind is Kind.TRIO_SEQUENCE:
        return _chains(kind, counts, 3, 2, size, above)
    if kind is Kind.AIRPLANE_WITH_SINGLES:
        return _airplanes(kind, counts, 1, size, above)
    if kind is Kind.AIRPLANE_WITH_PAIRS:
        return _airplanes(kind, counts, 2, size, above)
    if kind is Kind.QUAD_WITH_TWO_SINGLES:
        return _quads(kind, counts, 1, above)
    if kind is Kind.QUAD_WITH_TWO_PAIRS:
        return _quads(kind, counts, 2, above)
    raise ValueError(f"{kind.label} is not generated here")


def _sets(kind: CombinationKind, counts: list[int], width: int, above: int) -> Iterator[Combination]:
    for rank in range(above + 1, _RANK_COUNT):
        if counts[rank] >= width:
            yield Combination(kind, RANKS[rank], width, _REPEAT[rank][width])


def _kicker_ranks(counts: list[int], width: int, excluded: range) -> list[int]:
    return [rank for rank in range(_RANK_COUNT) if counts[rank] >= width and rank not in excluded]


def _joined(parts: Iterable[tuple[int, int]]) -> tuple[Rank, ...]:
    """Ranks of ``(rank, count)`` parts given in ascending rank order."""
    ranks: tuple[Rank, ...] = ()
    for rank, count in parts:
        ranks += _REPEAT[rank][count]
    return ranks


def _trio_with(kind: CombinationKind, counts: list[int], width: int, above: int) -> Iterator[Combination]:
    size = 3 + width
    for trio in range(above + 1, _TWO + 1):
        if counts[trio] < 3:
            continue
        main = RANKS[trio]
        for kicker in _kicker_ranks(counts, width, range(trio, trio + 1)):
            parts = ((kicker, width), (trio, 3)) if kicker < trio else ((trio, 3), (kicker, width))
            yield Combination(kind, main, size, _joined(parts))


def _runs(counts: list[int], width: int, min_links: int, links: int | None, above: int) -> Iterator[range]:
    """Ranges of consecutive chainable ranks each held ``width`` times, topping above ``above``."""
    for low in range(_ACE + 1):
        high = low
        while high <= _ACE and counts[high] >= width:
            length = high - low + 1
            if length >= min_links and high > above and (links is None or links == length):
                yield range(low, high + 1)
            high += 1


def _chains(
    kind: CombinationKind, counts: list[int], width: int, min_links: int, size: int | None, above: int
) -> Iterator[Combination]:
    links = None if size is None else size // width
    for run in _runs(counts, width, min_links, links, above):
        yield Combination(kind, RANKS[run[-1]], width * len(run), _joined((rank, width) for rank in run))


def _airplanes(
    kind: CombinationKind, counts: list[int], width: int, size: int | None, above: int
) -> Iterator[Combination]:
    links = None if size is None else size // (3 + width)
    for run in _runs(counts, 3, 2, links, above):
        main = RANKS[run[-1]]
        n = len(run)
        for wings in combinations(_kicker_ranks(counts, width, run), n):
            if _BLACK_JOKER in wings and _RED_JOKER in wings:
                continue  # both jokers (3p) or both joker pairs (4p) would be the rocket
            parts = sorted([(rank, 3) for rank in run] + [(rank, width) for rank in wings])
            yield Combination(kind, main, (3 + width) * n, _joined(parts))


def _quads(kind: CombinationKind, counts: list[int], width: int, above: int) -> Iterator[Combination]:
    size = 4 + 2 * width
    for quad in range(above + 1, _TWO + 1):
        if counts[quad] < 4:
            continue
        main = RANKS[quad]
        for kickers in combinations(_kicker_ranks(counts, width, range(quad, quad + 1)), 2):
            if kickers == (_BLACK_JOKER, _RED_JOKER):
                continue  # both jokers together are the rocket, never kickers
            parts = sorted([(quad, 4), (kickers[0], width), (kickers[1], width)])
            yield Combination(kind, main, size, _joined(parts))


def _bombs(counts: list[int], variant: Variant, to_beat: Combination | None) -> Iterator[Combination]:
    """Bombs stronger than ``to_beat`` (every bomb when None), weakest first."""
    floor = (0, -1) if to_beat is None else (to_beat.size, to_beat.main_rank)
    for size in range(4, variant.max_bomb_size + 1):
        for rank in range(_TWO + 1):
            if counts[rank] >= size and (size, rank) > floor:
                yield Combination(Kind.BOMB, RANKS[rank], size, _REPEAT[rank][size])


def _rocket(counts: list[int], variant: Variant) -> Iterator[Combination]:
    decks = variant.decks
    if counts[_BLACK_JOKER] >= decks and counts[_RED_JOKER] >= decks:
        yield Combination(
            Kind.ROCKET, Rank.RED_JOKER, 2 * decks, _REPEAT[_BLACK_JOKER][decks] + _REPEAT[_RED_JOKER][decks]
        )


def pick_cards(hand: Sequence[Card], play: Combination) -> tuple[Card, ...]:
    """Concrete cards from ``hand`` that make up ``play``: the lowest suits of each rank.

    Raises ``ValueError`` if the hand does not hold the play.
    """
    needed = [0] * _RANK_COUNT
    for rank in play.ranks:
        needed[rank] += 1
    picked: list[Card] = []
    for card in sorted(hand):
        if needed[card.rank]:
            needed[card.rank] -= 1
            picked.append(card)
    if any(needed):
        raise ValueError(f"the hand does not hold {play}")
    return tuple(picked)
