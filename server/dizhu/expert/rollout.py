"""Playing a round to its end fast: the rollout policy and the playout of ``dizhu.expert``.

The search (``search.py``) values a decision by playing many completions of the round, one per
sampled deal, with every seat following this policy. The policy is the heuristic bot's strategy
(``dizhu.client.bots.HeuristicBot``) cut down to what can be decided from a few keys of each
play, computed once per play: a playout costs one legal-move listing per turn (by the engine in
use, native where it is built) and a handful of comparisons.

Hands are rank counts (15 ints, rank 0 = three); plays are the rules core's ``Combination``
values, which either engine makes once and keeps, so the keys of a play are cached by identity.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dizhu.rules import RANKS, Combination, CombinationKind, Rank, Variant, legal_moves

__all__ = ["PlayKeys", "Playout", "keys_of", "play_out", "ranks_of", "rollout_choice"]

_TEN = int(Rank.TEN)
_QUEEN = int(Rank.QUEEN)
_ACE = int(Rank.ACE)
_TWO = int(Rank.TWO)
_BLACK_JOKER = int(Rank.BLACK_JOKER)
_BOMB = CombinationKind.BOMB
_ROCKET = CombinationKind.ROCKET
_SINGLE = CombinationKind.SINGLE
# Which kinds to lead first: those that shed the most weak cards at once (as the heuristic bot).
_TIER = {
    kind: tier
    for tier, kinds in enumerate(
        (
            (
                CombinationKind.AIRPLANE_WITH_PAIRS,
                CombinationKind.AIRPLANE_WITH_SINGLES,
                CombinationKind.TRIO_SEQUENCE,
                CombinationKind.PAIR_SEQUENCE,
                CombinationKind.STRAIGHT,
            ),
            (CombinationKind.TRIO_WITH_PAIR, CombinationKind.TRIO_WITH_SINGLE),
            (CombinationKind.TRIO,),
            (CombinationKind.PAIR,),
            (CombinationKind.SINGLE,),
        )
    )
    for kind in kinds
}
_LAST_TIER = len(_TIER)


@dataclass(frozen=True, slots=True)
class PlayKeys:
    """What the policy reads of one play, computed once."""

    play: Combination
    bomb: bool
    main: int
    size: int
    #: How many cards of each rank it takes, as (rank, count).
    parts: tuple[tuple[int, int], ...]
    #: Cards of rank 2 or a joker it spends.
    premium: int
    #: The order of leads: lowest main group first, then the kinds that shed most, then longest.
    lead_order: tuple[int, int, int, int, int]


_KEYS: dict[int, PlayKeys] = {}


def keys_of(play: Combination) -> PlayKeys:
    """The policy's keys of ``play`` (cached by the play's identity; the cache holds the play)."""
    found = _KEYS.get(id(play))
    if found is not None and found.play is play:
        return found
    counts: dict[int, int] = {}
    for rank in play.ranks:
        counts[int(rank)] = counts.get(int(rank), 0) + 1
    bomb = play.kind is _BOMB or play.kind is _ROCKET
    widest = max(counts.values())
    start = int(play.main_rank) if bomb else min(rank for rank, n in counts.items() if n == widest)
    premium = sum(n for rank, n in counts.items() if rank >= _TWO)
    keys = PlayKeys(
        play=play,
        bomb=bomb,
        main=int(play.main_rank),
        size=play.size,
        parts=tuple(sorted(counts.items())),
        premium=premium,
        lead_order=(
            start,
            premium if start < _TWO else 0,  # no 2 or joker as a kicker
            _TIER.get(play.kind, _LAST_TIER),
            -play.size,
            sum(int(rank) for rank in play.ranks),
        ),
    )
    if len(_KEYS) > 200_000:  # every play of both variants is far fewer; a custom variant's plays are not
        _KEYS.clear()
    _KEYS[id(play)] = keys
    return keys


#: ``_REPEATED[rank][n]``: ``n`` of ``rank``, for ``ranks_of`` (a playout lists a hand's ranks every turn).
_REPEATED = tuple(tuple((rank,) * n for n in range(9)) for rank in RANKS)


def ranks_of(counts: Sequence[int]) -> tuple[Rank, ...]:
    """A hand's ranks, low to high, from its rank counts."""
    ranks: tuple[Rank, ...] = ()
    for rank, n in enumerate(counts):
        if n:
            ranks += _REPEATED[rank][n]
    return ranks


def _breaks(keys: PlayKeys, hand: Sequence[int]) -> bool:
    """Whether the play takes only part of a rank the hand holds (splits a pair, trio or bomb)."""
    return any(hand[rank] != n for rank, n in keys.parts)


def _splits_bomb(keys: PlayKeys, hand: Sequence[int]) -> bool:
    return not keys.bomb and any(hand[rank] >= 4 and rank < _BLACK_JOKER for rank, _ in keys.parts)


