"""Every play of section 6, each built once and looked up ever after (docs/rules.md section 6).

Move generation (``moves``) never builds a ``Combination``: it looks plays up here by the
ranks that make them up. A ``Combination`` does not depend on the variant (only which
kinds exist does), so both variants share these tables. The small tables are built at
import; the larger ones (airplanes and quads with their kickers, chains by the set of
ranks a hand holds) are filled the first time a hand can make a play, and can never grow
beyond the plays that exist (a few tens of thousands).

Rank sets are also written as *masks*: bit ``r`` set when rank ``r`` is in the set.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import TypeVar

from dizhu.rules.cards import RANKS, Rank
from dizhu.rules.combinations import Combination
from dizhu.rules.variants import CombinationKind

__all__ = [
    "ACE",
    "AIRPLANES",
    "BLACK_JOKER",
    "BOTH_JOKERS",
    "CHAINS",
    "CHAIN_KINDS",
    "CHAIN_LEADS",
    "QUADS",
    "RED_JOKER",
    "ROCKETS",
    "RUNS",
    "SETS",
    "TRIOS_WITH",
    "TWO",
    "Table",
    "chain_mask",
]

Kind = CombinationKind
ACE = int(Rank.ACE)
TWO = int(Rank.TWO)
BLACK_JOKER = int(Rank.BLACK_JOKER)
RED_JOKER = int(Rank.RED_JOKER)
#: Two kickers (or wings) that may never go together: together they are the rocket.
BOTH_JOKERS = (BLACK_JOKER, RED_JOKER)
#: The most cards of one rank any deck holds (two decks of four).
_MAX_OF_A_RANK = 8

K = TypeVar("K")
V = TypeVar("V")


class Table(dict[K, V]):
    """A dict whose missing values are built from their key on first use, then kept."""

    __slots__ = ("_build",)

    def __init__(self, build: Callable[[K], V]) -> None:
        super().__init__()
        self._build = build

    def __missing__(self, key: K) -> V:
        value = self[key] = self._build(key)
        return value


def _ranks(parts: Iterable[tuple[int, int]]) -> tuple[Rank, ...]:
    """The sorted ranks of ``(rank, count)`` parts."""
    return tuple(sorted(RANKS[rank] for rank, count in parts for _ in range(count)))


def _play(kind: CombinationKind, main: int, parts: Iterable[tuple[int, int]]) -> Combination:
    ranks = _ranks(parts)
    return Combination(kind, RANKS[main], len(ranks), ranks)


def _set_kind(width: int) -> CombinationKind:
    return (Kind.SINGLE, Kind.PAIR, Kind.TRIO)[width - 1] if width < 4 else Kind.BOMB


#: ``SETS[width][rank]``: ``width`` cards of ``rank`` (a single, pair, trio, or a bomb from 4 up).
SETS: tuple[tuple[Combination, ...], ...] = (
    (),
    *(
        tuple(_play(_set_kind(width), rank, [(rank, width)]) for rank in range(len(RANKS)))
        for width in range(1, _MAX_OF_A_RANK + 1)
    ),
)

#: ``ROCKETS[decks]``: every joker of ``decks`` decks.
ROCKETS: dict[int, Combination] = {
    decks: _play(Kind.ROCKET, RED_JOKER, [(BLACK_JOKER, decks), (RED_JOKER, decks)]) for decks in (1, 2)
}

#: ``TRIOS_WITH[width][trio][kicker]``: a trio with one kicker of ``width`` (1 or 2) cards.
TRIOS_WITH: dict[int, tuple[dict[int, Combination], ...]] = {
    width: tuple(
        {kicker: _play(kind, trio, [(trio, 3), (kicker, width)]) for kicker in range(len(RANKS)) if kicker != trio}
        for trio in range(TWO + 1)
    )
    for width, kind in ((1, Kind.TRIO_WITH_SINGLE), (2, Kind.TRIO_WITH_PAIR))
}

#: ``CHAIN_KINDS[width]``: the sequence of ``width`` cards per rank and its fewest links.
CHAIN_KINDS: dict[int, tuple[CombinationKind, int]] = {
    1: (Kind.STRAIGHT, 5),
    2: (Kind.PAIR_SEQUENCE, 3),
    3: (Kind.TRIO_SEQUENCE, 2),
}

#: ``CHAINS[width][low][links - fewest links]``: the sequence of ``width`` cards per rank from ``low``.
CHAINS: dict[int, tuple[tuple[Combination, ...], ...]] = {
    width: tuple(
        tuple(
            _play(kind, low + links - 1, [(rank, width) for rank in range(low, low + links)])
            for links in range(min_links, ACE + 2 - low)
        )
        for low in range(ACE + 1)
    )
    for width, (kind, min_links) in CHAIN_KINDS.items()
}

_BITS = tuple(1 << rank for rank in range(len(RANKS)))
_CHAINABLE = (1 << (ACE + 1)) - 1


def chain_mask(ranks: Iterable[int]) -> int:
    """The mask of the chainable ranks (3..A) among distinct ``ranks``."""
    return sum(map(_BITS.__getitem__, ranks)) & _CHAINABLE


def _runs(min_links: int, mask: int) -> tuple[tuple[int, int], ...]:
    """Every run ``(low, links)`` of at least ``min_links`` consecutive ranks of ``mask``, by low then length."""
    found: list[tuple[int, int]] = []
    rank = 0
    while rank <= ACE:
        if not mask >> rank & 1:
            rank += 1
            continue
        start = rank
        while rank <= ACE and mask >> rank & 1:
            rank += 1
        for low in range(start, rank - min_links + 1):
            found.extend((low, links) for links in range(min_links, rank - low + 1))
    return tuple(found)


#: ``RUNS[fewest links][mask]``: the runs of ``_runs``, for the fewest links of a chain kind.
RUNS: dict[int, Table[int, tuple[tuple[int, int], ...]]] = {
    min_links: Table(partial(_runs, min_links)) for _, min_links in CHAIN_KINDS.values()
}


def _chain_leads(width: int, mask: int) -> tuple[Combination, ...]:
    min_links = CHAIN_KINDS[width][1]
    return tuple(CHAINS[width][low][links - min_links] for low, links in RUNS[min_links][mask])


#: ``CHAIN_LEADS[width][mask]``: every sequence of ``width`` cards per rank a hand holding
#: ``mask`` (ranks held ``width`` times or more) can lead, by low rank then length.
CHAIN_LEADS: dict[int, Table[int, tuple[Combination, ...]]] = {
    width: Table(partial(_chain_leads, width)) for width in CHAIN_KINDS
}


def _airplanes(width: int, run: tuple[int, int]) -> Table[tuple[int, ...], Combination]:
    low, links = run
    kind = Kind.AIRPLANE_WITH_SINGLES if width == 1 else Kind.AIRPLANE_WITH_PAIRS
    chain = [(rank, 3) for rank in range(low, low + links)]
    return Table(lambda wings: _play(kind, low + links - 1, chain + [(rank, width) for rank in wings]))


#: ``AIRPLANES[width][low, links][wings]``: the trios of ranks ``low .. low + links - 1`` with
#: wings of ``width`` (1 or 2) cards of each rank in ``wings`` (ascending).
AIRPLANES: dict[int, Table[tuple[int, int], Table[tuple[int, ...], Combination]]] = {
    width: Table(partial(_airplanes, width)) for width in (1, 2)
}


def _quads(width: int, quad: int) -> Table[tuple[int, ...], Combination]:
    kind = Kind.QUAD_WITH_TWO_SINGLES if width == 1 else Kind.QUAD_WITH_TWO_PAIRS
    return Table(lambda kickers: _play(kind, quad, [(quad, 4)] + [(rank, width) for rank in kickers]))


#: ``QUADS[width][quad][kickers]``: four of ``quad`` with two kickers of ``width`` cards each.
QUADS: dict[int, Table[int, Table[tuple[int, ...], Combination]]] = {
    width: Table(partial(_quads, width)) for width in (1, 2)
}
