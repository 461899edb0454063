"""The idle sweep's every case: what it closes, what it spares, and what it leaves the activity index.

The sweep reads candidates from an index that may lag or be stale; each candidate's own stored
state decides. Real gRPC to make tables, a ``TableJanitor`` with its own clock to sweep them.
"""

from __future__ import annotations

import time

import redis.asyncio

from dizhu.config import ServerConfig
from dizhu.referee import decode
from dizhu.referee.table import TableState
from dizhu.service.janitor import TableJanitor
from dizhu.service.tables import TableWork
from dizhu.service.unit_of_work import TablePolicy
from dizhu.v1 import table_pb2
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import THREE, create_table, rid, view
from tests.support.safety import Server, Servers

_HOUR_MS = 3600 * 1000
_ACTIVE = "dizhu:{idle}:active"


def _sweeper(server: Server, now_ms: int) -> TableJanitor:
    return TableWork.build(
        server.store, policy=TablePolicy.of(ServerConfig(idle_close_s=3600)), now=lambda: now_ms / 1000
    ).janitor


async def _stored(server: Server, table_id: str) -> TableState:
    loaded = await server.store.load(table_id, "anon", None)
    assert loaded.state is not None
    return decode(loaded.state)


class TestTheIdleSweep:
    async def test_an_idle_table_is_closed_at_the_sweeps_time_without_counting_as_a_clients_act(
        self, servers: Servers
    ) -> None:
        server = await servers.start()
        table = await create_table(server.tables, THREE)
        before = await _stored(server, table.table_id)
        now_ms = before.upkeep.active_ms + _HOUR_MS + 1
        assert await _sweeper(server, now_ms).close_idle() == 1
        after = await _stored(server, table.table_id)
        assert (after.version, after.updated_ms, after.upkeep.active_ms) == (
            before.version + 1,
            now_ms,
            before.upkeep.active_ms,
        )
        assert (await view(server.tables, table)).close_reason == table_pb2.CLOSE_REASON_ABANDONED

    async def test_a_table_idle_exactly_the_idle_time_is_spared(self, servers: Servers) -> None:
        server = await servers.start()
        table = await create_table(server.tables, THREE)
        active_ms = (await _stored(server, table.table_id)).upkeep.active_ms
        assert await _sweeper(server, active_ms + _HOUR_MS).close_idle() == 0
        assert (await view(server.tables, table)).phase == table_pb2.PHASE_AUCTION

    async def test_a_table_acted_at_since_is_indexed_again_at_its_own_last_act(
        self, servers: Servers, redis_client: redis.asyncio.Redis
    ) -> None:
        server = await servers.start()
        table = await create_table(server.tables, THREE)
        active_ms = (await _stored(server, table.table_id)).upkeep.active_ms
        await redis_client.zadd(_ACTIVE, {table.table_id: 1})  # an index that lags behind
        assert await _sweeper(server, active_ms + 60_000).close_idle() == 0
        assert await redis_client.zscore(_ACTIVE, table.table_id) == active_ms

    async def test_a_closed_table_left_in_the_index_is_let_go_and_not_counted(
        self, servers: Servers, redis_client: redis.asyncio.Redis
    ) -> None:
        server = await servers.start()
        table = await create_table(server.tables, THREE)
        await server.tables.CloseTable(
            pb.CloseTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.creator
        )
        await redis_client.zadd(_ACTIVE, {table.table_id: 1})  # as a lost release would leave it
        assert await _sweeper(server, int(time.time() * 1000) + 2 * _HOUR_MS).close_idle() == 0
        assert await redis_client.zscore(_ACTIVE, table.table_id) is None

    async def test_a_table_that_no_longer_exists_is_forgotten(
        self, servers: Servers, redis_client: redis.asyncio.Redis
    ) -> None:
        server = await servers.start()
        await redis_client.zadd(_ACTIVE, {"gone-table": 1})
        assert await _sweeper(server, int(time.time() * 1000)).close_idle() == 0
        assert await redis_client.zscore(_ACTIVE, "gone-table") is None
