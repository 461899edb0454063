"""Determinized Monte-Carlo search: the expert's decisions.

A play: the candidate moves (the rollout policy's own choice, the best of each distinct lead or
follow, the pass, the bombs) are each played on the same sampled deals and the round is played
out by the rollout policy (``rollout.py``); the move with the best mean settlement for this seat
wins. Candidates are halved, the worse half dropped, each time the deals seen double, so that
most playouts go to the moves that matter.

A bid: the seat's hand is played out as the landlord's on sampled deals (the kitty drawn too);
the share of those it wins, against the thresholds of ``BID_THRESHOLDS``, says how high to bid.

Both stop at the deal budget or at the time budget, whichever comes first; without a time
limit a decision depends only on the view and the random generator (seeded by the bot).
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass

from dizhu.expert.knowledge import Knowledge
from dizhu.expert.rollout import Playout, keys_of, play_out, rollout_choice
from dizhu.expert.sampling import sample_hands
from dizhu.rules import MAX_BID, Combination, CombinationKind

__all__ = [
    "BID_THRESHOLDS",
    "COUNTED",
    "Budget",
    "PlaySearch",
    "choose_bid",
    "choose_play",
    "landlord_win_share",
    "search_play",
]

#: The landlord's winning share (in playouts) from which the expert bids 1, 2 and 3, by variant.
BID_THRESHOLDS = {"3p": (0.50, 0.60, 0.70), "4p": (0.40, 0.50, 0.60)}
#: The last seat to speak opens at 1 rather than have the deal thrown in from this share.
OPEN_RATHER_THAN_REDEAL = {"3p": 0.40, "4p": 0.35}
#: How many candidate plays are searched at most (the rest are the same moves' weaker kin).
MOST_CANDIDATES = 10


@dataclass(slots=True)
class Counted:
    """Decisions searched and playouts made in this process (the benchmark reads them)."""

    decisions: int = 0
    playouts: int = 0


COUNTED = Counted()


@dataclass(frozen=True, slots=True)
class Budget:
    """How much a decision may spend: ``seconds`` of thinking (None: no limit), ``deals`` sampled at most."""

    seconds: float | None = 0.1
    deals: int = 96


def _deadline(budget: Budget) -> float | None:
    return None if budget.seconds is None else time.perf_counter() + budget.seconds


def _over(deadline: float | None) -> bool:
    return deadline is not None and time.perf_counter() >= deadline


def _danger_at(knowledge: Knowledge) -> int:
    return 2 if knowledge.variant.players == 3 else 3


def _policy_move(knowledge: Knowledge, legal: Sequence[Combination]) -> Combination | None:
    """What the rollout policy would play here."""
    seat, landlord, sizes = knowledge.seat, knowledge.landlord, knowledge.sizes
    players = knowledge.variant.players
    if seat == landlord:
        opponent_min = min(sizes[other] for other in range(players) if other != seat)
        partner_min, partner_owns = 99, False
    else:
        assert landlord is not None
        opponent_min = sizes[landlord]
        partner_min = min((sizes[other] for other in range(players) if other not in (seat, landlord)), default=99)
        partner_owns = knowledge.to_beat_seat is not None and knowledge.to_beat_seat != landlord
    return rollout_choice(
        legal,
        knowledge.hand,
        sizes[seat],
        knowledge.to_beat is None,
        partner_owns,
        opponent_min,
        partner_min,
        _danger_at(knowledge),
    )


def _candidates(knowledge: Knowledge, legal: Sequence[Combination]) -> list[Combination | None]:
    """The moves worth searching: the policy's, the best of each shape, the bombs, the pass."""
    chosen = _policy_move(knowledge, legal)
    found: list[Combination | None] = [chosen]
    shapes: set[tuple[CombinationKind, int, int]] = set()
    plays = sorted(legal, key=lambda play: keys_of(play).lead_order) if knowledge.to_beat is None else legal
    for play in plays:
        shape = (play.kind, play.size, keys_of(play).lead_order[0])
        if play is chosen or shape in shapes:
            continue
        if play.kind is CombinationKind.BOMB or play.kind is CombinationKind.ROCKET or len(found) < MOST_CANDIDATES:
            shapes.add(shape)
            found.append(play)
    if knowledge.to_beat is not None and chosen is not None:
        found.append(None)
    return found


def _value(knowledge: Knowledge, winner: int, doublings: int) -> float:
    """This seat's settlement, in stakes of the round so far, when ``winner`` went out first."""
    landlord = knowledge.landlord
    landlord_won = winner == landlord
    me_landlord = knowledge.seat == landlord
    share = knowledge.variant.players - 1 if me_landlord else 1
    won = landlord_won == me_landlord
    return float(share << (doublings - knowledge.doublings)) * (1 if won else -1)


