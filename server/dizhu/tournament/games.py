"""One game of a tournament, played through the referee from table creation to replay.

The runner creates the table as its creator -- the game's seed as the only preset seed,
every seat pre-assigned to its entrant, a round limit of 1 -- hands each seat token to the
entrant's player, follows the table as a spectator until it closes (closing it itself
after ``game_timeout_s``), and fetches the round's replay, signed by the referee, with the
referee's public keys. The creation's ``request_id``
names the tournament, game and attempt, so a runner that lost the answer gets the same
table back, and a game taken over after a lost lease starts on a fresh table.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import grpc
from google.protobuf.duration_pb2 import Duration

from dizhu.client import RetryableError, TableClient
from dizhu.tournament.config import ClockSpec, TournamentConfig
from dizhu.tournament.players import EntrantPlayers, Seat, SeatReport
from dizhu.tournament.report import clock_decisions
from dizhu.tournament.schedule import Game
from dizhu.tournament.store import Claim
from dizhu.v1 import cards_pb2, table_pb2, table_service_pb2, table_service_pb2_grpc

__all__ = ["GameRecord", "play_game", "table_settings"]

_VARIANTS = {"3p": cards_pb2.VARIANT_THREE_PLAYER, "4p": cards_pb2.VARIANT_FOUR_PLAYER}
_POLICIES = {"auto_play": table_pb2.TIMEOUT_POLICY_AUTO_PLAY, "forfeit": table_pb2.TIMEOUT_POLICY_FORFEIT}


def _duration(seconds: float) -> Duration:
    duration = Duration()
    duration.FromMilliseconds(round(seconds * 1000))
    return duration


def table_settings(config: TournamentConfig) -> table_pb2.TableSettings:
    """The settings of every table of the tournament."""
    clock: ClockSpec = config.clock
    settings = table_pb2.TableSettings(
        variant=_VARIANTS[config.variant],
        house_rules=table_pb2.HouseRules(spring=config.spring),
        round_limit=1,
        next_round=table_pb2.NEXT_ROUND_AUTOMATIC,
    )
    if clock.decision_s > 0:
        settings.clock.CopyFrom(
            table_pb2.ClockSettings(
                decision_time=_duration(clock.decision_s),
                timeout_policy=_POLICIES[clock.timeout_policy],
            )
        )
        if clock.first_decision_s > 0:
            settings.clock.first_decision_time.CopyFrom(_duration(clock.first_decision_s))
        if clock.time_bank_s > 0:
            settings.clock.time_bank.CopyFrom(_duration(clock.time_bank_s))
    return settings


@dataclasses.dataclass(frozen=True, slots=True)
class GameRecord:
    """What a runner stores for a game: where it was played, its replay, each seat's faults and log."""

    game: int
    attempt: int
    runner: str
    table_id: str
    #: The round's replay, as the referee's JSON (schema ``dizhu.replay/v1``); "" if none.
    replay: str
    #: Per seat: ``{"entrant", "faults": {...}, "log"}``.
    seats: list[dict[str, Any]]
    #: True when the runner had to close the table (``game_timeout_s``).
    timed_out: bool
    #: The public keys (PEM) of the referee that played the game, which verify its replay.
    referee_keys: str = ""

    def as_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


async def _read(call: Callable[[], Awaitable[Any]], absent: frozenset[grpc.StatusCode]) -> Any:
    """``call()``'s answer, tried again while the referee is briefly unreachable; None for an ``absent`` status."""
    for attempt in range(6):
        try:
            return await call()
        except grpc.aio.AioRpcError as error:
            if error.code() in absent:
                return None
            if error.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED) or attempt == 5:
                raise
            await asyncio.sleep(0.1 * 2**attempt)
    raise AssertionError("unreachable")


async def _replay(channel: grpc.aio.Channel, table_id: str) -> str:
    """The replay JSON of round 1 ("" if the referee has none: a round abandoned before any deal)."""
    stub: Any = table_service_pb2_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
    request = table_service_pb2.GetReplayRequest(table_id=table_id, round=1)
    response = await _read(lambda: stub.GetReplay(request, timeout=10), frozenset({grpc.StatusCode.NOT_FOUND}))
    return "" if response is None else str(response.json)


