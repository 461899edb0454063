"""A ``WatchTable`` stream that lags again and again goes on in one call, exact, in flat memory.

A reader at half speed on a busy table is told it lags (``LAGGING``, see
:mod:`dizhu.service.feeds`) about every 16 s at the default backlog, and its stream starts again
from a fresh snapshot. An HTTP stream is never cut, so one call restarts thousands of times over
hours: each restart used to call the stream again inside the outer one, holding its subscription,
its presence lease and its frames, until the call died with ``RecursionError`` (INTERNAL) after
about 960 of them.

Here the referee keeps no event waiting for a stream (``stream_backlog=0``): every event its feed
hands the stream makes it start again, so each join and leave of a second player restarts the
first player's stream once.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import sys

import grpc

from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import THREE, as_seat, rid
from tests.support.live import SOON_S, Event, Node, Referees, create, kind

#: Restarts driven in one call: past the ~960 the recursion allowed.
RESTARTS = 2_000
#: Where the memory is first measured: every lazily built cache of the process already built.
WARMED_UP = 200
#: The Python memory blocks a restart may leave behind on average: far fewer than one level of the
#: recursion held (its frames, its subscription's queue, its presence lease and renewal task),
#: more than the process's bounded cache of decoded events takes for each new event meanwhile.
MAX_BLOCKS_PER_RESTART = 20


async def _toggle(node: Node, table_id: str, token: str | None) -> str | None:
    """Seat 1 joins (``token`` None) or leaves the table: one event; the token it holds after."""
    if token is None:
        joined = await node.tables.JoinTable(pb.JoinTableRequest(table_id=table_id, request_id=rid(), player_name="b"))
        return str(joined.seat_token)
    await node.tables.LeaveTable(pb.LeaveTableRequest(table_id=table_id, request_id=rid()), metadata=as_seat(token))
    return None


async def _until_shown(call: grpc.aio.UnaryStreamCall, sequence: int, read: list[Event]) -> int:  # type: ignore[type-arg]
    """Read ``call`` into ``read`` until it has shown ``sequence`` (an event of it, or a snapshot of
    it or later); how many snapshots came meanwhile."""
    snapshots = 0
    async with asyncio.timeout(SOON_S):
        while not (read and read[-1].sequence >= sequence):
            response = await call.read()
            assert response is not grpc.aio.EOF, f"the stream ended: {await call.code()} {await call.details()}"
            read.append(response.event)
            snapshots += kind(response.event) == "snapshot"
    return snapshots


def _allocated_blocks() -> int:
    """The memory blocks Python holds now, garbage collected first (cheap, unlike tracemalloc)."""
    gc.collect()
    return sys.getallocatedblocks()


class TestAStreamThatLagsForHours:
    async def test_restarts_thousands_of_times_in_one_call_exact_and_in_flat_memory(self, referees: Referees) -> None:
        node = await referees.start(stream_backlog=0, heartbeat_s=3600)
        table = await create(node.tables, THREE, players=1)
        call = node.tables.WatchTable(pb.WatchTableRequest(table_id=table.table_id), metadata=table.seat(0))
        read: list[Event] = []
        await _until_shown(call, 0, read)
        token: str | None = None
        restarts = writes = 0
        warmed_up: tuple[int, int] | None = None  # restarts, memory blocks
        while restarts < RESTARTS:
            # Mostly one restart a write; a write that lands while the stream starts again is
            # read from the store instead, and the next one restarts it.
            assert writes < 2 * RESTARTS, f"{writes} writes, {restarts} restarts"
            token = await _toggle(node, table.table_id, token)
            writes += 1
            restarts += await _until_shown(call, await node.store.last_sequence(table.table_id), read)
            if warmed_up is None and restarts >= WARMED_UP:
                warmed_up = restarts, _allocated_blocks()
        assert warmed_up is not None
        grown = _allocated_blocks() - warmed_up[1]
        call.cancel()

        assert kind(read[0]) == "snapshot"
        for before, after in itertools.pairwise(read):
            # An event follows what the stream showed last; a fresh snapshot never goes back and
            # shows the seat's own view, throughout.
            if kind(after) == "snapshot":
                assert after.sequence >= before.sequence, (before, after)
                assert after.snapshot.your_seat == 0
            else:
                assert after.sequence == before.sequence + 1, (before, after)
        assert read[-1].sequence == await node.store.last_sequence(table.table_id)
        last = read[-1]
        if kind(last) == "snapshot":
            assert last.snapshot.seats[1].occupied == (token is not None)
        else:
            assert kind(last) == ("seat_joined" if token is not None else "seat_left")
        per_restart = grown / (restarts - warmed_up[0])
        assert per_restart < MAX_BLOCKS_PER_RESTART, (
            f"{grown:,} more memory blocks, {restarts - warmed_up[0]} restarts on"
        )
