"""Who plays which deal in which seat: the schedule of a tournament, a pure function of its file.

* **Deals.** Deal set ``k`` (from 0) is one deal, seeded by
  ``derive_seed(tournament_seed, "tournament-deal", k)`` (``dizhu.rules.deal.derive_seed``):
  the same tournament seed gives the same deals, bit for bit, on any machine.
* **Line-ups.** With more entrants than seats, a game seats a line-up: a combination of
  entrants, one per seat. Every combination is played on every deal set (or, with
  ``lineups_per_set = k``, deal set ``s`` plays combinations ``s*k .. s*k+k-1`` modulo
  their number, so that every line-up comes round equally often).
* **Seatings.** In the duplicate format every line-up plays each deal in every seating:
  all permutations of its entrants over the seats (``seatings = "all"``: 6 in 3p, 24 in
  4p) or their rotations (``"rotations"``: 3 or 4), so that each entrant holds each hand
  and each seat equally often and the luck of the cards cancels. In the random format
  each deal is played once, by one line-up in a seating drawn from the deal's seed.

Games are numbered deal set by deal set, line-up by line-up, seating by seating.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence

from dizhu.rules.deal import derive_seed
from dizhu.tournament.config import TournamentConfig

__all__ = ["Game", "build_schedule", "lineups", "seatings"]


@dataclasses.dataclass(frozen=True, slots=True)
class Game:
    """One table of the tournament: one deal, played once by the seated entrants."""

    index: int
    deal_set: int
    #: Which line-up (index into :func:`lineups`) sits at the table.
    lineup: int
    #: The entrant of each seat, by seat.
    seating: tuple[str, ...]
    #: The round seed (32 bytes): the table's only preset seed.
    seed: bytes

    @property
    def id(self) -> str:
        return f"g{self.index:05d}"


def seatings(players: int, mode: str) -> list[tuple[int, ...]]:
    """Orders of a line-up's members over the seats: ``"all"`` permutations or ``"rotations"``."""
    if mode == "rotations":
        return [tuple((start + seat) % players for seat in range(players)) for start in range(players)]
    return list(itertools.permutations(range(players)))


def lineups(entrants: Sequence[str], players: int) -> list[tuple[str, ...]]:
    """Every combination of ``players`` entrants, in the entrants' order."""
    return list(itertools.combinations(entrants, players))


def _lineups_of_set(deal_set: int, count: int, per_set: int) -> list[int]:
    if per_set <= 0 or per_set >= count:
        return list(range(count))
    return [(deal_set * per_set + j) % count for j in range(per_set)]


def build_schedule(config: TournamentConfig) -> list[Game]:
    """Every game of the tournament, in order (see the module docstring)."""
    tournament_seed = config.seed_bytes()
    names = [entrant.name for entrant in config.entrants]
    teams = lineups(names, config.players)
    orders = seatings(config.players, config.seatings)
    games: list[Game] = []
    for deal_set in range(config.deal_sets):
        seed = derive_seed(tournament_seed, "tournament-deal", deal_set)
        if config.format == "random":
            lineup = deal_set % len(teams)
            draw = int.from_bytes(derive_seed(seed, "tournament-seating", 0)[:8], "big")
            every = list(itertools.permutations(range(config.players)))
            order = every[draw % len(every)]
            games.append(Game(len(games), deal_set, lineup, tuple(teams[lineup][p] for p in order), seed))
            continue
        for lineup in _lineups_of_set(deal_set, len(teams), config.lineups_per_set):
            for order in orders:
                games.append(Game(len(games), deal_set, lineup, tuple(teams[lineup][p] for p in order), seed))
    return games
