"""Ratings with openskill: every decided game is a match of the landlord against the farmer team.

The model is openskill's Plackett-Luce (Weng-Lin), every entrant starting at mu 25, sigma
25/3. Games are rated in schedule order (not in the order runners finished them), so the
ratings are the same however the games were spread. Void and abandoned games rate nobody.
The conservative estimate ``mu - 3 sigma`` (openskill's ``ordinal``) orders the leaderboard.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Final

from openskill.models import PlackettLuce

from dizhu.tournament.stats import GameOutcome

__all__ = ["Ratings", "rate"]

#: At most this many points of the history are kept (evenly spaced), for the plot.
HISTORY_POINTS: Final = 200


@dataclasses.dataclass(frozen=True, slots=True)
class Ratings:
    """Final ratings by entrant, and their history over the games."""

    #: name -> {"mu", "sigma", "ordinal"}.
    final: dict[str, dict[str, float]]
    #: Points of the history: {"games": games rated so far, "ratings": {name: [mu, sigma]}}.
    history: list[dict[str, Any]]


def rate(outcomes: Sequence[GameOutcome], entrants: Sequence[str]) -> Ratings:
    """Rate ``outcomes`` (any order: they are sorted by game) for ``entrants``."""
    model = PlackettLuce()
    ratings = {name: model.rating(name=name) for name in entrants}
    snapshots: list[dict[str, Any]] = []
    decided = [game for game in sorted(outcomes, key=lambda g: g.game) if game.won(0) is not None]
    step = max(1, len(decided) // HISTORY_POINTS)

    def snapshot(done: int) -> None:
        snapshots.append(
            {"games": done, "ratings": {name: [round(r.mu, 4), round(r.sigma, 4)] for name, r in ratings.items()}}
        )

    snapshot(0)
    for done, game in enumerate(decided, start=1):
        landlord = game.landlord
        assert landlord is not None
        farmers = [name for seat, name in enumerate(game.seating) if seat != landlord]
        teams = [[ratings[game.seating[landlord]]], [ratings[name] for name in farmers]]
        ranks = [1.0, 2.0] if game.outcome == "landlord_won" else [2.0, 1.0]
        (new_landlord,), new_farmers = model.rate(teams, ranks=ranks)
        ratings[game.seating[landlord]] = new_landlord
        ratings.update(zip(farmers, new_farmers, strict=True))
        if done % step == 0 or done == len(decided):
            snapshot(done)
    final = {
        name: {"mu": round(r.mu, 4), "sigma": round(r.sigma, 4), "ordinal": round(r.ordinal(), 4)}
        for name, r in ratings.items()
    }
    return Ratings(final, snapshots)
