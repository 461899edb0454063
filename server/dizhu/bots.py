"""Bundled bots seated for a person (the web table, ``dizhu play``), as ordinary gRPC clients.

A person asks for bots in the other seats; :class:`BotHost` joins each one through
``JoinTable`` over the referee's gRPC port and plays it with the SDK's
:class:`~dizhu.client.BotRunner` (a ``WatchTable`` stream per bot), exactly as a bot on
another machine would. The referee knows nothing of them.

A bot decides in a worker thread (:class:`OffTheLoop`): the process is a referee too, and a
bot that thinks (``expert`` searches for up to its budget, 100 ms by default) would otherwise
hold up every request and stream of the process while it does. The thread gives the event
loop back at each of the interpreter's switches (5 ms by default), so the referee keeps
serving while a bot thinks.

A process hosts at most ``limit`` bots at once. A bot stops when its table closes, when
the table is gone, or when nothing has happened at the table for ``idle_s`` seconds (a
person who walked away from a table that waits for them).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import grpc
import structlog

from dizhu.client import Bot, BotRunner, DizhuError, TableClient
from dizhu.client.bots import BOT_KINDS
from dizhu.client.client import open_channel
from dizhu.v1 import cards_pb2, rules_service_pb2, table_pb2, table_service_pb2

__all__ = ["BOT_NAMES", "BotHost", "NoRoomForBots", "NotAllSeated", "OffTheLoop"]

_T = TypeVar("_T")

_log = structlog.get_logger("dizhu.bots")
#: The names bots take, by seat.
BOT_NAMES = ("Ann", "Bob", "Cyd", "Dee")


class NoRoomForBots(Exception):
    """The process already hosts as many bots as it may."""


class NotAllSeated(Exception):
    """Not every bot asked for could be seated; ``seated`` are the seats of those that were (they play).

    ``reason`` is the referee's ErrorInfo reason: ``TABLE_FULL`` when the table had fewer free
    seats than bots (then no bot was seated), else the reason it refused the next bot's seat.
    """

    def __init__(self, message: str, reason: str, seated: Sequence[int]) -> None:
        super().__init__(message)
        self.reason = reason
        self.seated = list(seated)


async def _in_a_thread(decide: Callable[..., _T | Awaitable[_T]], *arguments: object) -> _T:
    answer = await asyncio.to_thread(decide, *arguments)
    return await answer if inspect.isawaitable(answer) else answer


class OffTheLoop(Bot):
    """``bot``, deciding in a worker thread so that the event loop that hosts it keeps serving."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.name = bot.name

    def choose_bid(self, view: table_pb2.TableView) -> Awaitable[int]:
        return _in_a_thread(self.bot.choose_bid, view)

    def choose_play(
        self, view: table_pb2.TableView, legal: list[rules_service_pb2.LegalMove], can_pass: bool
    ) -> Awaitable[Sequence[cards_pb2.Card]]:
        return _in_a_thread(self.bot.choose_play, view, legal, can_pass)

    def on_round_over(self, settlement: table_service_pb2.SettleResponse) -> Awaitable[None] | None:
        return self.bot.on_round_over(settlement)


class BotHost:
    """Starts and keeps the bots of one web server; see the module docstring."""

    def __init__(
        self,
        target: str,
        *,
        limit: int,
        idle_s: float = 1800.0,
        credentials: grpc.ChannelCredentials | None = None,
    ) -> None:
        self._target = target
        self._credentials = credentials
        self.limit = limit
        self.idle_s = idle_s
        self._channel: grpc.aio.Channel | None = None
        self._bots: set[asyncio.Task[None]] = set()

    @property
    def running(self) -> int:
        """Bots playing now."""
        return len(self._bots)

    def _open(self) -> grpc.aio.Channel:
        if self._channel is None:
            self._channel = open_channel(self._target, self._credentials)
        return self._channel

    async def seat(self, table_id: str, kinds: Sequence[str]) -> list[int]:
        """Join one bot of each kind to ``table_id``; their seats, once all have joined.

        All or nothing when the table has fewer free seats than bots: :class:`NotAllSeated`
        with none seated. Should the referee refuse a seat after that (someone else took it
        meanwhile), :class:`NotAllSeated` says which bots were seated (they stay and play).
        Raises ``ValueError`` for an unknown kind, :class:`NoRoomForBots` past the limit, and
        the SDK's :class:`~dizhu.client.DizhuError` if the table cannot be read.
        """
        unknown = sorted(set(kinds) - set(BOT_KINDS))
        if unknown:
            raise ValueError(f"unknown bot kind(s) {', '.join(unknown)}: choose among {', '.join(sorted(BOT_KINDS))}")
        if self.running + len(kinds) > self.limit:
            raise NoRoomForBots(f"this server hosts at most {self.limit} bots at once")
        view = await TableClient(self._open(), table_id=table_id).get()
        free = sum(not seat.occupied for seat in view.seats)
        if free < len(kinds):
            raise NotAllSeated(f"{free} free seat(s) for {len(kinds)} bot(s): no bot seated", "TABLE_FULL", [])
        seats: list[int] = []
        for kind in kinds:
            try:
                seats.append(await self._join(table_id, kind))
            except DizhuError as error:
                raise NotAllSeated(
                    f"{error} ({len(seats)} of {len(kinds)} bot(s) seated)", error.reason, seats
                ) from error
        return seats

    async def _join(self, table_id: str, kind: str) -> int:
        """Join one bot of ``kind`` and start it playing; its seat."""
        client = TableClient(self._open(), table_id=table_id)
        view = await client.get()
        free = [seat.seat for seat in view.seats if not seat.occupied]
        name = f"{BOT_NAMES[free[0] % len(BOT_NAMES)] if free else 'Bot'} ({kind} bot)"
        joined = await client.join(name)
        runner = BotRunner(OffTheLoop(BOT_KINDS[kind](os.urandom(16))), client)
        task = asyncio.create_task(self._play(runner, table_id), name=f"bot-{table_id}-{joined.seat}")
        self._bots.add(task)
        task.add_done_callback(self._bots.discard)
        return joined.seat

    async def _play(self, runner: BotRunner, table_id: str) -> None:
        play = asyncio.create_task(runner.run())
        last_version = -1
        try:
            while not play.done():
                await asyncio.wait({play}, timeout=self.idle_s)
                if not play.done() and runner.client.version == last_version:
                    _log.info("bot_idle", table_id=table_id, seat=runner.client.seat)
                    break
                last_version = runner.client.version
        finally:
            play.cancel()
            with contextlib.suppress(asyncio.CancelledError, DizhuError):
                await play

    async def close(self) -> None:
        """Stop every bot (their seats stay taken) and close the channel."""
        bots = list(self._bots)
        for task in bots:
            task.cancel()
        await asyncio.gather(*bots, return_exceptions=True)
        if self._channel is not None:
            await self._channel.close()
