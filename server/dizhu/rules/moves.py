"""Legal-move generation (docs/rules.md sections 5, 6 and 7).

``legal_moves`` lists every play a hand may make, deduplicated by ranks (each choice of
kickers is its own play), in a fixed order: the plays of the type to beat first, lowest
first, then bombs from weakest to strongest, then the rocket. Passing is not a play: it is
allowed exactly when there is a play to beat (the leader of a trick cannot pass).

Generation works on rank counts and builds no play: every play is built once and kept in
a table (``tables``), so generating a move costs a lookup. Leading with a 20-card hand lists
about 80 plays, and players that search or simulate ask for them at every turn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import combinations
from typing import cast

from dizhu.rules.cards import RANKS, Card, Rank
from dizhu.rules.combinations import KIND_BY_NUMBER, Combination
from dizhu.rules.engines import RULES_BY_VARIANT_ID, NativeRules, native_rules
from dizhu.rules.tables import (
    ACE,
    AIRPLANES,
    BLACK_JOKER,
    BOTH_JOKERS,
    CHAIN_KINDS,
    CHAIN_LEADS,
    CHAINS,
    QUADS,
    RED_JOKER,
    ROCKETS,
    RUNS,
    SETS,
    TRIOS_WITH,
    TWO,
    chain_mask,
)
from dizhu.rules.variants import CombinationKind, Variant

__all__ = ["legal_moves", "pick_cards", "play_of_key"]

Kind = CombinationKind
_ALL_RANKS = range(len(RANKS))
_NORMAL_RANKS = range(TWO + 1)
_SINGLES, _PAIRS, _TRIOS = SETS[1], SETS[2], SETS[3]
_TRIOS_WITH_SINGLE, _TRIOS_WITH_PAIR = TRIOS_WITH[1], TRIOS_WITH[2]
_STRAIGHT_LEADS, _PAIR_SEQUENCE_LEADS, _TRIO_SEQUENCE_LEADS = CHAIN_LEADS[1], CHAIN_LEADS[2], CHAIN_LEADS[3]
#: ``_FEWEST_LINKS[width]``: the fewest ranks a sequence of ``width`` cards per rank has.
_FEWEST_LINKS = {width: links for width, (_, links) in CHAIN_KINDS.items()}
_AIRPLANE_RUNS = RUNS[_FEWEST_LINKS[3]]
# Kinds looked up once: on an Enum class, attribute access costs about as much as a call.
_ROCKET = Kind.ROCKET
_BOMB = Kind.BOMB
_TRIO_WITH_SINGLE = Kind.TRIO_WITH_SINGLE
_AIRPLANE_WITH_SINGLES = Kind.AIRPLANE_WITH_SINGLES
_QUAD_WITH_TWO_SINGLES = Kind.QUAD_WITH_TWO_SINGLES
_QUAD_WITH_TWO_PAIRS = Kind.QUAD_WITH_TWO_PAIRS

#: The plays answering a play of one non-bomb kind: ``(counts, size, main rank) -> plays``.
_Follower = Callable[[list[int], int, int], list[Combination]]


def _hand_counts(hand: Iterable[Card] | Iterable[Rank]) -> list[int]:
    """How many cards of each rank ``hand`` holds (cards or bare ranks, not mixed)."""
    items = tuple(hand)  # no copy for a hand that is a tuple already
    counts = [0] * len(RANKS)
    if items and isinstance(items[0], Card):
        for card in cast("tuple[Card, ...]", items):
            counts[card.rank] += 1
    else:
        for rank in cast("tuple[Rank, ...]", items):
            counts[rank] += 1
    return counts


def play_of_key(key: int) -> Combination:
    """The play a native key names: rank counts in four bits a rank (bits 0-59), the kind above.

    The native engine asks for each play once and keeps it.

    The main rank is the highest of the ranks held most often: the rank of a set or bomb, the
    top of a sequence, the (top) trio or the quad under kickers, the red joker of a rocket.
    """
    counts = [key >> (4 * rank) & 0xF for rank in _ALL_RANKS]
    most = max(counts)
    main = max(rank for rank in _ALL_RANKS if counts[rank] == most)
    ranks = tuple(RANKS[rank] for rank in _ALL_RANKS for _ in range(counts[rank]))
    return Combination(KIND_BY_NUMBER[key >> 60], RANKS[main], len(ranks), ranks)


def legal_moves(
    hand: Iterable[Card] | Iterable[Rank],
    to_beat: Combination | None,
    variant: Variant,
) -> list[Combination]:
    """Every play ``hand`` can make on ``to_beat`` (None when leading the trick)."""
    # native_rules' first look, made here: a function call is a tenth of a native follow's cost.
    known = RULES_BY_VARIANT_ID.get(id(variant))
    native = known[1] if known is not None and known[0] is variant else native_rules(variant)
    if native is not None:
        return native.legal_moves(hand, to_beat, play_of_key)
    return python_legal_moves(hand, to_beat, variant)


def native_legal_moves(
    native: NativeRules, hand: Iterable[Card] | Iterable[Rank], to_beat: Combination | None
) -> list[Combination]:
    """``legal_moves`` computed by the native engine's rules ``native``, whichever engine is selected."""
    return native.legal_moves(hand, to_beat, play_of_key)


