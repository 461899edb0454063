"""A move after the referee's own write of the table: decided without reading the table again.

The referee writes a change it decided on the state it holds only if the store still holds
exactly that state and the presence its answer reports (one compare-and-set); anything else
is decided on the table as read. These tests pin both halves against real referees sharing
one Redis: the round trips a move costs, and that no answer comes from a state or a
presence the store no longer holds.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import pytest
import redis.asyncio

from dizhu.config import ServerConfig
from dizhu.process import Referee, create_server
from dizhu.store import TableStore
from dizhu.v1 import table_pb2, table_service_pb2_grpc
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import SEED, THREE, Table, TableStub, create_table, error_info, rid, view

#: Seat leases that no test outlives: no lease is due for renewal, so every script run is a move's.
_QUIET_PRESENCE = {"presence_window_s": 3600.0, "presence_lease_s": 1800.0}


@pytest.fixture
async def quiet_tables(store: TableStore) -> AsyncIterator[TableStub]:
    """A referee whose seats' leases need no renewal during a test, and a stub to it."""
    server: Referee = await create_server(ServerConfig(address="127.0.0.1:0", **_QUIET_PRESENCE), store)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        yield table_service_pb2_grpc.TableServiceStub(channel)
    await server.stop(0)


async def _scripts_run(client: redis.asyncio.Redis) -> int:
    stats = await client.info("commandstats")
    return int(stats.get("cmdstat_evalsha", {}).get("calls", 0))


async def _pass(tables: TableStub, table: Table, at: table_pb2.TableView) -> table_pb2.TableView:
    """The seat to act at ``at`` passes (a bid of 0); the table's view after it."""
    request = pb.BidRequest(table_id=table.table_id, request_id=rid(), expected_version=at.version, amount=0)
    response: pb.BidResponse = await tables.Bid(request, metadata=table.seat(at.turn_seat))
    return response.table


async def _passed_once(tables: TableStub) -> tuple[Table, table_pb2.TableView, table_pb2.TableView]:
    """A new 3p table (a fixed deal), its first view, and its view after the first seat passed."""
    table = await create_table(tables, THREE, seeds=[SEED], first_dealer=0)
    first = await view(tables, table)
    return table, first, await _pass(tables, table, first)


class TestRoundTrips:
    async def test_moves_one_referee_serves_one_after_another_cost_one_script_each(
        self, quiet_tables: TableStub, redis_client: redis.asyncio.Redis
    ) -> None:
        table, _, current = await _passed_once(quiet_tables)
        # Each seat calls once first: its first call takes its lease (a script of its own).
        for _ in range(2):
            current = await _pass(quiet_tables, table, current)
        scripts_before = await _scripts_run(redis_client)
        moves = 6  # passes: each third one throws the deal in and deals again
        for _ in range(moves):
            current = await _pass(quiet_tables, table, current)
        assert await _scripts_run(redis_client) - scripts_before == moves

    async def test_a_move_after_another_referee_changed_the_table_reads_it_first(
        self, quiet_tables: TableStub, second_tables: TableStub, redis_client: redis.asyncio.Redis
    ) -> None:
        table, _, after_first = await _passed_once(quiet_tables)
        after_second = await _pass(second_tables, table, after_first)
        scripts_before = await _scripts_run(redis_client)
        third = await _pass(quiet_tables, table, after_second)
        assert third.version == after_second.version + 1
        # A read, then the compare-and-set, then the third seat's first lease.
        assert await _scripts_run(redis_client) - scripts_before == 3


class TestNoAnswerFromAStateTheStoreNoLongerHolds:
    async def test_a_stale_move_on_the_version_this_referee_wrote_last_is_refused_as_stale(
        self, tables: TableStub, second_tables: TableStub
    ) -> None:
        table, _, mine = await _passed_once(tables)
        # Another referee moves the table on; this one still holds the version it wrote.
        theirs = await _pass(second_tables, table, mine)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await _pass(tables, table, mine)
        assert refused.value.code() == grpc.StatusCode.ABORTED
        info = error_info(refused.value)
        assert info.reason == "STALE_STATE"
        assert info.metadata["current_version"] == str(theirs.version)
        assert (await view(tables, table)).version == theirs.version

    async def test_a_seat_that_connected_through_another_referee_shows_connected_in_the_next_answer(
        self, quiet_tables: TableStub, second_tables: TableStub
    ) -> None:
        table, first, after_first = await _passed_once(quiet_tables)
        watcher = next(s for s in range(3) if s not in (first.turn_seat, after_first.turn_seat))
        assert not after_first.seats[watcher].connected
        stream = second_tables.WatchTable(pb.WatchTableRequest(table_id=table.table_id), metadata=table.seat(watcher))
        try:
            opened = await asyncio.wait_for(stream.read(), 30)
            assert opened.event.snapshot.seats[watcher].connected  # its stream holds a lease now
            answer = await _pass(quiet_tables, table, after_first)
        finally:
            stream.cancel()
        assert answer.version == after_first.version + 1
        assert answer.seats[watcher].connected
        assert answer.seats[first.turn_seat].connected
