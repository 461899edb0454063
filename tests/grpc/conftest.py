"""Fixtures of the gRPC integration tests: a real referee on port 0 over the real test Redis.

Per test: a :class:`TableStore` over the flushed ``redis_client``, a started server, ``in_process_referee``
(``create_server``, stopped afterwards), an aio channel to it and the stubs. The
``second_referee`` fixture adds another in-process server over its own Redis connection, as
a second referee process would have. Nothing is mocked.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest
from grpc_health.v1 import health_pb2_grpc

from dizhu.config import ServerConfig
from dizhu.process import Referee, create_server
from dizhu.store import TableStore
from dizhu.v1 import rules_service_pb2_grpc, table_service_pb2_grpc
from tests.support.store_fixtures import connect


async def _started(table_store: TableStore) -> Referee:
    # workers=1 (the default) binds with ("grpc.so_reuseport", 0): no stale server can share the port.
    return await create_server(ServerConfig(address="127.0.0.1:0"), table_store)


@pytest.fixture
async def in_process_referee(store: TableStore) -> AsyncIterator[Referee]:
    """A started referee on a free port, stopped after the test."""
    server = await _started(store)
    yield server
    await server.stop(0)


@pytest.fixture
async def channel(in_process_referee: Referee) -> AsyncIterator[grpc.aio.Channel]:
    """An aio channel to ``in_process_referee``."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{in_process_referee.port}") as opened:
        yield opened


@pytest.fixture
def tables(channel: grpc.aio.Channel) -> table_service_pb2_grpc.TableServiceStub:
    return table_service_pb2_grpc.TableServiceStub(channel)


@pytest.fixture
def rules(channel: grpc.aio.Channel) -> rules_service_pb2_grpc.RulesServiceStub:
    return rules_service_pb2_grpc.RulesServiceStub(channel)


@pytest.fixture
def health(channel: grpc.aio.Channel) -> health_pb2_grpc.HealthStub:
    return health_pb2_grpc.HealthStub(channel)


@pytest.fixture
async def second_referee(store_url: str, store_kind: str) -> AsyncIterator[Referee]:
    """Another referee on the same store, with its own client and connections."""
    client = connect(store_kind, store_url)
    table_store = TableStore(client)
    await table_store.load_scripts()
    server = await _started(table_store)
    yield server
    await server.stop(0)
    await client.aclose()


@pytest.fixture
async def second_tables(second_referee: Referee) -> AsyncIterator[table_service_pb2_grpc.TableServiceStub]:
    """A TableService stub on its own channel to ``second_referee``."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{second_referee.port}") as opened:
        yield table_service_pb2_grpc.TableServiceStub(opened)
