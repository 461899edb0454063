"""Nothing lives forever, nothing stops the clock, and a full Redis is a retryable refusal.

Real gRPC, real Redis (a redis-server of its own, with a small ``maxmemory``, for the memory
tests). Waiting for the clock uses generous timeouts as safety nets only.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import grpc
import orjson
import pytest
import redis.asyncio
import structlog
from prometheus_client import REGISTRY

from dizhu.config import ServerConfig
from dizhu.embedded_redis import EmbeddedRedis
from dizhu.referee.limits import MAX_SEEDS
from dizhu.service.clock import _REMEMBERED as QUARANTINE_REMEMBERS
from dizhu.service.clock import FIRST_BACKOFF_MS, MAX_BACKOFF_MS, Quarantine
from dizhu.service.tables import TableWork
from dizhu.service.unit_of_work import TablePolicy
from dizhu.store.keys import index_keys, index_shard
from dizhu.v1 import table_pb2
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import SEED, THREE, Table, create_table, refused, rid, view
from tests.support.live import SOON_S, Bots, clock, watch
from tests.support.safety import Server, Servers, exhausted, retry_delay_ms

_HOUR_MS = 3600 * 1000


def _now_ms() -> int:
    return int(time.time() * 1000)


async def _until(check: object, what: str, timeout: float = SOON_S) -> None:
    """Poll the async ``check`` until it is true (the timeout is a safety net)."""
    loop = asyncio.get_running_loop()
    until = loop.time() + timeout
    while not await check():  # type: ignore[operator]
        if loop.time() > until:
            raise AssertionError(f"timed out waiting for: {what}")
        await asyncio.sleep(0.05)


def _clock_failures() -> float:
    return REGISTRY.get_sample_value("dizhu_clock_failures_total") or 0.0


class TestTheClockIsolatesFailures:
    async def _poison(self, server: Server, client: redis.asyncio.Redis, table: Table, how: str) -> None:
        keys = server.store.keys(table.table_id)
        if how == "corrupt":
            await client.hset(keys.state, "data", b'{"v": 1, "not a table": true}')
            return
        # A table stored with the clock the contract now refuses: its next deadline would be
        # past year 9999, so applying its timeout raises.
        plain = orjson.loads(await client.hget(keys.state, "data"))
        plain["settings"]["clock"][0] = 315_576_000_000_000
        await client.hset(keys.state, "data", orjson.dumps(plain))

    @pytest.mark.parametrize("how", ["corrupt", "overflowing clock"])
    async def test_a_table_whose_timeout_fails_is_quarantined_while_the_others_time_out(
        self, servers: Servers, redis_client: redis.asyncio.Redis, how: str
    ) -> None:
        server = await servers.start(clock_interval_s=0.02)
        failures = _clock_failures()
        poisoned = await create_table(server.tables, THREE, clock_settings=clock(100))
        await self._poison(server, redis_client, poisoned, how)
        healthy = await create_table(server.tables, THREE, clock_settings=clock(100))

        async def healthy_runs() -> bool:
            return (await view(server.tables, healthy)).version >= 6

        await _until(healthy_runs, "the healthy table's clock to act five times")
        assert _clock_failures() > failures
        # The poisoned table's entry was moved later: it no longer heads the index.
        deadlines = index_keys("dizhu", index_shard(poisoned.table_id)).deadlines
        score = await redis_client.zscore(deadlines, poisoned.table_id)
        assert score is not None
        assert score > _now_ms() - 100
        # After its first failures, tried again within the first backoff, not the longest.
        assert score <= _now_ms() + FIRST_BACKOFF_MS
        # And it survives a restart of the clock: a second referee serves the healthy table too.
        second = await servers.start(clock_interval_s=0.02)
        before = (await view(second.tables, healthy)).version

        async def still_runs() -> bool:
            return (await view(second.tables, healthy)).version >= before + 3

        await _until(still_runs, "the healthy table's clock to keep acting")

    def test_a_tables_backoff_doubles_from_the_first_up_to_the_longest_and_restarts_after_a_success(self) -> None:
        quarantine = Quarantine()
        backoffs = [quarantine.failed("t-1") for _ in range(12)]
        assert backoffs[:3] == [FIRST_BACKOFF_MS, 2 * FIRST_BACKOFF_MS, 4 * FIRST_BACKOFF_MS]
        assert backoffs == sorted(backoffs)
        assert backoffs[-1] == MAX_BACKOFF_MS > backoffs[-4]
        assert quarantine.failed("t-2") == FIRST_BACKOFF_MS  # each table counts its own failures
        quarantine.succeeded("t-1")
        assert quarantine.failed("t-1") == FIRST_BACKOFF_MS

    def test_the_quarantine_remembers_its_most_tables_and_forgets_the_longest_untried_first(self) -> None:
        quarantine = Quarantine()
        for index in range(QUARANTINE_REMEMBERS):
            quarantine.failed(f"t-{index}")
        assert quarantine.failed("t-0") == 2 * FIRST_BACKOFF_MS  # all of them remembered
        quarantine.failed("one-too-many")  # t-1, the longest untried, is forgotten
        assert quarantine.failed("t-1") == FIRST_BACKOFF_MS
        assert quarantine.failed("t-3") == 2 * FIRST_BACKOFF_MS  # (t-1 came back in place of t-2)


class TestAbandonedTables:
    async def test_a_table_nobody_acts_at_is_closed_as_abandoned_and_then_expires(
        self, servers: Servers, redis_client: redis.asyncio.Redis
    ) -> None:
        server = await servers.start()
        table = await create_table(server.tables, THREE)  # every seat taken: the auction waits
        watcher = watch(server.tables, table.table_id, table.tokens[0])
        await watcher.wait_kind("snapshot")
        later = TableWork.build(
            server.store, policy=TablePolicy.of(ServerConfig(idle_close_s=6 * 3600)), now=lambda: time.time() + 7 * 3600
        ).janitor
        assert await later.close_idle() == 1
        closed = await view(server.tables, table)
        assert closed.phase == table_pb2.PHASE_CLOSED
        assert closed.close_reason == table_pb2.CLOSE_REASON_ABANDONED
        assert closed.last_settlement.outcome == table_pb2.ROUND_OUTCOME_ABANDONED
        ended = await watcher.wait_kind("table_closed")
        assert ended.table_closed.reason == table_pb2.CLOSE_REASON_ABANDONED
        assert await watcher.closed() == grpc.StatusCode.OK
        keys = server.store.keys(table.table_id)
        assert 0 < await redis_client.ttl(keys.state) <= server.store.finished_ttl_s
        assert await redis_client.zscore("dizhu:{idle}:active", table.table_id) is None
        assert await later.close_idle() == 0

    async def test_a_table_that_cannot_be_read_does_not_stop_the_sweep(
        self, servers: Servers, redis_client: redis.asyncio.Redis
    ) -> None:
        server = await servers.start()
        broken = await create_table(server.tables, THREE)
        idle = await create_table(server.tables, THREE)
        await redis_client.hset(server.store.keys(broken.table_id).state, "data", b"{broken")
        policy = TablePolicy.of(ServerConfig(idle_close_s=3600))
        later = TableWork.build(server.store, policy=policy, now=lambda: time.time() + 2 * 3600).janitor
        assert await later.close_idle() == 1
        assert (await view(server.tables, idle)).close_reason == table_pb2.CLOSE_REASON_ABANDONED
        # The broken one is looked at again only an idle time later.
        assert (await redis_client.zscore("dizhu:{idle}:active", broken.table_id) or 0) > _now_ms()

    async def test_a_table_acted_at_since_is_spared_and_indexed_again(
        self, servers: Servers, redis_client: redis.asyncio.Redis
    ) -> None:
        server = await servers.start()
        table = await create_table(server.tables, THREE)
        await redis_client.zadd("dizhu:{idle}:active", {table.table_id: 1})  # an index that lags behind
        policy = TablePolicy.of(ServerConfig(idle_close_s=3600))
        soon = TableWork.build(server.store, policy=policy, now=lambda: time.time() + 60).janitor
        assert await soon.close_idle() == 0
        assert (await view(server.tables, table)).phase == table_pb2.PHASE_AUCTION
        assert (await redis_client.zscore("dizhu:{idle}:active", table.table_id) or 0) > _now_ms() - _HOUR_MS

    async def test_a_table_only_the_clock_plays_closes_after_the_unattended_rounds(self, servers: Servers) -> None:
        # The clock passes for everyone, so every deal is thrown in and (max_redeals 0) each round is void.
        server = await servers.start(clock_interval_s=0.02, unattended_rounds=2)
        table = await create_table(server.tables, THREE, clock_settings=clock(100), max_redeals=0)
        watcher = watch(server.tables, table.table_id, after=0)
        assert await watcher.closed(timeout=60) == grpc.StatusCode.OK
        kinds = [event.WhichOneof("payload") for event in watcher.events]
        assert kinds.count("round_ended") == 2
        assert watcher.events[-1].table_closed.reason == table_pb2.CLOSE_REASON_ABANDONED

    async def test_a_round_a_seat_plays_is_attended(self, servers: Servers) -> None:
        server = await servers.start(clock_interval_s=0.02, unattended_rounds=1)
        table = await create_table(server.tables, THREE, clock_settings=clock(2000), round_limit=2)
        bots = Bots(server.tables, server.rules, table, range(3), seed=3, bid=3)
        await bots.finished()
        final = await view(server.tables, table)
        assert final.close_reason == table_pb2.CLOSE_REASON_ROUND_LIMIT


class TestBoundedStorage:
    async def test_only_the_latest_replays_are_kept(self, servers: Servers, redis_client: redis.asyncio.Redis) -> None:
        server = await servers.start(clock_interval_s=0.02, unattended_rounds=0, replays_per_table=2)
        table = await create_table(server.tables, THREE, clock_settings=clock(100), max_redeals=0, round_limit=4)
        watcher = watch(server.tables, table.table_id, after=0)
        assert await watcher.closed(timeout=60) == grpc.StatusCode.OK
        for old in (1, 2):
            await refused(
                server.tables.GetReplay(pb.GetReplayRequest(table_id=table.table_id, round=old)),
                grpc.StatusCode.NOT_FOUND,
                "TABLE_NOT_FOUND",
            )
        for kept in (3, 4):
            replay = await server.tables.GetReplay(pb.GetReplayRequest(table_id=table.table_id, round=kept))
            assert replay.replay.round == kept
        assert await redis_client.hlen(server.store.keys(table.table_id).records) == 2

    async def test_every_key_of_a_long_running_table_stays_within_its_ceiling(
        self, servers: Servers, redis_client: redis.asyncio.Redis
    ) -> None:
        server = await servers.start(replays_per_table=3, answers_per_table=4, events_maxlen=20)
        table = await create_table(server.tables, THREE, round_limit=5)
        await Bots(server.tables, server.rules, table, range(3), seed=5).finished()
        keys = server.store.keys(table.table_id)
        assert await redis_client.hlen(keys.records) == 3
        assert await redis_client.hlen(keys.answers) <= 4
        assert await redis_client.zcard(keys.answered) <= 4
        # MAXLEN ~ keeps at least the limit and trims whole stream nodes (100 entries each).
        assert await redis_client.xlen(keys.events) <= 20 + 100

    async def test_a_table_with_every_seed_it_may_have_is_a_bounded_state(
        self, servers: Servers, redis_client: redis.asyncio.Redis
    ) -> None:
        server = await servers.start()
        created = await server.tables.CreateTable(
            pb.CreateTableRequest(
                request_id=rid(),
                settings=table_pb2.TableSettings(variant=THREE),
                seeds=[SEED] * MAX_SEEDS,
                player_names=["a", "b", "c"],
            )
        )
        size = await redis_client.hstrlen(server.store.keys(created.table_id).state, "data")
        assert 64 * MAX_SEEDS < size < 64 * MAX_SEEDS + 16 * 1024


class TestRetriedAnswersAreKeptAsPromised:
    async def test_an_answer_pushed_out_by_newer_ones_is_judged_afresh(self, servers: Servers) -> None:
        server = await servers.start(answers_per_table=1)
        table = await create_table(server.tables, THREE, seeds=[SEED], first_dealer=0)
        first = pb.BidRequest(table_id=table.table_id, request_id="bid-0", expected_version=1, amount=1)
        assert (await server.tables.Bid(first, metadata=table.seat(0))).table.version == 2
        assert (await server.tables.Bid(first, metadata=table.seat(0))).table.version == 2  # kept: the latest
        await server.tables.Bid(
            pb.BidRequest(table_id=table.table_id, request_id="bid-1", expected_version=2, amount=2),
            metadata=table.seat(1),
        )
        info = await refused(server.tables.Bid(first, metadata=table.seat(0)), grpc.StatusCode.ABORTED, "STALE_STATE")
        assert info.metadata["current_version"] == "3"

    async def test_an_expired_answer_is_judged_afresh(
        self, servers: Servers, redis_client: redis.asyncio.Redis
    ) -> None:
        server = await servers.start()
        create = pb.CreateTableRequest(
            request_id=rid(), settings=table_pb2.TableSettings(variant=THREE), player_names=["a", "b", "c"]
        )
        created = await server.tables.CreateTable(create)
        seat = (("authorization", f"Bearer {created.seat_tokens[created.table.turn_seat].token}"),)
        bid = pb.BidRequest(table_id=created.table_id, request_id=rid(), expected_version=1, amount=1)
        await server.tables.Bid(bid, metadata=seat)
        # Every answer of the table expires now, by Redis' clock (as answer_ttl passing would).
        answers = server.store.keys(created.table_id).answers
        for answer, value in (await redis_client.hgetall(answers)).items():
            await redis_client.hset(answers, answer, b"1:" + value.split(b":", 1)[1])
        await refused(server.tables.Bid(bid, metadata=seat), grpc.StatusCode.ABORTED, "STALE_STATE")
        await refused(server.tables.CreateTable(create), grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REUSED")


@pytest.fixture
def small_redis() -> Iterator[EmbeddedRedis]:
    """A redis-server of its own with 16 MB of maxmemory and noeviction, as docs/store.md recommends."""
    server = EmbeddedRedis(appendonly=False).start()
    try:
        yield server
    finally:
        server.stop()


class TestAFullRedis:
    async def _fill(self, client: redis.asyncio.Redis, until: float) -> None:
        """Write junk until Redis uses more than ``until`` of its maxmemory."""
        limit = int((await client.config_get("maxmemory"))["maxmemory"])
        for index in range(10_000):
            if int((await client.info("memory"))["used_memory"]) > until * limit:
                return
            await client.set(f"junk:{index}", b"x" * 32 * 1024)
        raise AssertionError("could not fill Redis")

    async def _brim(self, client: redis.asyncio.Redis) -> None:
        """Make Redis full: maxmemory below what it uses (a write that fails frees its own buffers,
        so filling up by writing leaves Redis hovering at the limit, not over it)."""
        used = int((await client.info("memory"))["used_memory"])
        await client.config_set("maxmemory", used - 1024 * 1024)
        with pytest.raises(redis.exceptions.OutOfMemoryError):
            await client.set("one-more", b"x")

    async def test_creation_is_refused_first_then_moves_and_both_are_retryable(
        self, servers: Servers, small_redis: EmbeddedRedis
    ) -> None:
        client = redis.asyncio.Redis.from_url(small_redis.url)
        try:
            await client.config_set("maxmemory", 16 * 1024 * 1024)
            await client.config_set("maxmemory-policy", "noeviction")
            server = await servers.start(redis_url=small_redis.url)
            creation = rid()
            table = await create_table(server.tables, THREE, seeds=[SEED], first_dealer=0, request_id=creation)
            await self._fill(client, until=0.93)
            # A retried creation is answered again: it creates nothing.
            again = await create_table(server.tables, THREE, seeds=[SEED], first_dealer=0, request_id=creation)
            assert again.created == table.created
            error = await exhausted(
                server.tables.CreateTable(
                    pb.CreateTableRequest(request_id=rid(), settings=table.created.table.settings)
                ),
                "STORE_FULL",
            )
            assert error.details() == (
                "the table store is nearly full: no new tables for now (running tables keep their room)"
            )
            assert retry_delay_ms(error) == 5000
            # The running table still has room for its moves.
            moved = await server.tables.Bid(
                pb.BidRequest(table_id=table.table_id, request_id=rid(), expected_version=1, amount=1),
                metadata=table.seat(0),
            )
            assert moved.table.version == 2
            # Filled to the brim, a move is refused the same way: retryable, nothing applied.
            await self._brim(client)
            bid = pb.BidRequest(table_id=table.table_id, request_id=rid(), expected_version=2, amount=2)
            with structlog.testing.capture_logs() as logs:
                full = await exhausted(server.tables.Bid(bid, metadata=table.seat(1)), "STORE_FULL")
            assert full.details() == "the table store is full; retry later with the same request_id"
            assert [(log["event"], log["log_level"]) for log in logs if log["event"].startswith("store")] == [
                ("store_full", "warning")
            ]
            assert (await view(server.tables, table)).version == 2
            # The operator makes room: the same request applies, once.
            await client.delete(*[key async for key in client.scan_iter(match="junk:*")])
            await client.config_set("maxmemory", 16 * 1024 * 1024)
            assert (await server.tables.Bid(bid, metadata=table.seat(1))).table.version == 3
            assert (await server.tables.Bid(bid, metadata=table.seat(1))).table.version == 3
            assert (await view(server.tables, table)).version == 3
        finally:
            await client.aclose()
