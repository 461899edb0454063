"""Legal-move generation (docs/rules.md sections 5, 6 and 7).

``legal_moves`` lists every play a hand may make, deduplicated by ranks (each choice of
kickers is its own play), in a fixed order: the plays of the type to beat first, lowest
first, then bombs from weakest to strongest, then the rocket. Passing is not a play: it is
allowed exactly when there is a play to beat (the leader of a trick cannot pass).

Generation works on rank counts and builds only plays of the right shape, so following a
play costs little and leading with the 4p landlord's 33 cards stays fast.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Sequence
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

#: Builds a ``Combination`` from its four fields without the named tuple's keyword handling:
#: leading with a big hand creates hundreds of plays.
_combination: Callable[[tuple[CombinationKind, Rank, int, tuple[Rank, ...]]], Combination] = functools.partial(
    tuple.__new__, Combination
)

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
    moves: list[Combination] = []
    if to_beat is None:
        for generate in _lead_generators(variant):
            generate(moves, counts, None, -1)
        _bombs(moves, counts, variant, None)
        _rocket(moves, counts, variant)
        return moves
    kind = to_beat.kind
    if kind is Kind.ROCKET:
        return moves
    if kind is not Kind.BOMB:
        _GENERATORS[kind](moves, counts, to_beat.size, to_beat.main_rank)
    _bombs(moves, counts, variant, to_beat if kind is Kind.BOMB else None)
    _rocket(moves, counts, variant)
    return moves


Moves = list[Combination]
#: Appends the plays of one kind to ``moves``: ``(moves, counts, size or None, above rank)``.
Generator = Callable[[Moves, list[int], int | None, int], None]


def _sets(kind: CombinationKind, width: int) -> Generator:
    """Generator of plays made of ``width`` cards of one rank."""

    def generate(moves: Moves, counts: list[int], size: int | None, above: int) -> None:
        for rank in range(above + 1, _RANK_COUNT):
            if counts[rank] >= width:
                moves.append(_combination((kind, RANKS[rank], width, _REPEAT[rank][width])))

    return generate


def _kicker_ranks(counts: list[int], width: int, excluded: range) -> list[int]:
    return [rank for rank in range(_RANK_COUNT) if counts[rank] >= width and rank not in excluded]


def _joined(parts: Iterable[tuple[int, int]]) -> tuple[Rank, ...]:
    """Ranks of ``(rank, count)`` parts given in ascending rank order."""
    ranks: tuple[Rank, ...] = ()
    for rank, count in parts:
        ranks += _REPEAT[rank][count]
    return ranks


#: ``_CHAIN[w][low][n]``: the ranks of ``n`` consecutive ranks from ``low``, each ``w`` times.
_CHAIN: tuple[tuple[tuple[tuple[Rank, ...], ...], ...], ...] = tuple(
    tuple(
        tuple(_joined((rank, width) for rank in range(low, low + n)) for n in range(_ACE + 2 - low))
        for low in range(_ACE + 1)
    )
    for width in range(4)
)


def _with_wings(chain: tuple[Rank, ...], low: int, wings: tuple[int, ...], width: int) -> tuple[Rank, ...]:
    """``chain`` (starting at rank ``low``) with ``width`` cards of each wing rank, in rank order."""
    below: tuple[Rank, ...] = ()
    above: tuple[Rank, ...] = ()
    for rank in wings:
        if rank < low:
            below += _REPEAT[rank][width]
        else:
            above += _REPEAT[rank][width]
    return below + chain + above


def _trio_with(kind: CombinationKind, width: int) -> Generator:
    """Generator of a trio plus one kicker of ``width`` cards."""
    size = 3 + width

    def generate(moves: Moves, counts: list[int], _size: int | None, above: int) -> None:
        for trio in range(above + 1, _TWO + 1):
            if counts[trio] < 3:
                continue
            main = RANKS[trio]
            trio_ranks = _REPEAT[trio][3]
            for kicker in range(_RANK_COUNT):
                if counts[kicker] >= width and kicker != trio:
                    wing = _REPEAT[kicker][width]
                    ranks = wing + trio_ranks if kicker < trio else trio_ranks + wing
                    moves.append(_combination((kind, main, size, ranks)))

    return generate


def _runs(counts: list[int], width: int, min_links: int, links: int | None, above: int) -> Iterator[range]:
    """Ranges of consecutive chainable ranks each held ``width`` times, topping above ``above``.

    Found from the maximal stretches of such ranks, by lowest rank then length.
    """
    rank = 0
    while rank <= _ACE:
        if counts[rank] < width:
            rank += 1
            continue
        start = rank
        while rank <= _ACE and counts[rank] >= width:
            rank += 1
        end = rank - 1
        for low in range(start, end - min_links + 2):
            if links is None:
                for high in range(max(low + min_links - 1, above + 1), end + 1):
                    yield range(low, high + 1)
            elif above < low + links - 1 <= end:
                yield range(low, low + links)


def _chains(kind: CombinationKind, width: int, min_links: int) -> Generator:
    """Generator of sequences of ``width`` cards per rank, ``min_links`` ranks or more."""

    def generate(moves: Moves, counts: list[int], size: int | None, above: int) -> None:
        links = None if size is None else size // width
        for run in _runs(counts, width, min_links, links, above):
            moves.append(_combination((kind, RANKS[run[-1]], width * len(run), _CHAIN[width][run.start][len(run)])))

    return generate


def _airplanes(kind: CombinationKind, width: int) -> Generator:
    """Generator of k consecutive trios with k wings of ``width`` cards, of k other ranks."""

    def generate(moves: Moves, counts: list[int], size: int | None, above: int) -> None:
        links = None if size is None else size // (3 + width)
        for run in _runs(counts, 3, 2, links, above):
            main = RANKS[run[-1]]
            n = len(run)
            chain = _CHAIN[3][run.start][n]
            total = (3 + width) * n
            for wings in combinations(_kicker_ranks(counts, width, run), n):
                if wings[-1] == _RED_JOKER and _BLACK_JOKER in wings:
                    continue  # both jokers (3p) or both joker pairs (4p) would be the rocket
                moves.append(_combination((kind, main, total, _with_wings(chain, run.start, wings, width))))

    return generate


def _quads(kind: CombinationKind, width: int) -> Generator:
    """Generator of four of a rank with two kickers of ``width`` cards, of two other ranks."""
    size = 4 + 2 * width

    def generate(moves: Moves, counts: list[int], _size: int | None, above: int) -> None:
        for quad in range(above + 1, _TWO + 1):
            if counts[quad] < 4:
                continue
            main = RANKS[quad]
            for kickers in combinations(_kicker_ranks(counts, width, range(quad, quad + 1)), 2):
                if kickers == (_BLACK_JOKER, _RED_JOKER):
                    continue  # both jokers together are the rocket, never kickers
                moves.append(_combination((kind, main, size, _with_wings(_REPEAT[quad][4], quad, kickers, width))))

    return generate


#: How to generate each non-bomb kind, in the order of section 6's table.
_GENERATORS: dict[CombinationKind, Generator] = {
    Kind.SINGLE: _sets(Kind.SINGLE, 1),
    Kind.PAIR: _sets(Kind.PAIR, 2),
    Kind.TRIO: _sets(Kind.TRIO, 3),
    Kind.TRIO_WITH_SINGLE: _trio_with(Kind.TRIO_WITH_SINGLE, 1),
    Kind.TRIO_WITH_PAIR: _trio_with(Kind.TRIO_WITH_PAIR, 2),
    Kind.STRAIGHT: _chains(Kind.STRAIGHT, 1, 5),
    Kind.PAIR_SEQUENCE: _chains(Kind.PAIR_SEQUENCE, 2, 3),
    Kind.TRIO_SEQUENCE: _chains(Kind.TRIO_SEQUENCE, 3, 2),
    Kind.AIRPLANE_WITH_SINGLES: _airplanes(Kind.AIRPLANE_WITH_SINGLES, 1),
    Kind.AIRPLANE_WITH_PAIRS: _airplanes(Kind.AIRPLANE_WITH_PAIRS, 2),
    Kind.QUAD_WITH_TWO_SINGLES: _quads(Kind.QUAD_WITH_TWO_SINGLES, 1),
    Kind.QUAD_WITH_TWO_PAIRS: _quads(Kind.QUAD_WITH_TWO_PAIRS, 2),
}


@functools.cache
def _lead_generators(variant: Variant) -> list[Generator]:
    """The generators of the variant's non-bomb kinds, in the order of section 6's table."""
    return [generate for kind, generate in _GENERATORS.items() if kind in variant.kinds]


def _bombs(moves: Moves, counts: list[int], variant: Variant, to_beat: Combination | None) -> None:
    """Bombs stronger than ``to_beat`` (every bomb when None), weakest first."""
    floor = (0, -1) if to_beat is None else (to_beat.size, to_beat.main_rank)
    for size in range(4, variant.max_bomb_size + 1):
        for rank in range(_TWO + 1):
            if counts[rank] >= size and (size, rank) > floor:
                moves.append(Combination(Kind.BOMB, RANKS[rank], size, _REPEAT[rank][size]))


def _rocket(moves: Moves, counts: list[int], variant: Variant) -> None:
    decks = variant.decks
    if counts[_BLACK_JOKER] >= decks and counts[_RED_JOKER] >= decks:
        moves.append(
            Combination(
                Kind.ROCKET, Rank.RED_JOKER, 2 * decks, _REPEAT[_BLACK_JOKER][decks] + _REPEAT[_RED_JOKER][decks]
            )
        )


def pick_cards(hand: Sequence[Card], play: Combination) -> tuple[Card, ...]:
    """Concrete cards from ``hand`` that make up ``play``: the first of each rank in ``hand``
    (the lowest suits, for a hand sorted as the rules core keeps them).

    Raises ``ValueError`` if the hand does not hold the play.
    """
    needed = [0] * _RANK_COUNT
    for rank in play.ranks:
        needed[rank] += 1
    picked: list[Card] = []
    for card in hand:
        if needed[card.rank]:
            needed[card.rank] -= 1
            picked.append(card)
    if any(needed):
        raise ValueError(f"the hand does not hold {play}")
    return tuple(picked)
