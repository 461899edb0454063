"""A table's feed tells one history: times that never go back, and a history rewritten behind it noticed.

Two referees share one Redis (one of them with a clock running behind, as another machine's
may), and a Redis with an AOF is restarted from a truncated copy of it: what a machine crash
with ``appendfsync everysec`` leaves, about a second of writes lost and their sequence
numbers given to later moves. Every stream is a real call to a real referee (port 0).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import random
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import grpc
import redis.asyncio

from dizhu.config import ServerConfig
from dizhu.embedded_redis import EmbeddedRedis
from dizhu.process import Referee, create_server
from dizhu.store import Change, Saved, TableStore
from dizhu.v1 import rules_service_pb2_grpc, table_pb2, table_service_pb2_grpc
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import THREE, RulesStub, Table, TableStub, act, rid, view
from tests.support.live import SOON_S, Event, Referees, Watcher, create, kind, millis, watch
from tests.support.redis_servers import redis_server_binary

#: How far behind the second referee's clock runs.
_BEHIND_MS = 60_000


class _StoreOfASlowClock(TableStore):
    """The store of a referee whose clock reads ``_BEHIND_MS`` earlier than the others'."""

    async def save(self, change: Change) -> Saved:
        time_ms = None if change.time_ms is None else change.time_ms - _BEHIND_MS
        return await super().save(dataclasses.replace(change, time_ms=time_ms))


class _StoreOfAFastClock(TableStore):
    """The store of a referee whose clock reads ``_BEHIND_MS`` later than the others'."""

    async def save(self, change: Change) -> Saved:
        time_ms = None if change.time_ms is None else change.time_ms + _BEHIND_MS
        return await super().save(dataclasses.replace(change, time_ms=time_ms))


@dataclasses.dataclass
class _Referee:
    referee: Referee
    tables: TableStub
    rules: RulesStub
    channel: grpc.aio.Channel


@contextlib.asynccontextmanager
async def _referee(store: TableStore) -> AsyncIterator[_Referee]:
    await store.load_scripts()
    referee = await create_server(ServerConfig(address="127.0.0.1:0", heartbeat_s=0.5), store)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{referee.port}")
    try:
        yield _Referee(
            referee,
            table_service_pb2_grpc.TableServiceStub(channel),
            rules_service_pb2_grpc.RulesServiceStub(channel),
            channel,
        )
    finally:
        await channel.close()
        await asyncio.wait_for(referee.stop(0), SOON_S)


class TestEventTimes:
    async def test_events_applied_by_a_referee_whose_clock_is_behind_never_go_back_in_time(
        self, referees: Referees, redis_url: str
    ) -> None:
        ahead = await referees.start()
        client = redis.asyncio.Redis.from_url(redis_url)
        try:
            async with _referee(_StoreOfASlowClock(client)) as behind:
                table = await create(ahead.tables, THREE)
                watcher = watch(ahead.tables, table.table_id)
                await watcher.wait_kind("snapshot")
                rng = random.Random(7)
                for turn in range(8):
                    node = behind if turn % 2 else ahead
                    await act(node.tables, node.rules, table, rng)
                latest = (await view(ahead.tables, table)).version
                await watcher.wait_for(lambda ms: ms[-1].version == latest, f"the events up to version {latest}")
                await watcher.cancel()
        finally:
            await client.aclose()
        times = [millis(event.time) for event in watcher.events[1:]]
        assert times == sorted(times), times
        # The slow referee's events took the previous event's time, not their own clock's.
        assert max(times) - min(times) < _BEHIND_MS / 2, times

    async def test_an_events_time_is_the_one_its_store_stamped_not_the_one_its_writer_encoded(
        self, redis_url: str
    ) -> None:
        client = redis.asyncio.Redis.from_url(redis_url)
        store = _StoreOfAFastClock(client)
        try:
            async with _referee(store) as node:
                table = await create(node.tables, THREE)
                watcher = watch(node.tables, table.table_id)
                await watcher.wait_kind("snapshot")
                rng = random.Random(11)
                for _ in range(3):
                    await act(node.tables, node.rules, table, rng)
                latest = await store.last_sequence(table.table_id)
                await watcher.wait_for(lambda ms: ms[-1].sequence == latest, f"the events up to sequence {latest}")
                await watcher.cancel()
                log = await store.read_entries(table.table_id, 0)
        finally:
            await client.aclose()
        # Heartbeats (every 0.5 s here) carry the stream's time, not a stored event's.
        events = [message for message in watcher.events[1:] if kind(message) != "heartbeat"]
        streamed = {event.sequence: millis(event.time) for event in events}
        assert len(streamed) >= 3
        # The store stamped them a minute ahead of the time their writer encoded in them.
        assert streamed == {entry.sequence: entry.time_ms for entry in log if entry.sequence in streamed}


@dataclasses.dataclass
class _RolledBack:
    """A table whose store came back behind what its stream delivered."""

    node: _Referee
    store: TableStore
    table: Table
    watcher: Watcher
    #: The messages the stream delivered before the store went down (a snapshot first).
    before: list[Event]
    #: The last event the stream delivered, lost.
    lost: Event


