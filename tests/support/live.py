"""Helpers of the live-table tests: referees, watched streams, bots, card extraction.

- :class:`Referees`: in-process referees with their own settings over the test's Redis;
- :class:`Watcher`: a ``WatchTable`` call read in the background, with ``wait_for``;
- :class:`Bots`: seats that play random legal moves whenever it is their turn;
- ``create``: a table with every setting the live features need (clock, redeal cap, ...);
- ``card_paths``: every card a message carries, with the field path it sits under.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime
import os
import random
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis.asyncio
from google.protobuf.message import Message

from dizhu.config import ServerConfig
from dizhu.process import Referee, create_server
from dizhu.store import TableStore
from dizhu.v1 import cards_pb2, events_pb2, rules_service_pb2_grpc, table_pb2, table_service_pb2_grpc
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import (
    THREE,
    Decision,
    RulesStub,
    Table,
    TableStub,
    as_seat,
    card_id,
    create_table,
    decide,
    error_info,
    send,
)
from tests.support.store_fixtures import REDIS, connect

Event = events_pb2.TableEvent
#: Generous bound for anything that should happen "soon" (a stream message, a clock timeout).
SOON_S = 15.0


@dataclasses.dataclass
class Node:
    """One running referee, its store and stubs on a channel of its own."""

    referee: Referee
    store: TableStore
    tables: TableStub
    rules: RulesStub
    channel: grpc.aio.Channel


class Referees:
    """Starts referees over one store (a Redis or a Redis Cluster); ``aclose`` stops them all (servers first)."""

    def __init__(self, redis_url: str, client: redis.asyncio.Redis, store_kind: str = REDIS) -> None:
        self._url = redis_url
        self._client = client
        self._store_kind = store_kind
        self._nodes: list[Node] = []
        self._clients: list[redis.asyncio.Redis] = []

    async def start(self, *, own_redis: bool = False, events_maxlen: int = 10_000, **config: Any) -> Node:
        """A started referee; ``config`` overrides ``ServerConfig`` fields (heartbeat_s, clock_interval_s, ...).

        ``own_redis`` gives it its own Redis client, as another referee process would have.
        """
        client = self._client
        if own_redis:
            client = self.connect()
            self._clients.append(client)
        store = TableStore(client, events_maxlen=events_maxlen)
        await store.load_scripts()
        referee = await create_server(ServerConfig(address="127.0.0.1:0", events_maxlen=events_maxlen, **config), store)
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{referee.port}")
        node = Node(
            referee,
            store,
            table_service_pb2_grpc.TableServiceStub(channel),
            rules_service_pb2_grpc.RulesServiceStub(channel),
            channel,
        )
        self._nodes.append(node)
        return node

    def connect(self) -> Any:
        """A Redis client of its own (a cluster's, over a cluster: ``store_kind``)."""
        return connect(self._store_kind, self._url)

    async def aclose(self) -> None:
        for node in self._nodes:
            await node.channel.close()
        # Bounded: a referee that cannot stop is a failure, not a hung test run.
        await asyncio.wait_for(asyncio.gather(*(node.referee.stop(0) for node in self._nodes)), SOON_S)
        for client in self._clients:
            await client.aclose()


def clock(
    decision_ms: int,
    *,
    bank_ms: int = 0,
    policy: table_pb2.TimeoutPolicy = table_pb2.TIMEOUT_POLICY_AUTO_PLAY,
    first_ms: int | None = None,
) -> table_pb2.ClockSettings:
    settings = table_pb2.ClockSettings(timeout_policy=policy)
    settings.decision_time.FromMilliseconds(decision_ms)
    settings.time_bank.FromMilliseconds(bank_ms)
    if first_ms is not None:
        settings.first_decision_time.FromMilliseconds(first_ms)
    return settings


async def create(
    tables: TableStub,
    variant: cards_pb2.Variant = THREE,
    *,
    players: int | None = None,
    round_limit: int = 0,
    clock_settings: table_pb2.ClockSettings | None = None,
    max_redeals: int | None = None,
    next_round: table_pb2.NextRound = table_pb2.NEXT_ROUND_AUTOMATIC,
    first_dealer: int | None = None,
    seeds: Sequence[bytes] = (),
) -> Table:
    """A table whose first ``players`` seats (default: all) are pre-assigned to p0, p1, ..."""
    return await create_table(
        tables,
        variant,
        players=players,
        round_limit=round_limit,
        clock_settings=clock_settings,
        max_redeals=max_redeals,
        next_round=next_round,
        first_dealer=first_dealer,
        seeds=seeds,
    )


def kind(event: Event) -> str:
    return event.WhichOneof("payload") or ""


class Watcher:
    """A ``WatchTable`` stream read by a background task into ``messages``."""

    def __init__(self, call: Any) -> None:
        self.call = call
        self.messages: list[Event] = []
        self.error: grpc.aio.AioRpcError | None = None
        self.done = False
        self._changed = asyncio.Event()
        self._task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            async for response in self.call:
                self.messages.append(response.event)
                self._changed.set()
        except grpc.aio.AioRpcError as error:
            self.error = error
        except asyncio.CancelledError:
            if not self.call.cancelled():
                raise
        finally:
            self.done = True
            self._changed.set()

    @property
    def events(self) -> list[Event]:
        """The messages without heartbeats."""
        return [message for message in self.messages if kind(message) != "heartbeat"]

    @property
    def last_sequence(self) -> int:
        return self.messages[-1].sequence if self.messages else 0

    async def wait_for(self, done: Callable[[list[Event]], bool], what: str = "", timeout: float = SOON_S) -> None:
        """Wait until ``done(messages)`` holds (fails after ``timeout`` or if the stream ends first)."""
        loop = asyncio.get_running_loop()
        until = loop.time() + timeout
        while not done(self.messages):
            if self.done:
                raise AssertionError(f"the stream ended ({self.error!r}) before: {what}; got {self.kinds()}")
            left = until - loop.time()
            if left <= 0:
                raise AssertionError(f"timed out waiting for: {what}; got {self.kinds()}")
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), left)

    async def wait_kind(self, name: str, count: int = 1, timeout: float = SOON_S) -> Event:
        """Wait for the ``count``-th message of kind ``name``; return it."""
        await self.wait_for(lambda ms: sum(kind(m) == name for m in ms) >= count, f"{count} x {name}", timeout)
        return [m for m in self.messages if kind(m) == name][count - 1]

    async def closed(self, timeout: float = SOON_S) -> grpc.StatusCode:
        """Wait for the stream to end; its status code."""
        await asyncio.wait_for(asyncio.shield(self._task), timeout)
        code: grpc.StatusCode = await self.call.code()
        return code

    async def cancel(self) -> None:
        self.call.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    def kinds(self) -> list[str]:
        return [kind(message) for message in self.messages]


