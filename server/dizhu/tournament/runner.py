"""Running a tournament: referees, the shared schedule in Redis, games in parallel, the outputs.

One runner process plays ``concurrency`` games at once: each worker claims a game from the
tournament's store (:mod:`dizhu.tournament.store`), renews its lease while the game runs,
and completes it with the game's record. Any number of runners -- on one machine or many,
started at any time -- can share a tournament: they need the same file (same schedule) and
the same Redis. A runner that is killed loses nothing but the games it was playing, which
another runner (or the same file started again) takes over once their leases run out.
When the tournament is complete (or the runner was told to stop after ``max_games``), the
runner writes every recorded game and the results into the output folder.

:func:`collect_tournament` writes the same folder from Redis alone, playing nothing: the
runners' records hold everything the outputs are made of, so the runners of several
machines (pods that keep no disk) need no shared folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import socket
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import grpc
from redis.asyncio import Redis

from dizhu.client import open_channel, tls_credentials
from dizhu.config.settings import REDIS_URL_EXPECTED, is_redis_url
from dizhu.embedded_redis import EmbeddedRedis
from dizhu.tournament import report
from dizhu.tournament.config import ConfigError, TournamentConfig
from dizhu.tournament.games import play_game
from dizhu.tournament.live import LiveView
from dizhu.tournament.players import EntrantPlayers, check_entrant
from dizhu.tournament.ratings import rate
from dizhu.tournament.referees import embedded_referees
from dizhu.tournament.sandbox import Sandbox, opened
from dizhu.tournament.schedule import Game, build_schedule
from dizhu.tournament.stats import GameOutcome, pairwise, ranking, standings
from dizhu.tournament.store import Claim, Progress, TournamentStore

__all__ = ["RunSummary", "collect_tournament", "run_tournament"]

#: How often the live view learns what other runners recorded.
REFRESH_S = 5.0


@dataclasses.dataclass(frozen=True, slots=True)
class RunSummary:
    """What a run did: games it played, where the tournament stands, the results if any."""

    runner: str
    played: int
    progress: Progress
    elapsed_s: float
    output: Path
    results: dict[str, Any] | None
    #: Written by :func:`collect_tournament`: no game played, no runner.
    collected: bool = False

    @property
    def rate(self) -> float:
        return self.played / self.elapsed_s if self.elapsed_s > 0 else 0.0


def _outcome(game: Game, raw: bytes) -> GameOutcome:
    record = json.loads(raw)
    entry = {"game": game.id, "deal_set": game.deal_set, "lineup": game.lineup, "seating": list(game.seating)}
    replay = json.loads(record["replay"]) if record["replay"] else None
    return report.game_outcome(entry, replay, record["seats"])


class _Run:
    """The state of one runner's run (see :func:`run_tournament`)."""

    def __init__(
        self,
        config: TournamentConfig,
        store: TournamentStore,
        targets: Sequence[str],
        api_key: str | None,
        *,
        max_games: int | None,
        runner: str,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.config = dataclasses.replace(config, api_key=api_key)
        self.store = store
        self.targets = list(targets)
        self.credentials = tls_credentials(config.tls_ca) if config.uses_tls else None
        self.schedule = build_schedule(config)
        self.max_games = max_games
        self.runner = runner
        self.claimed = 0
        self.played = 0
        self.outcomes: dict[int, GameOutcome] = {}
        self.players = {
            spec.name: EntrantPlayers(
                spec,
                cwd=config.base_dir,
                stderr_cap=config.stderr_cap_bytes,
                game_timeout_s=config.game_timeout_s,
                environment=config.tls_environment(),
                sandbox=sandbox,
            )
            for spec in config.entrants
        }
        self.tournament_id = f"t{config.fingerprint()[:12]}-{config.name}"[:40]
        self.on_progress: Callable[[], None] = lambda: None
        self._refreshed = 0.0

    async def worker(self, index: int) -> None:
        target = self.targets[index % len(self.targets)]
        async with open_channel(target, self.credentials) as channel:
            while self.max_games is None or self.claimed < self.max_games:
                self.claimed += 1
                claim = await self._claim()
                if claim is None:
                    self.claimed -= 1
                    if (await self.store.progress()).finished:
                        return
                    # Others are playing the rest: wait, in case one of their leases runs out.
                    await asyncio.sleep(min(1.0, self.config.lease_s / 4))
                    continue
                await self._play(claim, channel, target)

    async def _claim(self) -> Claim | None:
        """The next game, if any: a runner stopped while Redis grants it gives it back at once."""
        claiming = asyncio.ensure_future(self.store.claim(self.runner, self.config.lease_s))
        try:
            return await asyncio.shield(claiming)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):  # the claim's own failure: nothing was granted
                granted = await claiming
                if granted is not None:
                    await self.store.release(granted)
            raise

    async def _play(self, claim: Claim, channel: grpc.aio.Channel, target: str) -> None:
        game = self.schedule[claim.game]
        playing = asyncio.create_task(
            play_game(
                game,
                claim,
                config=self.config,
                tournament_id=self.tournament_id,
                channel=channel,
                target=target,
                players=self.players,
            )
        )
        renewing = asyncio.create_task(self._renew(claim, playing))
        try:
            record = await playing
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():  # this runner is stopping: give the game back
                with contextlib.suppress(Exception):
                    await asyncio.shield(self.store.release(claim))
                raise
            return  # the lease was lost (see _renew): another runner has the game
        finally:
            renewing.cancel()
        raw = json.dumps(record.as_json()).encode()
        if await self.store.complete(claim, raw) == 1:
            self.played += 1
            self.outcomes[claim.game] = _outcome(game, raw)
            if time.monotonic() - self._refreshed > REFRESH_S:
                await self.refresh()
            self.on_progress()

    async def _renew(self, claim: Claim, playing: asyncio.Task[Any]) -> None:
        while True:
            await asyncio.sleep(self.config.lease_s / 3)
            if not await self.store.renew(claim, self.config.lease_s):
                playing.cancel()  # taken over after a stall: this runner's result would not count
                return

    async def refresh(self) -> None:
        """Learn the games other runners recorded (for the live view)."""
        self._refreshed = time.monotonic()
        known = set(self.outcomes)
        for index, raw in (await self.store.results()).items():
            if index not in known:
                self.outcomes[index] = _outcome(self.schedule[index], raw)

    def leaderboard(self) -> tuple[list[str], dict[str, dict[str, Any]]]:
        names = [entrant.name for entrant in self.config.entrants]
        outcomes = list(self.outcomes.values())
        table = standings(outcomes, names)
        ratings = rate(outcomes, names).final
        order, places = ranking(table, pairwise(outcomes, names))
        for name in names:
            table[name] = {**places[name], **table[name], "rating": ratings[name]}
        return order, table

    async def aclose(self) -> None:
        await asyncio.gather(*(players.aclose() for players in self.players.values()))