def _holds_bomb(hand: Sequence[int]) -> bool:
    """Whether any play could split a bomb of the hand (most hands hold none: the check is skipped)."""
    return max(hand[:_BLACK_JOKER]) >= 4


def rollout_choice(
    legal: Sequence[Combination],
    hand: Sequence[int],
    size: int,
    leading: bool,
    partner_owns: bool,
    opponent_min: int,
    partner_min: int,
    danger_at: int,
) -> Combination | None:
    """The policy's play (None: pass) for a hand of ``size`` cards with counts ``hand``.

    ``leading``: no play to beat; ``partner_owns``: the play to beat is a partner's;
    ``opponent_min`` / ``partner_min``: the fewest cards an opponent / a partner holds;
    ``danger_at``: from how few cards an opponent is about to go out.
    """
    keys = [keys_of(play) for play in legal]
    for key in keys:
        if key.size == size:
            return key.play  # going out ends the round
    bombs_held = _holds_bomb(hand)
    if leading:
        plain = [key for key in keys if not key.bomb]
        unsplit = [key for key in plain if not _splits_bomb(key, hand)] if bombs_held else plain
        pool = unsplit or plain or keys
        if partner_min == 1 and opponent_min > 1:
            singles = [key for key in pool if key.play.kind is _SINGLE]
            if singles:
                return min(singles, key=lambda key: key.main).play
        if opponent_min == 1:
            others = [key for key in pool if key.play.kind is not _SINGLE]
            if others:
                pool = others
            else:
                return max(pool, key=lambda key: key.main).play
        return min(pool, key=lambda key: key.lead_order).play
    danger = opponent_min <= danger_at
    same = [key for key in keys if not key.bomb and not (bombs_held and _splits_bomb(key, hand))]
    whole = [key for key in same if not _breaks(key, hand)]
    best = whole[0] if whole else (same[0] if same else None)
    if best is not None and whole and same[0] is not best and best.main - same[0].main > 4:
        best = same[0]  # splitting a pair or trio to follow costs about four ranks
    if partner_owns:
        if best is not None and not danger and best.main <= _TEN and best.premium == 0 and not _breaks(best, hand):
            return best.play
        return None
    if best is not None:
        if (best.main >= _TWO or best.premium) and not danger and size > 8:
            return None
        return best.play
    bombs = [key for key in keys if key.bomb]
    if not bombs:
        return None
    smallest = min(bombs, key=lambda key: (key.play.kind is _ROCKET, key.size, key.main))
    if danger or size - smallest.size <= 4:
        return smallest.play
    return None


@dataclass(slots=True)
class Playout:
    """A round in play, as the search sees it: every hand known (one sampled deal)."""

    variant: Variant
    landlord: int
    #: Rank counts of every seat's hand (changed in place by ``play_out``).
    hands: list[list[int]]
    sizes: list[int]
    turn: int
    last_play: Combination | None
    last_player: int | None
    #: Passes since the last play.
    passes: int
    doublings: int


def play_out(game: Playout) -> tuple[int, int]:
    """Plays ``game`` to its end with the rollout policy: the seat that went out, and the doublings."""
    variant = game.variant
    players = variant.players
    landlord = game.landlord
    hands, sizes = game.hands, game.sizes
    close = players - 1
    danger_at = 2 if players == 3 else 3
    doubling_bomb = variant.min_doubling_bomb_size
    turn, last_play, last_player, passes, doublings = (
        game.turn,
        game.last_play,
        game.last_player,
        game.passes,
        game.doublings,
    )
    farmers = [seat for seat in range(players) if seat != landlord]
    while True:
        hand = hands[turn]
        leading = last_play is None
        legal = legal_moves(ranks_of(hand), last_play, variant)
        if turn == landlord:
            opponent_min, partner_min, partner_owns = min(sizes[seat] for seat in farmers), 99, False
        else:
            opponent_min = sizes[landlord]
            others = [sizes[seat] for seat in range(players) if seat not in (turn, landlord)]
            partner_min = min(others)
            partner_owns = last_player is not None and last_player != landlord
        play = rollout_choice(legal, hand, sizes[turn], leading, partner_owns, opponent_min, partner_min, danger_at)
        if play is None:
            passes += 1
            if passes == close:
                assert last_player is not None
                turn, last_play, last_player, passes = last_player, None, None, 0
            else:
                turn = (turn + 1) % players
            continue
        for rank in play.ranks:
            hand[rank] -= 1
        sizes[turn] -= play.size
        if play.kind is _ROCKET or (play.kind is _BOMB and play.size >= doubling_bomb):
            doublings += 1
        if sizes[turn] == 0:
            return turn, doublings
        last_play, last_player, passes = play, turn, 0
        turn = (turn + 1) % players
