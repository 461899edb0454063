"""Operator settings through gRPC: API keys for CreateTable, and the expiry of closed tables."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest
import redis.asyncio

from dizhu.config import ServerConfig
from dizhu.process import create_server
from dizhu.store import TableStore, table_keys
from dizhu.v1 import cards_pb2, table_pb2, table_service_pb2, table_service_pb2_grpc
from tests.support.grpc_calls import create_table, refused, rid

pb = table_service_pb2


@pytest.fixture
async def keyed_tables(store: TableStore) -> AsyncIterator[table_service_pb2_grpc.TableServiceStub]:
    """A referee that requires the API key "k1" or "k2" to create tables."""
    referee = await create_server(ServerConfig(address="127.0.0.1:0", api_keys=("k1", "k2")), store)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{referee.port}") as channel:
        yield table_service_pb2_grpc.TableServiceStub(channel)
    await referee.stop(0)


def _create(request_id: str) -> table_service_pb2.CreateTableRequest:
    return pb.CreateTableRequest(
        request_id=request_id, settings=table_pb2.TableSettings(variant=cards_pb2.VARIANT_THREE_PLAYER)
    )


class TestApiKeys:
    async def test_creating_a_table_without_the_key_is_unauthenticated(
        self, keyed_tables: table_service_pb2_grpc.TableServiceStub
    ) -> None:
        await refused(keyed_tables.CreateTable(_create(rid())), grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED")

    async def test_the_missing_key_is_told_before_anything_malformed(
        self, keyed_tables: table_service_pb2_grpc.TableServiceStub
    ) -> None:
        malformed = pb.CreateTableRequest(request_id="", settings=table_pb2.TableSettings())
        await refused(keyed_tables.CreateTable(malformed), grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED")

    async def test_a_wrong_key_is_unauthenticated(self, keyed_tables: table_service_pb2_grpc.TableServiceStub) -> None:
        await refused(
            keyed_tables.CreateTable(_create(rid()), metadata=(("x-api-key", "nope"),)),
            grpc.StatusCode.UNAUTHENTICATED,
            "UNAUTHENTICATED",
        )

    async def test_a_valid_key_creates_and_its_retries_find_the_same_table(
        self, keyed_tables: table_service_pb2_grpc.TableServiceStub
    ) -> None:
        request_id = rid()
        first = await keyed_tables.CreateTable(_create(request_id), metadata=(("x-api-key", "k1"),))
        again = await keyed_tables.CreateTable(_create(request_id), metadata=(("x-api-key", "k1"),))
        other = await keyed_tables.CreateTable(_create(request_id), metadata=(("x-api-key", "k2"),))
        assert again.table_id == first.table_id
        assert again.creator_token == first.creator_token
        # The same request id under another key is another creator's request: another table.
        assert other.table_id != first.table_id


class TestExpiry:
    async def test_a_closed_table_expires_and_a_running_one_does_not(
        self, tables: table_service_pb2_grpc.TableServiceStub, redis_client: redis.asyncio.Redis, store: TableStore
    ) -> None:
        table = await create_table(tables)
        keys = table_keys("dizhu", table.table_id)
        assert await redis_client.ttl(keys.state) == -1
        await tables.CloseTable(pb.CloseTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.creator)
        assert 0 < await redis_client.ttl(keys.state) <= store.finished_ttl_s
        assert 0 < await redis_client.ttl(keys.events) <= store.finished_ttl_s