async def _open_store(stack: contextlib.AsyncExitStack, config: TournamentConfig) -> tuple[TournamentStore, str]:
    """The tournament's store on the Redis of :func:`_redis_for` (else an embedded one in the output
    folder, started here), and that Redis's URL; both closed with ``stack``."""
    url = _redis_for(config)
    if url is None:
        embedded = EmbeddedRedis(config.output / "redis", appendonly=True)
        await embedded.astart()
        stack.push_async_callback(embedded.astop)
        url = embedded.url
    redis = Redis.from_url(url)
    stack.push_async_callback(redis.aclose)
    return TournamentStore(redis, config.name, prefix=config.key_prefix), url


def _redis_for(config: TournamentConfig) -> str | None:
    """The Redis of the file or the command line (checked with the configuration), else ``$REDIS_URL``."""
    url = config.redis_url or os.environ.get("REDIS_URL") or None
    if url is not None and not is_redis_url(url):
        raise ConfigError(f"$REDIS_URL: expected {REDIS_URL_EXPECTED}")
    return url


async def run_tournament(
    config: TournamentConfig,
    *,
    max_games: int | None = None,
    fresh: bool = False,
    live: bool | None = None,
    runner_id: str | None = None,
) -> RunSummary:
    """Run (or join, or resume) the tournament ``config`` describes; see the module docstring.

    ``max_games``: stop after claiming that many games. ``fresh``: delete what Redis holds
    for this tournament first. ``live``: the terminal view (None: when on a terminal).
    """
    for spec in config.entrants:
        check_entrant(spec, config.base_dir, config.sandbox)
    runner = runner_id or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    output = config.output
    output.mkdir(parents=True, exist_ok=True)
    async with contextlib.AsyncExitStack() as stack:
        sandbox = None if config.sandbox is None else stack.enter_context(opened(config.sandbox))
        store, url = await _open_store(stack, config)
        if config.referees:
            targets, api_key = list(config.referees), config.api_key
        else:
            targets, api_key = await stack.enter_async_context(
                embedded_referees(
                    config.embedded_referees,
                    url,
                    key_prefix=config.key_prefix,
                    signing_key=output / "private" / "signing-key.pem",
                    extra_args=config.serve_args,
                    unix_sockets=None if sandbox is None else sandbox.socket_dir,
                )
            )
        if fresh:
            await store.delete()
        run = _Run(config, store, targets, api_key, max_games=max_games, runner=runner, sandbox=sandbox)
        await store.init(config.fingerprint(), len(run.schedule))
        stack.push_async_callback(run.aclose)
        await run.refresh()
        progress = await store.progress()
        view = stack.enter_context(LiveView(f"{config.name}", progress.games, progress.done, enabled=live))
        last_shown = 0.0

        def show() -> None:
            nonlocal last_shown
            now = time.monotonic()
            if view.enabled and now - last_shown > 0.5:
                last_shown = now
                order, table = run.leaderboard()
                view.update(len(run.outcomes), run.played / max(now - started, 1e-9), order, table)

        run.on_progress = show
        started = time.monotonic()  # the rate counts playing time, not start-up
        try:
            async with asyncio.TaskGroup() as group:
                for index in range(config.concurrency):
                    group.create_task(run.worker(index))
        except ExceptionGroup as failed:  # the first failure says why (the others are alike)
            raise failed.exceptions[0] from None
        elapsed = time.monotonic() - started
        progress = await store.progress()
        records = await store.results()
        report.export(output, config, run.schedule, records)
        results = report.write_results(output, config.viewer_url) if records else None
        show()
    return RunSummary(runner, run.played, progress, elapsed, output, results)


