"""Who may call how often: rate limits, open-table quotas, stream caps, and who may create tables.

Limits apply by default only to a server listening beyond loopback; the tests either listen on
0.0.0.0 (an exposed server) or force them with ``limits="on"``. Buckets that refill in
1,000 seconds or more keep every test independent of timing.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_helpers import THREE, create_table, error_info, refused, rid
from safety_helpers import Server, Servers, exhausted, retry_delay_ms, status_details

from dizhu.client import RateLimited, TableClient, TableNotFound
from dizhu.service.admission import RateLimiter, client_of_peer
from dizhu.v1 import cards_pb2, rules_service_pb2, table_pb2, table_service_pb2_grpc
from dizhu.v1 import table_service_pb2 as pb

_SLOW = 0.001  # tokens per second: a bucket that does not refill within a test


def _create(request_id: str | None = None) -> pb.CreateTableRequest:
    return pb.CreateTableRequest(request_id=request_id or rid(), settings=table_pb2.TableSettings(variant=THREE))


def _key(key: str) -> tuple[tuple[str, str], ...]:
    return (("x-api-key", key),)


class TestRateLimiter:
    def test_a_client_spends_its_burst_then_waits_for_the_refill(self) -> None:
        now = [0.0]
        limiter = RateLimiter(2.0, 3, now=lambda: now[0])
        assert [limiter.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
        assert limiter.take("a") == pytest.approx(0.5)
        assert limiter.take("b") == 0.0, "each client has its own bucket"
        now[0] = 0.5
        assert limiter.take("a") == 0.0
        assert limiter.take("a") > 0

    def test_a_long_idle_client_saves_up_its_burst_and_no_more(self) -> None:
        now = [0.0]
        limiter = RateLimiter(2.0, 3, now=lambda: now[0])
        assert limiter.take("a") == 0.0
        now[0] = 3600.0  # an hour's refill would be 7,200 tokens: the bucket holds 3
        assert [limiter.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
        assert limiter.take("a") == pytest.approx(0.5)

    def test_a_charge_puts_the_client_in_debt(self) -> None:
        now = [0.0]
        limiter = RateLimiter(10.0, 5, now=lambda: now[0])
        limiter.charge("a", 8)
        assert limiter.take("a") == pytest.approx(0.4)  # -3 tokens: 0.4 s until one
        now[0] = 0.4
        assert limiter.take("a") == 0.0

    @pytest.mark.parametrize(
        ("peer", "client"),
        [
            ("ipv4:203.0.113.7:50123", "ip-203.0.113.7"),
            ("ipv6:[2001:db8:1:2:3:4:5:6]:443", "ip6-2001.0db8.0001.0002"),
            ("ipv6:[2001:db8:1:2:ffff::1]:1", "ip6-2001.0db8.0001.0002"),
            ("unix:/tmp/socket", "local"),
        ],
    )
    def test_clients_are_named_by_address_and_ipv6_by_its_64(self, peer: str, client: str) -> None:
        assert client_of_peer(peer) == client


class TestRateLimits:
    async def test_an_exposed_server_limits_calls_per_client_with_a_retry_delay(self, servers: Servers) -> None:
        server = await servers.start(limits="on", rate_limit=_SLOW, api_keys=("key-a", "key-b"))
        request = pb.GetTableRequest(table_id="no-such-table")
        await refused(server.tables.GetTable(request), grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND")
        error = await exhausted(server.tables.GetTable(request), "RATE_LIMITED")
        assert error_info(error).metadata["limit"] == "calls_per_second"
        assert retry_delay_ms(error) > 100_000
        # Another API key is another client, with its own bucket.
        await refused(
            server.tables.GetTable(request, metadata=_key("key-b")), grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND"
        )
        await exhausted(server.tables.GetTable(request, metadata=_key("key-b")), "RATE_LIMITED")
        # The rules helpers and the stream count too, and a refused call does no work.
        await exhausted(server.rules.Classify(rules_service_pb2.ClassifyRequest()), "RATE_LIMITED")

    async def test_the_rate_limit_comes_before_a_malformed_request(self, servers: Servers) -> None:
        server = await servers.start(limits="on", rate_limit=_SLOW)
        raw = server.channel.unary_unary("/dizhu.v1.TableService/GetTable")
        with pytest.raises(grpc.aio.AioRpcError):
            await raw(b"\x0a\x80", timeout=10)
        await exhausted(raw(b"\x0a\x80", timeout=10), "RATE_LIMITED")

    async def test_creating_tables_has_a_rate_of_its_own(self, servers: Servers) -> None:
        server = await servers.start(limits="on", create_rate_limit=_SLOW * 60)
        await server.tables.CreateTable(_create())
        error = await exhausted(server.tables.CreateTable(_create()), "RATE_LIMITED")
        assert error_info(error).metadata["limit"] == "creates_per_minute"
        await refused(
            server.tables.GetTable(pb.GetTableRequest(table_id="nope")), grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND"
        )

    async def test_a_large_legal_move_list_costs_more_calls(self, servers: Servers) -> None:
        server = await servers.start(limits="on", rate_limit=10 * _SLOW)  # a burst of 1 call, refilled slowly
        ranks = [0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 6, 7, 8, 9, 10, 11]  # 497 moves
        request = rules_service_pb2.ListLegalMovesRequest(
            variant=THREE,
            hand=cards_pb2.CardSet(ranks=[rank + 1 for rank in ranks]),  # type: ignore[misc]
        )
        assert len((await server.rules.ListLegalMoves(request)).moves) > 400
        error = await exhausted(server.rules.Classify(rules_service_pb2.ClassifyRequest()), "RATE_LIMITED")
        assert retry_delay_ms(error) > 9 * 1000 * 1000 / 10, "the answer's 9 extra calls are owed"

    async def test_a_loopback_server_never_limits_its_callers(self, servers: Servers) -> None:
        server = await servers.start(rate_limit=_SLOW, create_rate_limit=_SLOW, max_open_tables=1)
        for _ in range(3):
            await create_table(server.tables, THREE)
        for _ in range(20):
            await refused(
                server.tables.GetTable(pb.GetTableRequest(table_id="nope")),
                grpc.StatusCode.NOT_FOUND,
                "TABLE_NOT_FOUND",
            )


class TestCreatingTables:
    async def test_an_exposed_server_without_api_keys_creates_no_tables(self, servers: Servers) -> None:
        server = await servers.start(address="0.0.0.0:0")
        info = await refused(server.tables.CreateTable(_create()), grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED")
        assert info.domain == "dizhu.v1"
        # Everything else works as ever.
        await refused(
            server.tables.GetTable(pb.GetTableRequest(table_id="nope")), grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND"
        )

    async def test_an_exposed_server_may_allow_anonymous_creation_or_require_keys(self, servers: Servers) -> None:
        open_server = await servers.start(address="0.0.0.0:0", allow_anonymous_create=True)
        assert (await open_server.tables.CreateTable(_create())).table.version == 1
        keyed = await servers.start(address="0.0.0.0:0", api_keys=("key-a",))
        await refused(keyed.tables.CreateTable(_create()), grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED")
        assert (await keyed.tables.CreateTable(_create(), metadata=_key("key-a"))).table.version == 1

    async def test_an_exposed_server_applies_its_limits_by_default(self, servers: Servers) -> None:
        server = await servers.start(address="0.0.0.0:0", allow_anonymous_create=True, create_rate_limit=_SLOW * 60)
        await server.tables.CreateTable(_create())
        await exhausted(server.tables.CreateTable(_create()), "RATE_LIMITED")


class TestOpenTables:
    @pytest.fixture
    async def server(self, servers: Servers) -> Server:
        return await servers.start(limits="on", max_open_tables=2, api_keys=("key-a", "key-b"))

    async def test_a_client_holds_at_most_its_quota_of_open_tables(self, server: Server) -> None:
        first = await server.tables.CreateTable(_create(), metadata=_key("key-a"))
        await server.tables.CreateTable(_create(), metadata=_key("key-a"))
        error = await exhausted(server.tables.CreateTable(_create(), metadata=_key("key-a")), "QUOTA_EXCEEDED")
        info = error_info(error)
        assert (info.metadata["limit"], info.metadata["max"]) == ("open_tables", "2")
        failures = [detail for detail in status_details(error) if isinstance(detail, error_details_pb2.QuotaFailure)]
        assert [(v.subject, v.description) for f in failures for v in f.violations] == [
            ("open_tables", error.details())
        ]
        # Another client is not concerned; closing a table frees its place.
        await server.tables.CreateTable(_create(), metadata=_key("key-b"))
        await server.tables.CloseTable(
            pb.CloseTableRequest(table_id=first.table_id, request_id=rid()),
            metadata=(("authorization", f"Bearer {first.creator_token}"),),
        )
        assert (await server.tables.CreateTable(_create(), metadata=_key("key-a"))).table.version == 1

    async def test_a_retried_create_does_not_count_twice(self, server: Server) -> None:
        request = _create()
        first = await server.tables.CreateTable(request, metadata=_key("key-a"))
        again = await server.tables.CreateTable(request, metadata=_key("key-a"))
        assert again == first
        assert (await server.tables.CreateTable(_create(), metadata=_key("key-a"))).table.version == 1

    async def test_a_table_gone_without_its_release_stops_counting(self, server: Server) -> None:
        first = await server.tables.CreateTable(_create(), metadata=_key("key-a"))
        await server.tables.CreateTable(_create(), metadata=_key("key-a"))
        await server.store.delete(first.table_id)  # as if it expired with its release lost
        assert (await server.tables.CreateTable(_create(), metadata=_key("key-a"))).table.version == 1
        # The table created in its place counts: the quota is full again.
        await exhausted(server.tables.CreateTable(_create(), metadata=_key("key-a")), "QUOTA_EXCEEDED")


async def _open_stream(tables: Any, table_id: str, metadata: Any = ()) -> Any:
    """A WatchTable call whose snapshot arrived."""
    call = tables.WatchTable(pb.WatchTableRequest(table_id=table_id), metadata=metadata)
    first = await asyncio.wait_for(call.read(), 15)
    assert first.event.WhichOneof("payload") == "snapshot"
    return call


async def _stream_refused(tables: Any, table_id: str, metadata: Any = ()) -> grpc.aio.AioRpcError:
    call = tables.WatchTable(pb.WatchTableRequest(table_id=table_id), metadata=metadata)

    async def first() -> None:
        await call.read()

    return await exhausted(asyncio.wait_for(first(), 15), "QUOTA_EXCEEDED")


async def _open_once_freed(tables: Any, table_id: str, metadata: Any) -> Any:
    """A stream opened as soon as a slot a cancelled stream held is free (its cleanup runs on the server)."""
    for _ in range(150):
        try:
            return await _open_stream(tables, table_id, metadata)
        except grpc.aio.AioRpcError:
            await asyncio.sleep(0.1)
    raise AssertionError("the cancelled stream's slot was never freed")


class TestStreams:
    async def test_streams_are_capped_per_connection_per_client_and_per_process(self, servers: Servers) -> None:
        server = await servers.start(
            limits="on",
            api_keys=("key-a", "key-b"),
            max_streams=4,
            max_streams_per_connection=2,
            max_streams_per_client=3,
        )
        a = _key("key-a")
        table = await server.tables.CreateTable(_create(), metadata=a)
        first = [await _open_stream(server.tables, table.table_id, a) for _ in range(2)]
        error = await _stream_refused(server.tables, table.table_id, a)
        assert error_info(error).metadata["limit"] == "streams_per_connection"
        other = servers.channel(server.target)
        tables_2 = table_service_pb2_grpc.TableServiceStub(other)
        await _open_stream(tables_2, table.table_id, a)
        error = await _stream_refused(tables_2, table.table_id, a)
        assert error_info(error).metadata["limit"] == "streams_per_client"
        tables_3 = table_service_pb2_grpc.TableServiceStub(servers.channel(server.target))
        await _open_stream(tables_3, table.table_id, _key("key-b"))
        error = await _stream_refused(tables_3, table.table_id, _key("key-b"))
        assert error_info(error).metadata["limit"] == "streams_per_process"
        # A stream that ends frees its slot: of the process, of its connection, of its client.
        first[0].cancel()
        freed = await _open_once_freed(tables_3, table.table_id, _key("key-b"))
        freed.cancel()
        # Connection 1 (at its cap of 2 before) and key-a (at 3) had a slot freed too.
        await _open_once_freed(server.tables, table.table_id, a)
        error = await _stream_refused(tables_3, table.table_id, _key("key-b"))
        assert error_info(error).metadata["limit"] == "streams_per_process"  # 4 open again

    async def test_a_loopback_server_still_caps_streams_per_connection(self, servers: Servers) -> None:
        server = await servers.start(max_streams_per_connection=2)
        table = await create_table(server.tables, THREE)
        for _ in range(2):
            await _open_stream(server.tables, table.table_id)
        await _stream_refused(server.tables, table.table_id)


class TestTheSdk:
    async def test_a_rate_limited_call_raises_with_the_delay_the_referee_asks_for(self, servers: Servers) -> None:
        server = await servers.start(limits="on", rate_limit=_SLOW)
        async with TableClient(server.target, table_id="no-such-table") as client:
            with pytest.raises(TableNotFound):
                await client.get()
            with pytest.raises(RateLimited) as caught:
                await client.get()
        assert caught.value.retry_delay_s > 100
        assert caught.value.retryable

    async def test_a_short_wait_is_honoured_and_the_call_retried(self, servers: Servers) -> None:
        server = await servers.start(limits="on", rate_limit=5.0)  # a burst of 10, then one call every 0.2 s
        async with TableClient(server.target) as client:
            created = await client.create_table(player_names=["a", "b", "c"])
            views = [await client.get() for _ in range(15)]
        assert all(view.table_id == created.table_id for view in views)