async def _decide(node: _Referee, table: Table, amount: int | None = None) -> None:
    """The seat to act bids ``amount`` (or makes a random legal decision), retried while the
    referee's Redis connection comes back (UNAVAILABLE)."""
    for _ in range(50):
        try:
            if amount is None:
                await act(node.tables, node.rules, table, random.Random(3))
                return
            public = await view(node.tables, table)
            request = pb.BidRequest(
                table_id=table.table_id, request_id=rid(), expected_version=public.version, amount=amount
            )
            await node.tables.Bid(request, metadata=table.seat(public.turn_seat))
            return
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNAVAILABLE:
                raise
            await asyncio.sleep(0.1)
    raise AssertionError("the referee did not get its store back")


@contextlib.asynccontextmanager
async def _store_rolled_back(tmp_path: Path) -> AsyncIterator[_RolledBack]:
    """A referee over a Redis with an AOF, a table and a stream of it; two bids the stream
    delivered are lost by restarting Redis from the AOF as it was before them, and the
    seats then decide otherwise (later events get the lost ones' sequence numbers)."""
    binary = redis_server_binary("6.2")  # one appendonly.aof (Redis 7 keeps a directory of parts)
    # A unix socket in the test's own folder: no other server can take its address while it is
    # down. appendfsync always: each change is in the AOF before it is answered (everysec may
    # hold the writes back for a while when the disk is busy).
    restarted = functools.partial(
        EmbeddedRedis,
        tmp_path,
        appendonly=True,
        unix_socket=True,
        binary=binary,
        extra_args=["--appendfsync", "always"],
    )
    server = await restarted().astart()
    client = redis.asyncio.Redis.from_url(server.url)
    try:
        store = TableStore(client)
        async with _referee(store) as node:
            table = await create(node.tables, THREE)
            watcher = watch(node.tables, table.table_id)
            await watcher.wait_kind("snapshot")
            aof = tmp_path / "appendonly.aof"
            kept_bytes = aof.stat().st_size  # Redis writes the AOF before it answers
            await _decide(node, table, 1)
            await _decide(node, table, 2)
            await watcher.wait_kind("bid_made", 2)
            await watcher.wait_kind("seat_presence", 2)  # each bidder's call announced it: the stream is quiet
            before = list(watcher.messages)
            await server.astop()
            with aof.open("r+b") as file:
                file.truncate(kept_bytes)
            server = await restarted().astart()
            await _decide(node, table, 3)  # in place of the lost bid of 1: ends the auction
            await _decide(node, table)  # the landlord leads: beyond the lost events' sequences
            lost = [message for message in before if kind(message) != "heartbeat"][-1]
            yield _RolledBack(node, store, table, watcher, before, lost)
            await watcher.cancel()
    finally:
        await client.aclose()
        await server.astop()


def _bids(events: Sequence[Event]) -> list[int]:
    return [event.bid_made.amount for event in events if kind(event) == "bid_made"]


class TestRewrittenHistory:
    async def test_an_open_stream_starts_again_from_a_fresh_snapshot_of_the_history_the_store_has_now(
        self, tmp_path: Path
    ) -> None:
        async with _store_rolled_back(tmp_path) as rolled:
            latest = await view(rolled.node.tables, rolled.table)
            # The new history ends at the version the lost one had reached: wait for messages past it.
            seen = len(rolled.before)
            await rolled.watcher.wait_for(
                lambda ms: len(ms) > seen and ms[-1].version == latest.version and kind(ms[-1]) != "heartbeat",
                "the new history",
            )
            after = [m for m in rolled.watcher.messages[len(rolled.before) :] if kind(m) != "heartbeat"]
            assert kind(after[0]) == "snapshot", [kind(m) for m in after]
            assert _bids(rolled.before) == [1, 2]
            assert after[-1].version == latest.version
            # What follows the snapshot is the table's log as the store has it now.
            logged = await rolled.store.read_entries(rolled.table.table_id, after[0].sequence)
            assert [(m.sequence, m.write_id) for m in after[1:]] == [(e.sequence, e.write) for e in logged]

    async def test_a_resume_from_a_lost_event_starts_with_a_fresh_snapshot(self, tmp_path: Path) -> None:
        async with _store_rolled_back(tmp_path) as rolled:
            tables, table_id, lost = rolled.node.tables, rolled.table.table_id, rolled.lost
            # The store gave the lost event's sequence number to another write's event.
            (again,) = await rolled.store.read_entries(table_id, lost.sequence - 1, count=1)
            assert (again.sequence, again.write != lost.write_id) == (lost.sequence, True)
            request = pb.WatchTableRequest(
                table_id=table_id, after_sequence=lost.sequence, after_write_id=lost.write_id
            )
            resumed = Watcher(tables.WatchTable(request))
            first = await resumed.wait_kind("snapshot")
            assert resumed.messages[0] is first
            assert first.snapshot.phase == table_pb2.PHASE_PLAY  # the bid of 3 ended the auction
            await resumed.cancel()

    async def test_a_resume_from_an_event_the_store_kept_goes_on_without_a_snapshot(self, tmp_path: Path) -> None:
        async with _store_rolled_back(tmp_path) as rolled:
            kept = rolled.before[0]  # the first snapshot: its last event was written before the truncated AOF ends
            request = pb.WatchTableRequest(
                table_id=rolled.table.table_id, after_sequence=kept.sequence, after_write_id=kept.write_id
            )
            resumed = Watcher(rolled.node.tables.WatchTable(request))
            await resumed.wait_for(lambda ms: any(kind(m) != "heartbeat" for m in ms), "an event")
            assert resumed.events[0].sequence == kept.sequence + 1
            assert _bids(resumed.events) == [3]
            await resumed.cancel()
