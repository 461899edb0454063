"""Who may call how often: rate limits, open-table quotas, stream caps, and who may create tables.

Limits apply by default only to a server listening beyond loopback; the tests either listen on
0.0.0.0 (an exposed server) or force them with ``limits="on"``. Buckets that refill in
1,000 seconds or more, or the ``frozen_time`` the rate limits read (it moves only when the test
moves it), keep every test independent of timing.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2
from prometheus_client import REGISTRY

import dizhu.service.admission as admission_module
from dizhu.client import RateLimited, TableClient, TableNotFound
from dizhu.service.admission import RateLimiter, client_of_peer
from dizhu.v1 import cards_pb2, rules_service_pb2, table_pb2, table_service_pb2_grpc
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import THREE, create_table, error_info, refused, rid
from tests.support.safety import Server, Servers, exhausted, retry_delay_ms, status_details

_SLOW = 0.001  # tokens per second: a bucket that does not refill within a test


def _create(request_id: str | None = None) -> pb.CreateTableRequest:
    return pb.CreateTableRequest(request_id=request_id or rid(), settings=table_pb2.TableSettings(variant=THREE))


def _key(key: str) -> tuple[tuple[str, str], ...]:
    return (("x-api-key", key),)


def _refusals(limit: str) -> float:
    """How many calls this process refused for ``limit`` (the counter of refused admissions)."""
    return REGISTRY.get_sample_value("dizhu_refused_admissions_total", {"limit": limit}) or 0.0


@pytest.fixture
def frozen_time(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The time (s) the rate limits of referees started afterwards read: it moves only when the test moves it."""
    now = [0.0]
    monkeypatch.setattr(admission_module, "RateLimiter", functools.partial(RateLimiter, now=lambda: now[0]))
    return now


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

    @pytest.mark.parametrize(("rate", "burst"), [(0, 5), (-1, 5), (1, 0.5), (0, 0)])
    def test_a_limit_needs_a_positive_rate_and_a_burst_of_at_least_one(self, rate: float, burst: float) -> None:
        with pytest.raises(ValueError, match=r"^a rate limit needs a positive rate and a burst of at least 1$"):
            RateLimiter(rate, burst)

    def test_the_smallest_limit_is_accepted(self) -> None:
        limiter = RateLimiter(_SLOW, 1, now=lambda: 0.0)
        assert limiter.take("a") == 0.0
        assert limiter.take("a") == pytest.approx(1000.0)

    def test_at_most_100000_clients_are_remembered_the_oldest_forgotten_first(self) -> None:
        limiter = RateLimiter(_SLOW, 1, now=lambda: 0.0)
        assert not any(limiter.take(f"c{n}") for n in range(100_000))
        assert limiter.take("c0") > 0, "100,000 clients are remembered, the oldest too"
        assert limiter.take("new") == 0.0  # the 100,001st: the oldest (c0) is forgotten
        assert limiter.take("c1") > 0, "only the oldest is forgotten"
        assert limiter.take("c0") == 0.0, "a forgotten client starts full"

    @pytest.mark.parametrize(
        ("peer", "client"),
        [
            ("ipv4:203.0.113.7:50123", "ip-203.0.113.7"),
            ("ipv6:[2001:db8:1:2:3:4:5:6]:443", "ip6-2001.0db8.0001.0002"),
            ("ipv6:[2001:db8:1:2:ffff::1]:1", "ip6-2001.0db8.0001.0002"),
            ("ipv6:[no-such-address]:443", "ip6-unknown"),
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

    async def test_a_refusal_asks_to_wait_until_the_next_token_and_at_least_1_ms(
        self, servers: Servers, frozen_time: list[float]
    ) -> None:
        server = await servers.start(limits="on", rate_limit=_SLOW)  # a burst of 1, one call every 1,000 s
        request = pb.GetTableRequest(table_id="no-such-table")
        await refused(server.tables.GetTable(request), grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND")
        refusals = _refusals("calls_per_second")
        error = await exhausted(server.tables.GetTable(request), "RATE_LIMITED")
        assert error.details() == "too many calls from this client (calls_per_second); retry later"
        assert dict(error_info(error).metadata) == {"limit": "calls_per_second"}
        assert retry_delay_ms(error) == 1000 * 1000
        assert _refusals("calls_per_second") == refusals + 1
        frozen_time[0] = 999.9995  # half a millisecond short of the next token
        assert retry_delay_ms(await exhausted(server.tables.GetTable(request), "RATE_LIMITED")) == 1
        frozen_time[0] = 1000.0
        await refused(server.tables.GetTable(request), grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND")

    async def test_the_creation_rate_is_per_minute_and_per_client(
        self, servers: Servers, frozen_time: list[float]
    ) -> None:
        # 6 a minute: one every 10 s, in bursts of 2.
        server = await servers.start(limits="on", create_rate_limit=6, api_keys=("key-a", "key-b"))
        for _ in range(2):
            await server.tables.CreateTable(_create(), metadata=_key("key-a"))
        refusals = _refusals("creates_per_minute")
        error = await exhausted(server.tables.CreateTable(_create(), metadata=_key("key-a")), "RATE_LIMITED")
        assert error.details() == "too many calls from this client (creates_per_minute); retry later"
        assert dict(error_info(error).metadata) == {"limit": "creates_per_minute"}
        assert retry_delay_ms(error) == 10 * 1000
        assert _refusals("creates_per_minute") == refusals + 1
        # Another client has a bucket of its own.
        assert (await server.tables.CreateTable(_create(), metadata=_key("key-b"))).table.version == 1
        frozen_time[0] = 10.0
        assert (await server.tables.CreateTable(_create(), metadata=_key("key-a"))).table.version == 1
        await exhausted(server.tables.CreateTable(_create(), metadata=_key("key-a")), "RATE_LIMITED")

    async def test_a_legal_move_list_of_50_moves_costs_one_call_more(
        self, servers: Servers, frozen_time: list[float]
    ) -> None:
        server = await servers.start(limits="on", rate_limit=_SLOW)  # a burst of 1, one call every 1,000 s
        ranks = [0, 0, 0, 1, 1, 1, 2, 3, 4, 5, 6, 7]  # 54 moves
        request = rules_service_pb2.ListLegalMovesRequest(
            variant=THREE,
            hand=cards_pb2.CardSet(ranks=[rank + 1 for rank in ranks]),  # type: ignore[misc]
        )
        assert 50 <= len((await server.rules.ListLegalMoves(request)).moves) < 100
        error = await exhausted(server.rules.Classify(rules_service_pb2.ClassifyRequest()), "RATE_LIMITED")
        assert retry_delay_ms(error) == 2 * 1000 * 1000, "the call's token, then the one call more it owes"


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

    async def test_an_api_key_s_tables_count_under_16_hex_digits_of_its_hash(
        self, server: Server, servers: Servers
    ) -> None:
        table = await server.tables.CreateTable(_create(), metadata=_key("key-a"))
        name = "key-" + hashlib.sha256(b"key-a").hexdigest()[:16]
        quotas = [key.decode() for key in await servers.client.keys("*{quota}:open:*")]
        assert [key.rpartition(":")[2] for key in quotas] == [name]
        assert await servers.client.zrange(quotas[0], 0, -1) == [table.table_id.encode()]


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

    async def test_a_connection_s_freed_slot_is_taken_once_and_the_refusal_says_its_cap(self, servers: Servers) -> None:
        server = await servers.start(max_streams_per_connection=1)
        table = await create_table(server.tables, THREE)
        first = await _open_stream(server.tables, table.table_id)  # the connection's first stream
        refusals = _refusals("streams_per_connection")
        error = await _stream_refused(server.tables, table.table_id)
        assert dict(error_info(error).metadata) == {"limit": "streams_per_connection", "max": "1"}
        assert error.details() == "too many open streams (streams_per_connection: at most 1); close one or retry later"
        assert retry_delay_ms(error) == 1000
        assert _refusals("streams_per_connection") == refusals + 1
        # The cancelled stream's slot is freed once (the count back at 0), and only once.
        first.cancel()
        await _open_once_freed(server.tables, table.table_id, ())
        await _stream_refused(server.tables, table.table_id)

    async def test_a_client_s_freed_slot_is_taken_once(self, servers: Servers) -> None:
        server = await servers.start(limits="on", api_keys=("key-a",), max_streams_per_client=1)
        a = _key("key-a")
        table = await server.tables.CreateTable(_create(), metadata=a)
        first = await _open_stream(server.tables, table.table_id, a)  # the client's first stream
        others = [table_service_pb2_grpc.TableServiceStub(servers.channel(server.target)) for _ in range(2)]
        error = await _stream_refused(others[0], table.table_id, a)
        assert (error_info(error).metadata["limit"], error_info(error).metadata["max"]) == ("streams_per_client", "1")
        first.cancel()
        await _open_once_freed(others[0], table.table_id, a)
        error = await _stream_refused(others[1], table.table_id, a)
        assert error_info(error).metadata["limit"] == "streams_per_client"

    async def test_without_limits_streams_are_not_capped_per_client(self, servers: Servers) -> None:
        server = await servers.start(limits="off", max_streams_per_client=1)
        table = await create_table(server.tables, THREE)
        for _ in range(3):
            await _open_stream(server.tables, table.table_id)

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
