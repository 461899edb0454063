"""Standings from game outcomes: rates and means with 95% confidence intervals, differentials.

Pure functions of the outcomes (no I/O), so that ``dizhu tournament report`` recomputes
exactly what the run printed. The unit is a *seat-game*: one entrant's result in one game.

* **Win rate**: the share of decided games (not void or abandoned) the entrant's side won,
  with a Wilson score interval.
* **Points per game**: the mean balance change, with a Student-t interval over seat-games.
* **Duplicate differential**: games are grouped in *blocks* -- the games of one deal set and
  line-up (in the duplicate format, one deal played in every seating; in the random format,
  a single game). In each block where the entrant played: its mean points minus the mean
  points of the others in the block; then the mean over blocks, with a t interval over
  blocks. Blocks are independent, and within a block the luck of the cards cancels, which
  is why the duplicate format needs fewer games. Pairwise, the same for two entrants A and
  B over the blocks both played in; ``games_needed`` is how many games a difference of the
  size observed needs for its interval to exclude zero (``(t * sd / mean)^2`` blocks).
* **Ranking** (:func:`ranking`): by the duplicate differential, best first; entrants with the
  same differential share a rank, and two entrants whose pairwise interval includes zero are
  *not separable*: their order is not established. Ratings decide nothing (a second view).
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

__all__ = ["FAULTS", "GameOutcome", "Interval", "mean_interval", "pairwise", "ranking", "standings", "wilson"]

#: Faults counted per entrant; ``timeouts`` come from the replays, the rest from the runner.
FAULTS: Final = ("timeouts", "crashes", "hangs", "illegal", "garbage")
_Z: Final = 1.959963984540054
_T975_SMALL: Final = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776}


@dataclasses.dataclass(frozen=True, slots=True)
class GameOutcome:
    """What one game settled, by seat (from its replay, plus the runner's fault counts)."""

    game: int
    deal_set: int
    lineup: int
    #: The entrant of each seat.
    seating: tuple[str, ...]
    #: ``landlord_won``, ``farmers_won``, ``void`` or ``abandoned``.
    outcome: str
    landlord: int | None
    #: Balance change of each seat (sums to zero).
    changes: tuple[int, ...]
    #: Per seat: fault name -> count (see :data:`FAULTS`).
    faults: tuple[Mapping[str, int], ...]

    def won(self, seat: int) -> bool | None:
        """Whether ``seat``'s side won; None for a game nobody won."""
        if self.outcome not in ("landlord_won", "farmers_won") or self.landlord is None:
            return None
        return (seat == self.landlord) == (self.outcome == "landlord_won")


@dataclasses.dataclass(frozen=True, slots=True)
class Interval:
    """A mean (or rate) and its 95% confidence interval over ``n`` observations."""

    mean: float
    low: float
    high: float
    n: int

    @property
    def excludes_zero(self) -> bool:
        return self.n > 1 and (self.low > 0 or self.high < 0)

    def as_dict(self) -> dict[str, Any]:
        return {"mean": _round(self.mean), "low": _round(self.low), "high": _round(self.high), "n": self.n}


def _round(value: float) -> float:
    return round(value, 6) if math.isfinite(value) else value


def t975(df: int) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom (Cornish-Fisher above 4)."""
    if df in _T975_SMALL:
        return _T975_SMALL[df]
    z, v = _Z, float(df)
    return (
        z
        + (z**3 + z) / (4 * v)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3)
    )


def mean_interval(values: Sequence[float]) -> Interval:
    """The mean of ``values`` with a Student-t 95% interval (infinite below two values)."""
    n = len(values)
    if n == 0:
        return Interval(0.0, -math.inf, math.inf, 0)
    mean = statistics.fmean(values)
    if n == 1:
        return Interval(mean, -math.inf, math.inf, 1)
    half = t975(n - 1) * statistics.stdev(values) / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n)


def wilson(successes: int, n: int) -> Interval:
    """A rate with its Wilson score 95% interval."""
    if n == 0:
        return Interval(0.0, 0.0, 1.0, 0)
    p = successes / n
    centre = (p + _Z**2 / (2 * n)) / (1 + _Z**2 / n)
    half = _Z * math.sqrt(p * (1 - p) / n + _Z**2 / (4 * n * n)) / (1 + _Z**2 / n)
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half), n)


def _role(outcomes: Iterable[tuple[GameOutcome, int]]) -> dict[str, Any]:
    rows = list(outcomes)
    decided = [won for game, seat in rows if (won := game.won(seat)) is not None]
    return {
        "games": len(rows),
        "win_rate": wilson(sum(decided), len(decided)).as_dict(),
        "points": mean_interval([float(game.changes[seat]) for game, seat in rows]).as_dict(),
    }


@dataclasses.dataclass(slots=True)
class _Block:
    """The games of one deal set and line-up: how many, and each entrant's points per seat-game."""

    games: int = 0
    points: dict[str, list[int]] = dataclasses.field(default_factory=lambda: defaultdict(list))


def _blocks(outcomes: Iterable[GameOutcome]) -> list[_Block]:
    blocks: dict[tuple[int, int], _Block] = defaultdict(_Block)
    for game in outcomes:
        block = blocks[game.deal_set, game.lineup]
        block.games += 1
        for seat, name in enumerate(game.seating):
            block.points[name].append(game.changes[seat])
    return list(blocks.values())


def standings(outcomes: Sequence[GameOutcome], entrants: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per entrant (in ``entrants`` order): games, win rate, points overall and by role, differential, faults."""
    seats: dict[str, list[tuple[GameOutcome, int]]] = {name: [] for name in entrants}
    for game in outcomes:
        for seat, name in enumerate(game.seating):
            seats[name].append((game, seat))
    blocks = _blocks(outcomes)
    table: dict[str, dict[str, Any]] = {}
    for name in entrants:
        played = seats[name]
        differential = [
            statistics.fmean(block.points[name])
            - statistics.fmean([p for other, ps in block.points.items() if other != name for p in ps])
            for block in blocks
            if name in block.points and len(block.points) > 1
        ]
        faults = {fault: sum(game.faults[seat].get(fault, 0) for game, seat in played) for fault in FAULTS}
        table[name] = {
            **_role(played),
            "landlord": _role((game, seat) for game, seat in played if game.landlord == seat),
            "farmer": _role(
                (game, seat) for game, seat in played if game.landlord is not None and game.landlord != seat
            ),
            "differential": mean_interval(differential).as_dict(),
            "faults": faults,
        }
    return table


def pairwise(outcomes: Sequence[GameOutcome], entrants: Sequence[str]) -> list[dict[str, Any]]:
    """For each pair (A, B), A before B: the duplicate differential A - B and the games it needs."""
    blocks = _blocks(outcomes)
    pairs: list[dict[str, Any]] = []
    for i, a in enumerate(entrants):
        for b in entrants[i + 1 :]:
            shared = [block for block in blocks if a in block.points and b in block.points]
            diffs = [statistics.fmean(block.points[a]) - statistics.fmean(block.points[b]) for block in shared]
            interval = mean_interval(diffs)
            games = sum(block.games for block in shared)
            needed: int | None = None
            if len(diffs) > 1 and interval.mean != 0:
                blocks_needed = (t975(len(diffs) - 1) * statistics.stdev(diffs) / interval.mean) ** 2
                needed = math.ceil(max(2.0, blocks_needed) * games / len(shared))
            pairs.append(
                {
                    "a": a,
                    "b": b,
                    "differential": interval.as_dict(),
                    "significant": interval.excludes_zero,
                    "blocks": len(diffs),
                    "games": games,
                    "games_needed": needed,
                }
            )
    return pairs


def ranking(
    table: Mapping[str, Mapping[str, Any]], pairs: Sequence[Mapping[str, Any]]
) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """The leaderboard: entrants by duplicate differential (``table`` from :func:`standings`), best first.

    Returns the order and, per entrant, its ``rank`` (shared by equal differentials, as
    published: 1, 1, 3, ...) and ``not_separable_from``: the entrants whose pairwise
    differential (``pairs`` from :func:`pairwise`) does not exclude zero, in leaderboard order.
    An entrant without a block (no differential) comes last.
    """

    def score(name: str) -> float:
        differential = table[name]["differential"]
        return float(differential["mean"]) if differential["n"] else -math.inf

    order = sorted(table, key=lambda name: (-score(name), name))
    position = {name: index for index, name in enumerate(order)}
    unseparated: dict[str, set[str]] = {name: set() for name in order}
    for pair in pairs:
        if not pair["significant"]:
            unseparated[pair["a"]].add(pair["b"])
            unseparated[pair["b"]].add(pair["a"])
    places: dict[str, dict[str, Any]] = {}
    for index, name in enumerate(order):
        tied = index > 0 and score(order[index - 1]) == score(name)
        rank = places[order[index - 1]]["rank"] if tied else index + 1
        places[name] = {"rank": rank, "not_separable_from": sorted(unseparated[name], key=position.__getitem__)}
    return order, places