async def _referee_keys(channel: grpc.aio.Channel) -> str:
    """The referee's public keys as PEM, the current one first ("" from a referee that signs nothing)."""
    stub: Any = table_service_pb2_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
    request = table_service_pb2.GetRefereeKeysRequest()
    response = await _read(lambda: stub.GetRefereeKeys(request, timeout=10), frozenset({grpc.StatusCode.UNIMPLEMENTED}))
    return "" if response is None else "".join(key.pem for key in response.keys)


async def _until_closed(spectator: TableClient) -> None:
    async for event in spectator.watch():
        if event.HasField("table_closed") or (
            event.HasField("snapshot") and event.snapshot.phase == table_pb2.PHASE_CLOSED
        ):
            return


async def play_game(
    game: Game,
    claim: Claim,
    *,
    config: TournamentConfig,
    tournament_id: str,
    channel: grpc.aio.Channel,
    target: str,
    players: Mapping[str, EntrantPlayers],
) -> GameRecord:
    """Play ``game`` on the referee behind ``channel``; its record."""
    creator = TableClient(channel, api_key=config.api_key)
    created = await creator.create_table(
        settings=table_settings(config),
        seeds=[game.seed],
        player_names=list(game.seating),
        request_id=f"{tournament_id}-{game.id}-{claim.attempt}",
    )
    closed = asyncio.Event()
    seats = [
        Seat(
            game=game.id,
            game_index=game.index,
            target=target,
            client=creator.for_seat(token.token, created.table_id),
            seat=token.seat,
            token=token.token,
            variant=config.variant,
            tournament_seed=config.seed_bytes(),
            closed=closed,
        )
        for token in created.seat_tokens
    ]
    tasks = [asyncio.create_task(players[name].play(seat)) for name, seat in zip(game.seating, seats, strict=True)]
    timed_out = False
    try:
        await _follow_until_closed(creator, config.game_timeout_s)
    except TimeoutError:
        timed_out = True
        with contextlib.suppress(Exception):
            await creator.close_table()
    except asyncio.CancelledError:  # the runner stops, or lost the game's lease: so do the seats
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    finally:
        closed.set()
    reports: list[SeatReport] = []
    for task in tasks:
        try:
            reports.append(await asyncio.wait_for(task, 30))
        except TimeoutError:
            reports.append(SeatReport(log="[runner] the seat's player did not stop after the table closed\n"))
    replay = await _replay(channel, created.table_id)
    if replay:
        _note_clock_decisions(reports, json.loads(replay), config.clock.timeout_policy)
    referee_keys = await _referee_keys(channel)
    return GameRecord(
        game=game.index,
        attempt=claim.attempt,
        runner=claim.runner,
        table_id=created.table_id,
        replay=replay,
        seats=[
            {"entrant": name, "faults": {k: n for k, n in sorted(report.faults.items()) if n}, "log": report.log}
            for name, report in zip(game.seating, reports, strict=True)
        ],
        timed_out=timed_out,
        referee_keys=referee_keys,
    )


def _note_clock_decisions(reports: Sequence[SeatReport], replay: Mapping[str, Any], policy: str) -> None:
    """Count and note, in each seat's report, what the referee's clock decided for it (from the replay)."""
    for report, (acted, forfeited) in zip(reports, clock_decisions(replay, len(reports)), strict=True):
        if acted:
            report.faults["timeouts"] += acted
            report.note(f"timeouts: the referee's clock acted for the seat {acted} time(s) (timeout policy {policy})")
        if forfeited:
            report.faults["timeouts"] += 1
            report.note("timeouts: the seat forfeited the round on time (timeout policy forfeit)")


async def _follow_until_closed(creator: TableClient, timeout_s: float) -> None:
    """Follow the table as its creator (a spectator's view) until it closes; TimeoutError after ``timeout_s``."""
    async with asyncio.timeout(timeout_s):
        while True:
            try:
                await _until_closed(creator)
                return
            except RetryableError:
                await asyncio.sleep(0.5)