def python_legal_moves(
    hand: Iterable[Card] | Iterable[Rank],
    to_beat: Combination | None,
    variant: Variant,
) -> list[Combination]:
    """``legal_moves`` computed here, whichever engine is selected."""
    counts = _hand_counts(hand)
    if to_beat is None:
        moves = _leads(counts, variant)
        floor = (0, -1)
    else:
        kind = to_beat.kind
        if kind is _ROCKET:
            return []
        if kind is _BOMB:
            moves = []
            floor = (to_beat.size, to_beat.main_rank)
        else:
            moves = _FOLLOWERS[kind](counts, to_beat.size, to_beat.main_rank)
            floor = (0, -1)
    if max(counts) >= 4:  # only the normal ranks have four cards
        _bombs(moves, counts, variant, floor)
    decks = variant.decks
    if counts[BLACK_JOKER] >= decks and counts[RED_JOKER] >= decks:
        moves.append(ROCKETS[decks])
    return moves


def _leads(counts: list[int], variant: Variant) -> list[Combination]:
    """Every non-bomb play, in the order of section 6's table, each type lowest first."""
    kinds = variant.kinds
    singles = [rank for rank in _ALL_RANKS if counts[rank]]
    pairs = [rank for rank in singles if counts[rank] >= 2]
    trios = [rank for rank in pairs if counts[rank] >= 3]
    moves = [_SINGLES[rank] for rank in singles]
    moves += [_PAIRS[rank] for rank in pairs]
    if trios:
        moves += [_TRIOS[rank] for rank in trios]
        if trios[-1] > TWO:  # three jokers of a colour: no deck has them, no trio of them takes kickers
            trios = [rank for rank in trios if rank <= TWO]
        if _TRIO_WITH_SINGLE in kinds:
            for trio in trios:
                row = _TRIOS_WITH_SINGLE[trio]
                moves += [row[kicker] for kicker in singles if kicker != trio]
        for trio in trios:
            row = _TRIOS_WITH_PAIR[trio]
            moves += [row[kicker] for kicker in pairs if kicker != trio]
    # The guards skip what a hand too small in distinct ranks cannot hold.
    if len(singles) >= _FEWEST_LINKS[1]:
        moves += _STRAIGHT_LEADS[chain_mask(singles)]
    if len(pairs) >= _FEWEST_LINKS[2]:
        moves += _PAIR_SEQUENCE_LEADS[chain_mask(pairs)]
    if len(trios) >= _FEWEST_LINKS[3]:
        trio_mask = chain_mask(trios)
        moves += _TRIO_SEQUENCE_LEADS[trio_mask]
        runs = _AIRPLANE_RUNS[trio_mask]
        if runs:
            if _AIRPLANE_WITH_SINGLES in kinds:
                _add_airplanes(moves, runs, singles, 1)
            _add_airplanes(moves, runs, pairs, 2)
    quads = [rank for rank in trios if counts[rank] >= 4]
    if quads:
        if _QUAD_WITH_TWO_SINGLES in kinds:
            _add_quads(moves, quads, singles, 1)
        if _QUAD_WITH_TWO_PAIRS in kinds:
            _add_quads(moves, quads, pairs, 2)
    return moves


def _add_airplanes(
    moves: list[Combination], runs: Iterable[tuple[int, int]], wing_ranks: list[int], width: int
) -> None:
    """For each run of trios ``(low, links)``: every choice of ``links`` wings of ``width`` cards."""
    tables = AIRPLANES[width]
    for low, links in runs:
        table = tables[low, links]
        wings = [rank for rank in wing_ranks if not low <= rank < low + links]
        if len(wings) >= 2 and wings[-2] == BLACK_JOKER:  # both jokers (pairs in 4p) would be the rocket
            moves += [table[chosen] for chosen in combinations(wings, links) if chosen[-2:] != BOTH_JOKERS]
        else:
            moves += [table[chosen] for chosen in combinations(wings, links)]


def _add_quads(moves: list[Combination], quads: Iterable[int], kicker_ranks: list[int], width: int) -> None:
    """Four of each rank in ``quads`` with every two kickers of ``width`` cards, of two other ranks."""
    tables = QUADS[width]
    for quad in quads:
        table = tables[quad]
        kickers = [rank for rank in kicker_ranks if rank != quad]
        moves += [table[pair] for pair in combinations(kickers, 2) if pair != BOTH_JOKERS]


