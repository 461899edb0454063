"""A stream's times never go back, whichever referee's clock stamped what it delivers.

Each change is made here by a second referee over the same Redis whose clock is off by
``SKEW_S`` (reads with a ``now`` of their own, as in tests/safety): a seat's call
there announces the seat's presence, an event stamped with that clock. The stream is a real
``WatchTable`` of a real referee, whose snapshots and heartbeats carry its own clock; or, for
a process whose clock steps back, the service's own ``watch`` over a real referee's store
with reads whose clock does (as in tests/live/test_live_stream_restarts.py).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator

from dizhu.service import watch as watch_module
from dizhu.service.feeds import TableFeeds
from dizhu.service.metadata import Credentials
from dizhu.service.tables import TableWork
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import THREE, rid
from tests.support.live import Event, Node, Referees, Watcher, create, kind, millis, watch

#: How far the other referee's clock is off: far more than any call takes.
SKEW_S = 5.0


async def _announced_by(node: Node, table_id: str, seat: int, skew_s: float) -> None:
    """``seat`` calls a referee whose clock is ``skew_s`` off: its presence is announced, stamped with that clock."""
    other = TableWork.build(node.store, now=lambda: time.time() + skew_s).reads
    table = await other.table(table_id)
    assert table is not None
    await other.presence.called(table, seat, 0)


def _times(messages: list[Event]) -> list[tuple[str, int]]:
    return [(kind(message), millis(message.time)) for message in messages]


def _never_back(watcher: Watcher) -> None:
    times = [millis(message.time) for message in watcher.messages]
    assert times == sorted(times), _times(watcher.messages)


async def _stored_time(node: Node, table_id: str, sequence: int) -> int:
    (entry,) = await node.store.read_entries(table_id, sequence - 1, count=1)
    assert entry.sequence == sequence
    return entry.time_ms


class TestAStreamsTimes:
    async def test_never_go_back_from_its_snapshot_to_an_event_of_a_slower_clock(self, referees: Referees) -> None:
        node = await referees.start(heartbeat_s=3600)
        table = await create(node.tables, THREE)
        watcher = watch(node.tables, table.table_id)
        snapshot = await watcher.wait_kind("snapshot")
        await _announced_by(node, table.table_id, 1, -SKEW_S)
        event = await watcher.wait_kind("seat_presence")
        assert await _stored_time(node, table.table_id, event.sequence) < millis(snapshot.time)  # as stored: earlier
        _never_back(watcher)
        await watcher.cancel()

    async def test_never_go_back_from_a_heartbeat_to_an_event_of_a_slower_clock(self, referees: Referees) -> None:
        node = await referees.start(heartbeat_s=0.05)
        table = await create(node.tables, THREE)
        watcher = watch(node.tables, table.table_id)
        await watcher.wait_kind("heartbeat", 2)
        await _announced_by(node, table.table_id, 2, -SKEW_S)
        await watcher.wait_kind("seat_presence")
        await watcher.wait_kind("heartbeat", len([m for m in watcher.messages if kind(m) == "heartbeat"]) + 1)
        _never_back(watcher)
        await watcher.cancel()

    async def test_a_snapshot_is_never_earlier_than_the_last_event_it_shows(self, referees: Referees) -> None:
        node = await referees.start(heartbeat_s=3600)
        table = await create(node.tables, THREE)
        await _announced_by(node, table.table_id, 0, SKEW_S)
        latest = await node.store.last_sequence(table.table_id)
        watcher = watch(node.tables, table.table_id)
        snapshot = await watcher.wait_kind("snapshot")
        assert snapshot.sequence == latest
        assert millis(snapshot.time) >= await _stored_time(node, table.table_id, latest)
        await watcher.cancel()

    async def test_a_resumed_streams_heartbeat_is_never_earlier_than_the_event_it_resumes_after(
        self, referees: Referees
    ) -> None:
        node = await referees.start(heartbeat_s=0.05)
        table = await create(node.tables, THREE)
        await _announced_by(node, table.table_id, 0, SKEW_S)
        latest = await node.store.last_sequence(table.table_id)
        watcher = watch(node.tables, table.table_id, after=latest)
        beat = await watcher.wait_kind("heartbeat")
        assert millis(beat.time) >= await _stored_time(node, table.table_id, latest)
        await watcher.cancel()


class _SteppingBack:
    """A process clock ``SKEW_S`` ahead at its first reading, then right (stepped back, as NTP may)."""

    def __init__(self) -> None:
        self.readings = 0

    def __call__(self) -> float:
        self.readings += 1
        return time.time() + (SKEW_S if self.readings == 1 else 0.0)


@contextlib.asynccontextmanager
async def _watched_by_a_clock_stepping_back(
    node: Node, table_id: str, *, heartbeat_s: float, queue_limit: int = 1000
) -> AsyncIterator[AsyncIterator[Event]]:
    """A spectator's ``watch`` of ``table_id`` served by a process whose clock steps back after its snapshot."""
    feeds = TableFeeds(node.store, heartbeat_s=heartbeat_s, queue_limit=queue_limit)
    process = TableWork.build(node.store, now=_SteppingBack()).reads
    stream = watch_module.watch(process, node.store, feeds, table_id, Credentials(), None)
    try:
        yield stream
    finally:
        await stream.aclose()
        await feeds.close()


class TestAProcessClockSteppingBack:
    async def test_never_takes_a_heartbeat_before_the_snapshot(self, referees: Referees) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE)
        async with _watched_by_a_clock_stepping_back(node, table.table_id, heartbeat_s=0.05) as stream:
            messages = [await anext(stream) for _ in range(3)]
        assert [kind(message) for message in messages] == ["snapshot", "heartbeat", "heartbeat"]
        assert [millis(m.time) for m in messages] == [millis(messages[0].time)] * 3, _times(messages)

    async def test_never_takes_a_fresh_snapshot_before_the_first(self, referees: Referees) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE, players=2)
        # No queue: the first event handed to the stream finds it lagging, and it starts again.
        async with _watched_by_a_clock_stepping_back(node, table.table_id, heartbeat_s=3600, queue_limit=0) as stream:
            first = await anext(stream)
            await node.tables.JoinTable(pb.JoinTableRequest(table_id=table.table_id, request_id=rid(), player_name="c"))
            messages = [first, await anext(stream)]
            while kind(messages[-1]) != "snapshot":
                messages.append(await anext(stream))
        times = [millis(message.time) for message in messages]
        assert times == sorted(times), _times(messages)