async def collect_tournament(config: TournamentConfig) -> RunSummary:
    """Write the output folder of the tournament ``config`` describes from what its Redis holds.

    Plays nothing and starts no referee: the records the runners stored (replays, faults,
    logs) are the outputs' only source, exactly as at the end of a run. Redis must hold this
    tournament with this file's schedule (:class:`ScheduleMismatch` otherwise); the folder
    holds the games recorded so far, complete or not (see the summary's ``progress``).
    """
    config.output.mkdir(parents=True, exist_ok=True)
    async with contextlib.AsyncExitStack() as stack:
        store, _ = await _open_store(stack, config)
        await store.expect(config.fingerprint(), config.name)
        progress = await store.progress()
        records = await store.results()
    report.export(config.output, config, build_schedule(config), records)
    results = report.write_results(config.output, config.viewer_url) if records else None
    return RunSummary("collector", 0, progress, 0.0, config.output, results, collected=True)


def summary_lines(summary: RunSummary, config: TournamentConfig) -> list[str]:
    """The run's summary for people: progress, the leaderboard, the head-to-head differentials."""
    p = summary.progress
    played = (
        "collected from Redis"
        if summary.collected
        else f"this runner played {summary.played} in {summary.elapsed_s:.1f} s ({summary.rate:.2f} games/s)"
    )
    recorded = f"{p.done} of {p.games} games recorded ({config.variant}, {config.format} format)"
    lines = [f"Tournament {config.name}: {recorded}; {played}."]
    result = summary.results
    if result is None:
        return lines
    lines.append(report.RANKING_NOTE)
    lines.append(
        f"{'#':>2}  {'entrant':<16} {'differential [95% CI]':<24} {'games':>5}  {'points/game [95% CI]':<24} "
        f"{'win rate':>8}  {'rating':>12}  not separable from"
    )
    for name in result["leaderboard"]:
        e = result["entrants"][name]
        rating = f"{e['rating']['mu']:.1f} ± {e['rating']['sigma']:.1f}"
        lines.append(
            f"{e['rank']:>2}  {name:<16} {report.interval_text(e['differential'], missing='-'):<24} {e['games']:>5}  "
            f"{report.interval_text(e['points'], missing='-'):<24} {100 * e['win_rate']['mean']:>7.1f}%  {rating:>12}  "
            f"{', '.join(e['not_separable_from']) or '-'}"
        )
    for pair in _ranked_pairs(result):
        d = pair["differential"]
        if d["n"] < 2:
            continue
        verdict = "significant" if pair["significant"] else "not separable yet"
        needed = f"; about {pair['games_needed']} games needed" if pair["games_needed"] else ""
        lines.append(
            f"{pair['a']} - {pair['b']}: {d['mean']:+.2f} [{d['low']:+.2f}, {d['high']:+.2f}] points/game, "
            f"duplicate differential ({verdict}{needed})"
        )
    lines.append(f"Results in {summary.output}/: results.json, games.csv, standings.csv, leaderboard.md, ratings.png")
    return lines


def _ranked_pairs(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Pairs oriented best first (by leaderboard), so differentials read as 'A beats B by ...'."""
    rank = {name: i for i, name in enumerate(result["leaderboard"])}
    pairs = []
    for pair in result["pairs"]:
        d = pair["differential"]
        if rank[pair["a"]] > rank[pair["b"]]:
            flipped = {"mean": -d["mean"], "low": -d["high"], "high": -d["low"], "n": d["n"]}
            pairs.append({**pair, "a": pair["b"], "b": pair["a"], "differential": flipped})
        else:
            pairs.append(pair)
    return pairs
