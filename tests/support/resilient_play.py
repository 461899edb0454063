"""Games that go on through outages, and a record of what each client was told.

- :class:`Referees`: ``dizhu serve`` processes on fixed ports, started and stopped without
  blocking the event loop (so games go on meanwhile): a restart keeps the port, as a
  Kubernetes pod behind its Service would.
- :class:`Player`: plays one table to its end through any of the referees, as a careful
  client does: each call that fails with ``UNAVAILABLE`` is sent again -- the same request,
  the same request id -- to the next referee. Every failure's status is counted, and every
  acknowledged decision recorded.
- :class:`Follower`: watches one table to its end, resuming on another referee after the
  last sequence it got whenever its stream breaks.
- :func:`lost_moves`: the acknowledged decisions the table's own record does not hold.

``bench/bench_failover.py`` uses it too.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import functools
import random
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import grpc

from dizhu.testing import ServeProcess, free_port, serve_process
from dizhu.v1 import events_pb2, rules_service_pb2_grpc, table_pb2, table_service_pb2_grpc
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import Decision, Table, TableStub, as_seat, cards_in, decide, rid, send

T = TypeVar("T")
#: Failures a client retries with the same request (the call may not have been applied).
RETRIED = frozenset({grpc.StatusCode.UNAVAILABLE})
#: A referee that stops may cancel a call that reached it as its shutdown began: gRPC's own
#: race, which docs/api.md tells clients to retry too (same request id).
RETRIED_ACROSS_RESTARTS = RETRIED | {grpc.StatusCode.CANCELLED}
#: How long one call may keep failing before the player gives up (a safety net, not a measure).
GIVE_UP_S = 90.0
_CALL_TIMEOUT_S = 10.0
#: A decision refused because the table moved on since the view it was made from.
_STALE = frozenset({grpc.StatusCode.ABORTED, grpc.StatusCode.FAILED_PRECONDITION})


@dataclasses.dataclass
class Endpoint:
    """One referee's stubs, on a channel of its own."""

    target: str
    channel: grpc.aio.Channel
    tables: TableStub
    rules: rules_service_pb2_grpc.RulesServiceStub

    @classmethod
    def open(cls, target: str) -> Endpoint:
        channel = grpc.aio.insecure_channel(target)
        return cls(
            target,
            channel,
            table_service_pb2_grpc.TableServiceStub(channel),
            rules_service_pb2_grpc.RulesServiceStub(channel),
        )


class Referees:
    """``dizhu serve`` processes over one Redis, each on a port it keeps across restarts."""

    def __init__(self, redis_url: str, args: Sequence[str], count: int) -> None:
        self._redis_url = redis_url
        self._args = list(args)
        self.ports = [free_port() for _ in range(count)]
        self._running: dict[int, tuple[contextlib.AbstractContextManager[ServeProcess], ServeProcess]] = {}
        self.endpoints = [Endpoint.open(f"127.0.0.1:{port}") for port in self.ports]

    async def start(self, index: int) -> None:
        """Start referee ``index`` and wait until it serves (in a thread: the games go on)."""
        manager = serve_process(self._redis_url, args=self._args, port=self.ports[index])
        self._running[index] = (manager, await asyncio.to_thread(manager.__enter__))

    async def start_all(self) -> None:
        await asyncio.gather(*(self.start(index) for index in range(len(self.ports))))

    async def stop(self, index: int) -> int:
        """SIGTERM referee ``index`` (a graceful stop, as Kubernetes does) and wait for it; its exit status."""
        manager, running = self._running.pop(index)
        running.process.terminate()
        status = await asyncio.to_thread(running.process.wait, 60)
        await asyncio.to_thread(manager.__exit__, None, None, None)
        return status

    async def aclose(self) -> None:
        for endpoint in self.endpoints:
            await endpoint.channel.close()
        for index in list(self._running):
            await self.stop(index)


@dataclasses.dataclass(frozen=True)
class Acknowledged:
    """A decision the referee acknowledged: the table reached ``version`` with it."""

    version: int
    seat: int
    decision: Decision


@dataclasses.dataclass
class Record:
    """What the clients saw, over every table."""

    #: How often each failure status was met (each retried or raised).
    failures: collections.Counter[grpc.StatusCode] = dataclasses.field(default_factory=collections.Counter)
    #: The details of failures other than the retried ones.
    unexpected: list[str] = dataclasses.field(default_factory=list)
    #: Per table, the decisions acknowledged, in order.
    acknowledged: dict[str, list[Acknowledged]] = dataclasses.field(
        default_factory=lambda: collections.defaultdict(list)
    )
    #: Fresh decisions refused as stale: the table was behind what an earlier answer said.
    behind: int = 0


