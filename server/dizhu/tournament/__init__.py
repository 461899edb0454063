"""dizhu.tournament: referee-judged bot competitions (``dizhu tournament``; docs/tournaments.md).

* :mod:`~dizhu.tournament.config` -- the tournament file (TOML) and its checks;
* :mod:`~dizhu.tournament.schedule` -- deals from the tournament seed, line-ups, duplicate seatings;
* :mod:`~dizhu.tournament.store` -- schedule, leases and results in Redis, shared by runners;
* :mod:`~dizhu.tournament.players` -- bundled bots, gRPC executables and stdio bots at a seat;
* :mod:`~dizhu.tournament.stdio` -- the stdio protocol ``dizhu.stdio/v1``;
* :mod:`~dizhu.tournament.games` -- one game through the referee, to its replay;
* :mod:`~dizhu.tournament.runner` -- a runner: referees, workers, the live view, the outputs;
* :mod:`~dizhu.tournament.stats`, :mod:`~dizhu.tournament.ratings`, :mod:`~dizhu.tournament.report`
  -- standings with confidence intervals, openskill ratings, the output files.

Every game is played through the referee service (gRPC and Redis), never in process.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dizhu.tournament.config import ConfigError, EntrantSpec, TournamentConfig, load_config
    from dizhu.tournament.report import write_results
    from dizhu.tournament.runner import RunSummary, run_tournament
    from dizhu.tournament.schedule import Game, build_schedule

__all__ = [
    "ConfigError",
    "EntrantSpec",
    "Game",
    "RunSummary",
    "TournamentConfig",
    "build_schedule",
    "load_config",
    "run_tournament",
    "write_results",
]

# Loaded when first used, so that ``dizhu tournament --help`` (dizhu.tournament.cli) needs none
# of the [tournament] extra's packages (openskill, matplotlib), which the ratings and reports do.
_HOMES = {
    "ConfigError": "config",
    "EntrantSpec": "config",
    "TournamentConfig": "config",
    "load_config": "config",
    "write_results": "report",
    "RunSummary": "runner",
    "run_tournament": "runner",
    "Game": "schedule",
    "build_schedule": "schedule",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"dizhu.tournament.{_HOMES[name]}"), name)