def _play_once(knowledge: Knowledge, hands: list[list[int]], move: Combination | None) -> tuple[int, int]:
    """Plays ``move`` for this seat on one sampled deal, then the round out: the winner and doublings."""
    assert knowledge.landlord is not None
    variant = knowledge.variant
    players = variant.players
    seat = knowledge.seat
    sizes = [sum(hand) for hand in hands]
    last_play, last_player, passes = knowledge.to_beat, knowledge.to_beat_seat, knowledge.passes
    doublings = knowledge.doublings
    if move is None:
        passes += 1
        if passes == players - 1:
            assert last_player is not None
            turn, last_play, last_player, passes = last_player, None, None, 0
        else:
            turn = (seat + 1) % players
    else:
        for rank in move.ranks:
            hands[seat][rank] -= 1
        sizes[seat] -= move.size
        if move.kind is CombinationKind.ROCKET or (
            move.kind is CombinationKind.BOMB and move.size >= variant.min_doubling_bomb_size
        ):
            doublings += 1
        if sizes[seat] == 0:
            return seat, doublings
        last_play, last_player, passes, turn = move, seat, 0, (seat + 1) % players
    return play_out(Playout(variant, knowledge.landlord, hands, sizes, turn, last_play, last_player, passes, doublings))


@dataclass(frozen=True, slots=True)
class PlaySearch:
    """What one play's search found: each candidate (None: the pass), the mean settlement its
    playouts gave this seat (in stakes of the round so far) and on how many sampled deals, and the
    move chosen. A learner can imitate the means, not only the choice (``examples/imitation.py``)."""

    candidates: tuple[Combination | None, ...]
    means: tuple[float, ...]
    deals: tuple[int, ...]
    choice: Combination | None


def search_play(knowledge: Knowledge, legal: Sequence[Combination], rng: random.Random, budget: Budget) -> PlaySearch:
    """Searches the candidate moves among ``legal`` (and the pass when there is a play to beat)."""
    candidates = _candidates(knowledge, legal)
    if len(candidates) == 1:
        return PlaySearch((candidates[0],), (0.0,), (0,), candidates[0])
    deadline = _deadline(budget)
    totals = [0.0] * len(candidates)
    seen = [0] * len(candidates)
    alive = list(range(len(candidates)))
    next_cut = 4
    made = 0
    for dealt in range(1, budget.deals + 1):
        try:
            hands = sample_hands(knowledge, rng)
        except ValueError:  # no deal fits what the seat saw: the policy's own move
            return PlaySearch(tuple(candidates), _means(totals, seen), tuple(seen), candidates[0])
        for index in alive:
            winner, doublings = _play_once(knowledge, [list(hand) for hand in hands], candidates[index])
            totals[index] += _value(knowledge, winner, doublings)
            seen[index] += 1
        made += len(alive)
        if _over(deadline):
            break
        if dealt == next_cut and len(alive) > 2:
            alive.sort(key=lambda index: -totals[index])
            alive = sorted(alive[: max(2, len(alive) // 2)])
            next_cut *= 2
    COUNTED.decisions += 1
    COUNTED.playouts += made
    # Ties go to the earlier candidate: the policy's own choice first.
    chosen = candidates[max(alive, key=lambda index: (totals[index], -index))]
    return PlaySearch(tuple(candidates), _means(totals, seen), tuple(seen), chosen)


def _means(totals: list[float], seen: list[int]) -> tuple[float, ...]:
    """Each candidate's mean settlement over the deals it was played on (0 where none)."""
    return tuple(total / count if count else 0.0 for total, count in zip(totals, seen, strict=True))


def choose_play(
    knowledge: Knowledge, legal: Sequence[Combination], rng: random.Random, budget: Budget
) -> Combination | None:
    """The expert's move (None: pass) among ``legal`` (and the pass when there is a play to beat)."""
    return search_play(knowledge, legal, rng, budget).choice


def landlord_win_share(knowledge: Knowledge, rng: random.Random, budget: Budget) -> float:
    """The share of sampled deals this seat wins when it takes the kitty and plays as the landlord."""
    variant = knowledge.variant
    deadline = _deadline(budget)
    seat = knowledge.seat
    wins = played = 0
    for _ in range(budget.deals):
        hands = sample_hands(knowledge, rng, with_kitty=True)
        kitty = hands.pop()
        hands[seat] = [held + extra for held, extra in zip(hands[seat], kitty, strict=True)]
        sizes = [sum(hand) for hand in hands]
        winner, _ = play_out(Playout(variant, seat, hands, sizes, seat, None, None, 0, 0))
        wins += winner == seat
        played += 1
        if _over(deadline):
            break
    COUNTED.decisions += 1
    COUNTED.playouts += played
    return wins / played


def choose_bid(knowledge: Knowledge, rng: random.Random, budget: Budget) -> int:
    """The level the expert's landlord share reaches (0: none); whether it may bid it is the view's ``legal_bids``."""
    share = landlord_win_share(knowledge, rng, budget)
    thresholds = BID_THRESHOLDS[knowledge.variant.name]
    wanted = sum(1 for threshold in thresholds if share >= threshold)
    last_to_speak = knowledge.bids_made == knowledge.variant.players - 1 and knowledge.highest_bid == 0
    if wanted == 0 and last_to_speak and share >= OPEN_RATHER_THAN_REDEAL[knowledge.variant.name]:
        wanted = 1
    return min(wanted, MAX_BID)
