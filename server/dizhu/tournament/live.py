"""The live terminal view of a run (rich): a progress bar with games, rate and ETA, and the leaderboard.

Shown only when standard output is a terminal; otherwise the view says nothing and the run
prints its summary at the end only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from dizhu.tournament.report import interval_text

__all__ = ["LiveView"]


class LiveView:
    """Progress and leaderboard, refreshed by :meth:`update`; a no-op off a terminal (or when ``enabled`` is False)."""

    def __init__(self, title: str, total: int, done: int, *, enabled: bool | None = None) -> None:
        self.console = Console()
        self.enabled = self.console.is_terminal if enabled is None else enabled
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("games"),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
        )
        self.task = self.progress.add_task(title, total=total, completed=done, rate="")
        self.board = Table()
        self._live = Live(Group(self.progress, self.board), console=self.console, refresh_per_second=4)

    def __enter__(self) -> LiveView:
        if self.enabled:
            self._live.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.enabled:
            self._live.stop()

    def update(
        self, done: int, rate: float, leaderboard: Sequence[str], entrants: Mapping[str, Mapping[str, Any]]
    ) -> None:
        """Show ``done`` games (at ``rate`` games/s here) and the entrants in leaderboard order."""
        if not self.enabled:
            return
        self.progress.update(self.task, completed=done, rate=f"{rate:.1f}/s")
        board = Table(title="Leaderboard by duplicate differential (95% CI)", expand=False)
        columns = ("#", "entrant", "differential", "not separable from", "games", "points/game", "win rate", "rating")
        for column in (*columns, "faults"):
            board.add_column(column)
        for name in leaderboard:
            e = entrants[name]
            board.add_row(
                str(e["rank"]),
                name,
                interval_text(e["differential"], missing="-"),
                ", ".join(e["not_separable_from"]) or "-",
                str(e["games"]),
                interval_text(e["points"], missing="-"),
                f"{100 * e['win_rate']['mean']:.0f}%",
                f"{e['rating']['mu']:.1f} ± {e['rating']['sigma']:.1f}",
                str(sum(e["faults"].values())),
            )
        self.board = board
        self._live.update(Group(self.progress, board))