def watch(tables: TableStub, table_id: str, token: str | None = None, after: int | None = None) -> Watcher:
    request = pb.WatchTableRequest(table_id=table_id)
    if after is not None:
        request.after_sequence = after
    return Watcher(tables.WatchTable(request, metadata=as_seat(token) if token is not None else ()))


async def stream_refused(
    tables: TableStub, request: pb.WatchTableRequest, code: grpc.StatusCode, reason: str, token: str | None = None
) -> dict[str, str]:
    """Open a WatchTable that must fail with ``code`` / ``reason`` before any message; its metadata."""
    call = tables.WatchTable(request, metadata=as_seat(token) if token is not None else ())

    async def drain() -> None:
        async with asyncio.timeout(SOON_S):
            received = [response async for response in call]
        raise AssertionError(f"the stream ended without an error after {len(received)} messages")

    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await drain()
    error = caught.value
    assert error.code() == code, f"{error.code()} {error.details()}"
    info = error_info(error)
    assert info.reason == reason, info
    return dict(info.metadata)


async def full_log(tables: TableStub, table_id: str) -> list[Event]:
    """Every event of a closed table, read from the start (after_sequence = 0)."""
    watcher = watch(tables, table_id, after=0)
    assert await watcher.closed() == grpc.StatusCode.OK, watcher.error
    return watcher.events


def card_paths(message: Message, path: str = "") -> Iterator[tuple[str, int]]:
    """``(field path, card id)`` of every ``Card`` anywhere in ``message``."""
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        for item in value if field.is_repeated else (value,):
            if isinstance(item, cards_pb2.Card):
                yield f"{path}{field.name}", card_id(item)
            else:
                yield from card_paths(item, f"{path}{field.name}.")


class Bots:
    """Seats that make random legal decisions whenever it is their turn, until the table closes.

    A bot decides on the version it read, so the only refusals it may meet are those of a race
    with the clock (or another referee) changing the table meanwhile: STALE_STATE, or
    TABLE_CLOSED once the table closed. It reads the table again after those, and counts them
    in ``races``; any other refusal (a legal move refused) ends it with that error. In the
    auction a bot bids ``bid`` if given (3 ends the auction at once).
    """

    #: The refusals a race with another change of the table explains.
    RACES = frozenset({"STALE_STATE", "TABLE_CLOSED"})

    def __init__(
        self,
        tables: TableStub,
        rules: RulesStub,
        table: Table,
        seats: Sequence[int],
        *,
        seed: int = 0,
        bid: int | None = None,
    ) -> None:
        self._tables = tables
        self._rules = rules
        self._table = table
        self._seats = set(seats)
        self._rng = random.Random(seed)
        self._bid = bid
        self.races = 0
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        table = self._table
        while True:
            public = (await self._tables.GetTable(pb.GetTableRequest(table_id=table.table_id))).table
            if public.phase == table_pb2.PHASE_CLOSED:
                return
            if not public.HasField("turn_seat") or public.turn_seat not in self._seats:
                await asyncio.sleep(0.005)
                continue
            seat = public.turn_seat
            mine = (
                await self._tables.GetTable(pb.GetTableRequest(table_id=table.table_id), metadata=table.seat(seat))
            ).table
            if mine.turn_seat != seat or mine.phase not in (table_pb2.PHASE_AUCTION, table_pb2.PHASE_PLAY):
                continue
            decision = await decide(self._rules, mine, self._rng)
            if mine.phase == table_pb2.PHASE_AUCTION and self._bid is not None:
                decision = Decision(amount=self._bid if self._bid > mine.highest_bid else 0)
            try:
                await send(self._tables, table, seat, mine.version, decision)
            except grpc.aio.AioRpcError as error:
                if error_info(error).reason not in self.RACES:
                    raise
                self.races += 1

    async def finished(self, timeout: float = 60.0) -> None:
        await asyncio.wait_for(self.task, timeout)


def millis(timestamp: Any) -> int:
    value: int = timestamp.ToMilliseconds()
    return value


def utc_now_ms() -> int:
    return int(datetime.datetime.now(tz=datetime.UTC).timestamp() * 1000)


async def run_cli(*args: str, stdin: bytes | None = None) -> tuple[int, str]:
    """``python -m dizhu.cli ARGS`` from this source tree: its exit status and output (stdout and stderr)."""
    root = Path(__file__).resolve().parents[2]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(root / "server"), str(root / "clients" / "python")]),
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "dizhu.cli",
        *args,
        env=env,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await asyncio.wait_for(process.communicate(stdin), 60)
    assert process.returncode is not None
    return process.returncode, output.decode()