class _Rotation:
    """Calls through the referees in turn, retrying the same call on the next one while it fails with RETRIED."""

    def __init__(
        self, endpoints: Sequence[Endpoint], record: Record, rng: random.Random, retried: frozenset[grpc.StatusCode]
    ) -> None:
        self._endpoints = endpoints
        self._record = record
        self._retried = retried
        self._next = rng.randrange(len(endpoints))

    async def call(
        self, make: Callable[[Endpoint], Awaitable[T]], *, refusals: frozenset[grpc.StatusCode] = frozenset()
    ) -> T:
        """``make(endpoint)``, retried while it fails with RETRIED; ``refusals`` are raised as expected answers."""
        loop = asyncio.get_running_loop()
        until = loop.time() + GIVE_UP_S
        delay = 0.02
        while True:
            endpoint = self._endpoints[self._next]
            try:
                return await make(endpoint)
            except grpc.aio.AioRpcError as error:
                self._record.failures[error.code()] += 1
                if error.code() in refusals:
                    raise
                if error.code() not in self._retried or loop.time() > until:
                    self._record.unexpected.append(f"{error.code().name}: {error.details()}")
                    raise
            self._next = (self._next + 1) % len(self._endpoints)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.5)


class Player:
    """Plays every seat of one table, through any referee, until the table closes."""

    def __init__(
        self,
        endpoints: Sequence[Endpoint],
        table: Table,
        record: Record,
        *,
        seed: int,
        retried: frozenset[grpc.StatusCode] = RETRIED,
    ) -> None:
        self._table = table
        self._record = record
        self._rng = random.Random(seed)
        self._calls = _Rotation(endpoints, record, self._rng, retried)
        #: Decisions made so far (acknowledged or not).
        self.decisions = 0
        #: Set to stop playing after the decision under way (the table stays open).
        self.stopping = asyncio.Event()
        #: What the player waits for now (for failure messages).
        self.doing = "nothing yet"

    async def run(self, *, pause_s: float = 0.0) -> table_pb2.TableView:
        """Play until the table closes (or :attr:`stopping` is set); its last view.

        ``pause_s`` between decisions paces the game.
        """
        table = self._table
        while True:
            self.doing = "reading the table"
            public = await self._calls.call(functools.partial(_view, table=table, seat=None))
            if public.phase == table_pb2.PHASE_CLOSED or self.stopping.is_set():
                return public
            if not public.HasField("turn_seat"):
                await asyncio.sleep(0.01)  # between rounds
                continue
            seat = public.turn_seat
            self.doing = f"reading seat {seat}'s view"
            mine = await self._calls.call(functools.partial(_view, table=table, seat=seat))
            if mine.turn_seat != seat or mine.phase not in (table_pb2.PHASE_AUCTION, table_pb2.PHASE_PLAY):
                continue
            self.doing = "asking for the legal moves"
            decision = await self._calls.call(functools.partial(_decide, view=mine, rng=self._rng))
            self.decisions += 1
            sending = functools.partial(
                _send, table=table, seat=seat, version=mine.version, decision=decision, request_id=rid()
            )
            self.doing = f"sending seat {seat}'s decision at version {mine.version}"
            try:
                response = await self._calls.call(sending, refusals=_STALE)
            except grpc.aio.AioRpcError:
                self._record.behind += 1  # the table is not where the view just read said
                continue
            self._record.acknowledged[table.table_id].append(Acknowledged(response.table.version, seat, decision))
            if pause_s:
                self.doing = "pausing"
                await asyncio.sleep(pause_s)


async def progress(players: Sequence[Player], decisions: int, record: Record) -> None:
    """Wait until every player made ``decisions`` more decisions (fails, saying where each stands, if not soon)."""
    targets = [player.decisions + decisions for player in players]
    loop = asyncio.get_running_loop()
    until = loop.time() + GIVE_UP_S
    while any(player.decisions < target for player, target in zip(players, targets, strict=True)):
        if loop.time() > until:
            stuck = [player.doing for player, target in zip(players, targets, strict=True) if player.decisions < target]
            raise AssertionError(f"games stalled: {stuck}; {summary(record)}")
        await asyncio.sleep(0.05)


async def _view(endpoint: Endpoint, *, table: Table, seat: int | None) -> table_pb2.TableView:
    metadata = as_seat(table.tokens[seat]) if seat is not None else ()
    request = pb.GetTableRequest(table_id=table.table_id)
    return (await endpoint.tables.GetTable(request, metadata=metadata, timeout=_CALL_TIMEOUT_S)).table


async def _decide(endpoint: Endpoint, *, view: table_pb2.TableView, rng: random.Random) -> Decision:
    return await decide(endpoint.rules, view, rng)


async def _send(
    endpoint: Endpoint, *, table: Table, seat: int, version: int, decision: Decision, request_id: str
) -> pb.BidResponse | pb.PlayResponse:
    return await send(endpoint.tables, table, seat, version, decision, request_id=request_id)