def _bombs(moves: list[Combination], counts: list[int], variant: Variant, floor: tuple[int, int]) -> None:
    """Bombs stronger than ``floor`` (size, rank), weakest first."""
    quads = [rank for rank in _NORMAL_RANKS if counts[rank] >= 4]
    floor_size, floor_rank = floor
    for size in range(max(4, floor_size), variant.max_bomb_size + 1):
        row = SETS[size]
        above = floor_rank if size == floor_size else -1
        moves += [row[rank] for rank in quads if counts[rank] >= size and rank > above]


# Following: the plays of the kind to beat, of its size, with a higher main rank.


def _follow_sets(width: int) -> _Follower:
    row = SETS[width]

    def follow(counts: list[int], size: int, above: int) -> list[Combination]:
        return [row[rank] for rank in range(above + 1, len(RANKS)) if counts[rank] >= width]

    return follow


def _follow_trios_with(width: int) -> _Follower:
    rows = TRIOS_WITH[width]

    def follow(counts: list[int], size: int, above: int) -> list[Combination]:
        moves: list[Combination] = []
        kickers = [rank for rank in _ALL_RANKS if counts[rank] >= width]
        for trio in range(above + 1, TWO + 1):
            if counts[trio] >= 3:
                row = rows[trio]
                moves += [row[kicker] for kicker in kickers if kicker != trio]
        return moves

    return follow


def _runs_of(counts: list[int], width: int, links: int, above: int) -> list[int]:
    """The low ranks of the runs of ``links`` ranks, each held ``width`` times, topping above ``above``."""
    held = chain_mask([rank for rank in range(ACE + 1) if counts[rank] >= width])
    span = (1 << links) - 1
    return [low for low in range(max(0, above - links + 2), ACE + 2 - links) if held >> low & span == span]


def _follow_chains(width: int) -> _Follower:
    rows = CHAINS[width]
    min_links = _FEWEST_LINKS[width]

    def follow(counts: list[int], size: int, above: int) -> list[Combination]:
        links = size // width
        return [rows[low][links - min_links] for low in _runs_of(counts, width, links, above)]

    return follow


def _follow_airplanes(width: int) -> _Follower:
    def follow(counts: list[int], size: int, above: int) -> list[Combination]:
        moves: list[Combination] = []
        links = size // (3 + width)
        runs = [(low, links) for low in _runs_of(counts, 3, links, above)]
        if runs:
            _add_airplanes(moves, runs, [rank for rank in _ALL_RANKS if counts[rank] >= width], width)
        return moves

    return follow


def _follow_quads(width: int) -> _Follower:
    def follow(counts: list[int], size: int, above: int) -> list[Combination]:
        moves: list[Combination] = []
        quads = [rank for rank in range(above + 1, TWO + 1) if counts[rank] >= 4]
        if quads:
            _add_quads(moves, quads, [rank for rank in _ALL_RANKS if counts[rank] >= width], width)
        return moves

    return follow


#: How to answer each non-bomb kind.
_FOLLOWERS: dict[CombinationKind, _Follower] = {
    Kind.SINGLE: _follow_sets(1),
    Kind.PAIR: _follow_sets(2),
    Kind.TRIO: _follow_sets(3),
    Kind.TRIO_WITH_SINGLE: _follow_trios_with(1),
    Kind.TRIO_WITH_PAIR: _follow_trios_with(2),
    Kind.STRAIGHT: _follow_chains(1),
    Kind.PAIR_SEQUENCE: _follow_chains(2),
    Kind.TRIO_SEQUENCE: _follow_chains(3),
    Kind.AIRPLANE_WITH_SINGLES: _follow_airplanes(1),
    Kind.AIRPLANE_WITH_PAIRS: _follow_airplanes(2),
    Kind.QUAD_WITH_TWO_SINGLES: _follow_quads(1),
    Kind.QUAD_WITH_TWO_PAIRS: _follow_quads(2),
}


def pick_cards(hand: Sequence[Card], play: Combination) -> tuple[Card, ...]:
    """Concrete cards from ``hand`` that make up ``play``: the first of each rank in ``hand``
    (the lowest suits, for a hand sorted as the rules core keeps them).

    Raises ``ValueError`` if the hand does not hold the play.
    """
    needed = [0] * len(RANKS)
    for rank in play.ranks:
        needed[rank] += 1
    picked: list[Card] = []
    size = len(play.ranks)
    if not size:
        return ()
    for card in hand:
        rank = card.rank
        if needed[rank]:
            needed[rank] -= 1
            picked.append(card)
            if len(picked) == size:
                return tuple(picked)
    raise ValueError(f"the hand does not hold {play}")
