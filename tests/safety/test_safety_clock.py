"""What the turn clock logs, how its quarantine keeps count, and how often it sweeps idle tables.

The clock is driven here one step at a time: ``_apply`` (one due table) is called directly,
and ``run_clock`` runs a fixed number of ticks under a time source the test sets (each tick
a set number of seconds after the last), so nothing depends on how fast the machine is. Real
Redis, real tables; the referee that creates them checks its own deadlines only once an hour.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio
import structlog
from prometheus_client import REGISTRY

from dizhu.config import ServerConfig
from dizhu.service.clock import FIRST_BACKOFF_MS, Quarantine, _apply, run_clock
from dizhu.service.janitor import TableJanitor
from dizhu.service.tables import TableWork
from dizhu.service.unit_of_work import TablePolicy
from dizhu.store import TableStore
from dizhu.store.keys import index_keys, index_shard
from dizhu.testing import free_port
from dizhu.v1 import table_pb2, table_service_pb2
from tests.support.grpc_calls import THREE, Table, create_table, view
from tests.support.live import SOON_S, clock, full_log, kind, millis
from tests.support.safety import Server, Servers

_CORRUPT = b'{"v": 1, "not a table": true}'


def _sample(name: str) -> float:
    return REGISTRY.get_sample_value(name) or 0.0


def _sample_loop(loop: str) -> float:
    return REGISTRY.get_sample_value("dizhu_background_failures_total", {"loop": loop}) or 0.0


def _quarantined() -> float:
    return _sample("dizhu_clock_quarantined_tables")


def _failed(table_id: str, retry_in_ms: int) -> dict[str, Any]:
    return {
        "event": "clock_table_failed",
        "log_level": "error",
        "table_id": table_id,
        "retry_in_ms": retry_in_ms,
        "exc_info": True,
    }


def _timed_out(table_id: str) -> dict[str, Any]:
    return {"event": "timed_out", "log_level": "info", "table_id": table_id}


async def _referee(servers: Servers) -> Server:
    """A referee to create tables with; its own clock ticks once at its start, then once an hour."""
    return await servers.start(clock_interval_s=3600)


async def _clocked_table(server: Server) -> Table:
    """A table whose first seat has a minute to bid: due only for a janitor an hour ahead."""
    return await create_table(server.tables, THREE, clock_settings=clock(60_000))


def _an_hour_ahead(server: Server) -> TableJanitor:
    return TableWork.build(server.store, now=lambda: time.time() + 3600).janitor


class _Ticks:
    """A time source for ``run_clock``, which ``run`` runs for exactly ``ticks`` ticks.

    Each tick reads the wall clock once, at its start: the ``n``-th reading (and the monotonic
    clock until the next) is ``(n - 1) * step_s`` after the first, and the last sets the
    clock's ``stopping``. Only the clock run here sees it: other tasks (the referee's own
    clock) read the real time.
    """

    def __init__(self, ticks: int, step_s: int) -> None:
        self.start_s = math.ceil(time.time())  # whole seconds: the times derived from it are exact
        self.ticks = ticks
        self.step_s = step_s
        self.read = 0
        self._stopping = asyncio.Event()
        self._owner: asyncio.Task[None] | None = None

    def elapsed_s(self) -> int:
        return max(self.read - 1, 0) * self.step_s

    def time(self) -> float:
        if asyncio.current_task() is not self._owner:
            return time.time()
        self.read += 1
        if self.read == self.ticks:
            self._stopping.set()
        return float(self.start_s + self.elapsed_s())

    def monotonic(self) -> float:
        if asyncio.current_task() is not self._owner:
            return time.monotonic()
        return float(1000 + self.elapsed_s())

    async def run(self, store: TableStore, janitor: TableJanitor) -> None:
        self._owner = asyncio.create_task(run_clock(store, janitor, interval_s=0, stopping=self._stopping, clock=self))
        await asyncio.wait_for(self._owner, SOON_S)
        assert self.read == self.ticks


@pytest.fixture
async def unreachable_store() -> AsyncIterator[TableStore]:
    """A store whose Redis does not answer (nothing listens on its port)."""
    client = redis.asyncio.Redis.from_url(f"redis://127.0.0.1:{free_port()}/0")
    try:
        yield TableStore(client)
    finally:
        await client.aclose()


class TestWhatTheClockLogs:
    async def test_a_failing_timeout_is_logged_with_its_table_its_own_retry_delay_and_its_traceback(
        self, servers: Servers, redis_client: redis.asyncio.Redis
    ) -> None:
        server = await _referee(servers)
        first, second = await _clocked_table(server), await _clocked_table(server)
        for table in (first, second):
            await redis_client.hset(server.store.keys(table.table_id).state, "data", _CORRUPT)
        janitor, quarantine = TableWork.build(server.store).janitor, Quarantine()
        failures = _sample("dizhu_clock_failures_total")
        with structlog.testing.capture_logs() as logs:
            await _apply(janitor, quarantine, first.table_id)
            await _apply(janitor, quarantine, second.table_id)
            before_ms = int(time.time() * 1000)
            await _apply(janitor, quarantine, first.table_id)
            after_ms = int(time.time() * 1000)
        # Each table counts its own failures: the second starts at the first backoff.
        assert logs == [
            _failed(first.table_id, FIRST_BACKOFF_MS),
            _failed(second.table_id, FIRST_BACKOFF_MS),
            _failed(first.table_id, 2 * FIRST_BACKOFF_MS),
        ]
        assert _sample("dizhu_clock_failures_total") == failures + 3
        # The table's deadline entry was moved that much later.
        deadlines = index_keys("dizhu", index_shard(first.table_id)).deadlines
        score = await redis_client.zscore(deadlines, first.table_id)
        assert score is not None
        assert before_ms + 2 * FIRST_BACKOFF_MS <= score <= after_ms + 2 * FIRST_BACKOFF_MS

    async def test_a_timeout_applied_is_logged_with_its_table_even_for_a_table_never_quarantined(
        self, servers: Servers, redis_client: redis.asyncio.Redis
    ) -> None:
        server = await _referee(servers)
        table = await _clocked_table(server)
        timeouts = _sample("dizhu_clock_timeouts_total")
        with structlog.testing.capture_logs() as logs:
            await _apply(_an_hour_ahead(server), Quarantine(), table.table_id)
        assert logs == [_timed_out(table.table_id)]
        assert _sample("dizhu_clock_timeouts_total") == timeouts + 1
        assert (await view(server.tables, table)).version == 2

    async def test_a_store_out_of_reach_fails_the_tick_with_its_traceback_and_quarantines_no_table(
        self, unreachable_store: TableStore
    ) -> None:
        janitor, quarantine = TableWork.build(unreachable_store).janitor, Quarantine()
        failures = _sample("dizhu_clock_failures_total")
        # One due table: the store's failure is the tick's, not the table's.
        with structlog.testing.capture_logs() as logs, pytest.raises(redis.ConnectionError):
            await _apply(janitor, quarantine, "t-1")
        assert logs == []
        assert _sample("dizhu_clock_failures_total") == failures
        assert quarantine.failed("t-1") == FIRST_BACKOFF_MS  # its first failure, counted here
        # The whole loop: every tick fails and is counted, the first is logged with its
        # traceback, and the clock goes on.
        ticks = _sample_loop("clock")
        with structlog.testing.capture_logs() as logs:
            await _Ticks(3, 1).run(unreachable_store, janitor)
        assert logs == [{"event": "clock_failed", "log_level": "warning", "exc_info": True}]
        assert _sample_loop("clock") == ticks + 3

    async def test_a_long_outage_is_told_again_each_minute_with_the_ticks_failed_since(
        self, unreachable_store: TableStore
    ) -> None:
        janitor = TableWork.build(unreachable_store).janitor
        with structlog.testing.capture_logs() as logs:
            await _Ticks(150, 1).run(unreachable_store, janitor)  # 149 s: the first, then at 60 and 120 s
        errors = [line.pop("error", None) for line in logs]
        reminder = {"event": "clock_failed", "log_level": "warning", "repeated": 60}
        assert logs == [
            {"event": "clock_failed", "log_level": "warning", "exc_info": True},
            reminder | {"failing_s": 60.0},
            reminder | {"failing_s": 120.0},
        ]
        assert errors[0] is None  # the traceback says it
        assert all("Connect call failed" in str(error) for error in errors[1:])


class TestTheQuarantinesCount:
    def test_the_gauge_counts_the_tables_failing_now_and_a_table_never_quarantined_changes_nothing(self) -> None:
        quarantine = Quarantine()
        quarantine.failed("t-1")
        quarantine.failed("t-2")
        quarantine.failed("t-2")
        assert _quarantined() == 2
        quarantine.succeeded("t-3")  # never failed: nothing to forget
        assert _quarantined() == 2
        quarantine.succeeded("t-2")
        assert _quarantined() == 1
        assert quarantine.failed("t-2") == FIRST_BACKOFF_MS
        assert quarantine.failed("t-1") == 2 * FIRST_BACKOFF_MS
        quarantine.succeeded("t-1")
        quarantine.succeeded("t-2")
        assert _quarantined() == 0

    async def test_a_table_whose_timeout_applies_again_is_forgotten_and_starts_over_at_the_first_backoff(
        self, servers: Servers, redis_client: redis.asyncio.Redis
    ) -> None:
        server = await _referee(servers)
        table = await _clocked_table(server)
        state = server.store.keys(table.table_id).state
        healthy = await redis_client.hget(state, "data")
        assert healthy is not None
        janitor, quarantine = _an_hour_ahead(server), Quarantine()
        with structlog.testing.capture_logs() as logs:
            await redis_client.hset(state, "data", _CORRUPT)
            await _apply(janitor, quarantine, table.table_id)
            await _apply(janitor, quarantine, table.table_id)
            assert _quarantined() == 1
            await redis_client.hset(state, "data", healthy)  # repaired
            await _apply(janitor, quarantine, table.table_id)
            assert _quarantined() == 0
            await redis_client.hset(state, "data", _CORRUPT)
            await _apply(janitor, quarantine, table.table_id)
        assert logs == [
            _failed(table.table_id, FIRST_BACKOFF_MS),
            _failed(table.table_id, 2 * FIRST_BACKOFF_MS),
            _timed_out(table.table_id),
            _failed(table.table_id, FIRST_BACKOFF_MS),
        ]


class TestTheIdleSweep:
    async def test_the_clock_sweeps_at_its_start_and_then_every_ten_seconds(self, servers: Servers) -> None:
        server = await _referee(servers)
        table = await create_table(server.tables, THREE)  # no clock: only the sweep acts at it
        # Five ticks, 5 s apart (at 0, 5, 10, 15 and 20 s): the sweeps are due at 0, 10 and 20 s.
        ticks = _Ticks(5, 5)
        # The table was last acted at before the clock started: idle for 3 s from 3 s at the latest.
        janitor = TableWork.build(
            server.store,
            policy=TablePolicy.of(ServerConfig(idle_close_s=3.0)),
            now=lambda: ticks.start_s + ticks.elapsed_s(),
        ).janitor
        with structlog.testing.capture_logs() as logs:
            await ticks.run(server.store, janitor)
        assert [log for log in logs if log["event"] != "table_abandoned"] == [
            {"event": "abandoned_tables_closed", "log_level": "info", "tables": 1}
        ]
        assert (await view(server.tables, table)).close_reason == table_pb2.CLOSE_REASON_ABANDONED
        # Closed by the sweep at 10 s: the first one due after it went idle (not at 5 s or 15 s).
        closed = (await full_log(server.tables, table.table_id))[-1]
        assert kind(closed) == "table_closed"
        assert millis(closed.time) == (ticks.start_s + 10) * 1000


class TestForgottenTables:
    """Nothing of a clocked table stays in the clock's index once the table is closed or gone."""

    @staticmethod
    async def _indexed(redis_client: redis.asyncio.Redis, table_id: str) -> int:
        """How many of the clock index's keys of ``table_id``'s shard exist."""
        index = index_keys("dizhu", index_shard(table_id))
        count: int = await redis_client.exists(index.deadlines, index.versions)
        return count

    async def test_a_closed_table_put_back_by_a_late_write_is_forgotten_at_the_clocks_next_look(
        self, servers: Servers, redis_client: redis.asyncio.Redis
    ) -> None:
        server = await _referee(servers)
        table = await _clocked_table(server)
        await server.tables.CloseTable(
            table_service_pb2.CloseTableRequest(table_id=table.table_id, request_id="close"), metadata=table.creator
        )
        assert await self._indexed(redis_client, table.table_id) == 0
        # Another referee indexing the deadline of a version before the close, after it.
        await server.store.indexes.index_deadline(table.table_id, 1, int(time.time() * 1000) - 1_000)
        assert not await _an_hour_ahead(server).time_out(table.table_id)
        assert await self._indexed(redis_client, table.table_id) == 0

    async def test_a_table_gone_is_forgotten_at_the_clocks_next_look(
        self, servers: Servers, redis_client: redis.asyncio.Redis
    ) -> None:
        server = await _referee(servers)
        await server.store.indexes.index_deadline("expired-table", 12, int(time.time() * 1000) - 1_000)
        assert not await _an_hour_ahead(server).time_out("expired-table")
        assert await self._indexed(redis_client, "expired-table") == 0