class Follower:
    """Follows one table's events from the first to ``TableClosed``, resuming elsewhere when a stream breaks."""

    def __init__(
        self,
        endpoints: Sequence[Endpoint],
        table_id: str,
        record: Record,
        *,
        seed: int,
        retried: frozenset[grpc.StatusCode] = RETRIED,
    ) -> None:
        self._table_id = table_id
        self._calls = _Rotation(endpoints, record, random.Random(seed), retried)
        #: Every event received, in order (no heartbeats).
        self.events: list[events_pb2.TableEvent] = []
        #: How often the stream broke and was resumed.
        self.resumed = 0

    async def run(self) -> None:
        while not self.events or self.events[-1].WhichOneof("payload") != "table_closed":
            await self._calls.call(self._read)

    async def _read(self, endpoint: Endpoint) -> None:
        """Read from the event after the last one received until the stream ends."""
        after = self.events[-1].sequence if self.events else 0
        call = endpoint.tables.WatchTable(pb.WatchTableRequest(table_id=self._table_id, after_sequence=after))
        try:
            async for response in call:
                if response.event.WhichOneof("payload") != "heartbeat":
                    self.events.append(response.event)
        except grpc.aio.AioRpcError:
            self.resumed += 1
            raise


def lost_moves(acknowledged: Sequence[Acknowledged], log: Sequence[events_pb2.TableEvent]) -> list[Acknowledged]:
    """The acknowledged decisions that the table's record (its events from the first) does not hold."""
    by_version: dict[int, list[events_pb2.TableEvent]] = collections.defaultdict(list)
    for event in log:
        by_version[event.version].append(event)

    def held(ack: Acknowledged) -> bool:
        for event in by_version.get(ack.version, ()):
            kind = event.WhichOneof("payload")
            if ack.decision.amount is not None and kind == "bid_made":
                return (event.bid_made.seat, event.bid_made.amount) == (ack.seat, ack.decision.amount)
            if ack.decision.amount is None and kind == "cards_played":
                played = (event.cards_played.seat, cards_in(event.cards_played.cards))
                return played == (ack.seat, cards_in(ack.decision.cards))
        return False

    return [ack for ack in acknowledged if not held(ack)]


def consecutive(events: Sequence[events_pb2.TableEvent]) -> bool:
    """Whether the events' sequence numbers are 1, 2, 3, ... with no gap or repeat."""
    return [event.sequence for event in events] == list(range(1, len(events) + 1))


async def create_tables(endpoint: Endpoint, count: int, *, round_limit: int) -> list[Table]:
    """``count`` 3-player tables with every seat assigned."""
    from tests.support.grpc_calls import THREE, create_table

    return [await create_table(endpoint.tables, THREE, round_limit=round_limit) for _ in range(count)]


async def play_through(
    referees: Referees,
    tables: Sequence[Table],
    record: Record,
    fault: Callable[[], Awaitable[object]],
    *,
    decisions_before: int = 5,
    pause_s: float = 0.01,
) -> list[table_pb2.TableView]:
    """Play ``tables`` to their end through ``referees``, with ``fault()`` once every player made
    ``decisions_before`` decisions; every table's last view."""
    players = [Player(referees.endpoints, table, record, seed=n) for n, table in enumerate(tables)]
    games = [asyncio.create_task(player.run(pause_s=pause_s)) for player in players]
    try:
        await progress(players, decisions_before, record)
        await fault()
        async with asyncio.timeout(GIVE_UP_S):
            return await asyncio.gather(*games)
    finally:
        for game in games:
            game.cancel()
        await asyncio.gather(*games, return_exceptions=True)


async def close_table(endpoint: Endpoint, table: Table) -> None:
    """Close ``table`` as its creator."""
    request = pb.CloseTableRequest(table_id=table.table_id, request_id=rid())
    await endpoint.tables.CloseTable(request, metadata=as_seat(table.creator_token))


async def read_log(endpoint: Endpoint, table_id: str) -> list[events_pb2.TableEvent]:
    """Every event of a closed table, from the first; read again while the store is ``UNAVAILABLE``
    (a referee's first use of a connection made before Redis restarted can fail once)."""
    for _ in range(20):
        call = endpoint.tables.WatchTable(pb.WatchTableRequest(table_id=table_id, after_sequence=0))
        try:
            return [r.event async for r in call if r.event.WhichOneof("payload") != "heartbeat"]
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNAVAILABLE:
                raise
            await asyncio.sleep(0.1)
    raise AssertionError(f"the log of {table_id} stayed UNAVAILABLE")


def summary(record: Record) -> dict[str, Any]:
    """The record in a few numbers (for assertion messages and benchmarks)."""
    return {
        "failures": {code.name: count for code, count in record.failures.items()},
        "unexpected": record.unexpected[:5],
        "acknowledged": sum(len(acks) for acks in record.acknowledged.values()),
        "behind": record.behind,
    }
