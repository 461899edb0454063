"""Failures of Redis under running games: a primary killed, a replica stopped, a standalone Redis restarted.

Games are played by careful clients (``resilient_play.Player``): a call failing with
``UNAVAILABLE`` is sent again, same request id, to the next referee. Every status the
clients meet is counted, every acknowledged decision recorded and looked for, at the end,
in the table's own record. The referees are real ``dizhu serve`` processes.

- A primary of the cluster is ``SIGKILL``ed while two referees serve games with
  ``--durability replica``: its replica takes over and takes moves, the referees carry on by
  themselves, clients meet ``UNAVAILABLE`` at most (often, not always: a referee's own retries
  can outlast the failover), their retries succeed, every table ends by its round limit, and
  no acknowledged decision is missing.
- The replica of a table's primary is stopped (``SIGSTOP``): with ``--durability replica``
  nothing is acknowledged meanwhile (``UNAVAILABLE``), and the same request succeeds once
  the replica is back -- applied once.
- A standalone Redis with its append-only file is killed and started again from it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import grpc
import pytest

from dizhu.embedded_redis import EmbeddedRedis
from dizhu.store.keys import table_keys
from dizhu.testing import free_port
from dizhu.v1 import table_pb2, table_service_pb2
from tests.support.grpc_calls import THREE, create_table, decide, error_info, rid, send, view
from tests.support.local_cluster import LocalCluster
from tests.support.resilient_play import Record, Referees, create_tables, lost_moves, play_through, read_log, summary

#: The referees' flags: quiet logs, a short grace, quick answers from a replica that stays silent.
QUIET = ["--log-level", "warning", "--grace", "2"]
REPLICA = ["--redis-cluster", "--durability", "replica", "--replica-timeout", "0.5", *QUIET]
TABLES = 6
T = TypeVar("T")


@pytest.fixture
async def referees(faulty_cluster: LocalCluster) -> AsyncIterator[Referees]:
    faulty_cluster.flush()
    started = Referees(faulty_cluster.url, REPLICA, 2)
    try:
        await started.start_all()
        yield started
    finally:
        await started.aclose()


async def _check_games(referees: Referees, tables: list[str], record: Record, ended: list[table_pb2.TableView]) -> None:
    assert set(record.failures) <= {grpc.StatusCode.UNAVAILABLE}, summary(record)
    assert not record.unexpected, summary(record)
    assert record.behind == 0, summary(record)
    assert all(view.close_reason == table_pb2.CLOSE_REASON_ROUND_LIMIT for view in ended)
    for table_id in tables:
        log = await read_log(referees.endpoints[0], table_id)
        assert lost_moves(record.acknowledged[table_id], log) == [], table_id


class TestPrimaryKilled:
    async def test_the_replica_takes_over_and_no_acknowledged_move_is_lost(
        self, faulty_cluster: LocalCluster, referees: Referees
    ) -> None:
        tables = await create_tables(referees.endpoints[0], TABLES, round_limit=2)
        record = Record()
        on_the_victim = tables[0].table_id
        acknowledged_before_the_switch = 0

        async def kill_a_primary() -> None:
            nonlocal acknowledged_before_the_switch
            victim = faulty_cluster.node_of(table_keys("dizhu", on_the_victim).state)
            faulty_cluster.kill(victim)
            await asyncio.to_thread(faulty_cluster.wait_for_failover, victim)
            acknowledged_before_the_switch = len(record.acknowledged[on_the_victim])
            # A replica for the promoted primary again (the killed node rejoins as one), else
            # --durability replica acknowledges nothing on its slots.
            await asyncio.to_thread(faulty_cluster.restart, victim)

        ended = await play_through(referees, tables, record, kill_a_primary)

        # The clients may meet UNAVAILABLE meanwhile, or not at all when the referees' own
        # retries outlast the failover: what counts is that the promoted replica took moves.
        assert len(record.acknowledged[on_the_victim]) > acknowledged_before_the_switch, summary(record)
        await _check_games(referees, [table.table_id for table in tables], record, ended)


class TestReplicaStopped:
    async def test_nothing_is_acknowledged_without_a_replica_and_the_retry_applies_once(
        self, faulty_cluster: LocalCluster, referees: Referees
    ) -> None:
        endpoint = referees.endpoints[0]
        table = await create_table(endpoint.tables, THREE, round_limit=1)
        public = await view(endpoint.tables, table)
        seat = public.turn_seat
        mine = await view(endpoint.tables, table, seat)
        decision = await decide(endpoint.rules, mine, __import__("random").Random(1))
        request_id = rid()
        primary = faulty_cluster.node_of(table_keys("dizhu", table.table_id).state)
        replica = faulty_cluster.replica_of(primary)
        assert replica.server is not None
        assert replica.server.pid is not None
        os.kill(replica.server.pid, signal.SIGSTOP)
        try:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await send(endpoint.tables, table, seat, mine.version, decision, request_id=request_id)
            # The move is written on the primary, and still not acknowledged to anyone.
            with pytest.raises(grpc.aio.AioRpcError) as again:
                await send(referees.endpoints[1].tables, table, seat, mine.version, decision, request_id=request_id)
        finally:
            os.kill(replica.server.pid, signal.SIGCONT)
        for error in (refused.value, again.value):
            assert error.code() == grpc.StatusCode.UNAVAILABLE, error.details()
            assert error_info(error).reason == "UNAVAILABLE"
            assert "replica" in (error.details() or "")
        retried = await send(endpoint.tables, table, seat, mine.version, decision, request_id=request_id)
        assert retried.table.version == mine.version + 1
        assert (await view(endpoint.tables, table)).version == mine.version + 1


class TestAStreamThroughAFailover:
    async def test_an_open_stream_hears_the_moves_made_after_its_tables_primary_died(
        self, faulty_cluster: LocalCluster
    ) -> None:
        """A process hears of appends on one subscriber connection, to the node of the first
        table it followed: that node dies here and stays dead, so the subscriber has to move."""
        faulty_cluster.flush()
        referee = Referees(faulty_cluster.url, ["--redis-cluster", "--heartbeat", "0.2", *QUIET], 1)
        await referee.start_all()
        try:
            endpoint = referee.endpoints[0]
            table = await create_table(endpoint.tables, THREE, round_limit=1)
            stream = endpoint.tables.WatchTable(table_service_pb2.WatchTableRequest(table_id=table.table_id))
            first = await stream.read()
            assert first.event.WhichOneof("payload") == "snapshot"
            # After its snapshot a stream reads back what its subscription may have missed; a
            # store lost during that read ends it UNAVAILABLE (the contract: resume), which is
            # not what is tested here. A heartbeat comes only once the stream waits on its feed.
            while (await stream.read()).event.WhichOneof("payload") != "heartbeat":
                pass
            victim = faulty_cluster.node_of(table_keys("dizhu", table.table_id).state)
            faulty_cluster.kill(victim)
            try:
                await asyncio.to_thread(faulty_cluster.wait_for_failover, victim)
                public = await _retried(lambda: view(endpoint.tables, table))
                seat = public.turn_seat
                mine = await _retried(lambda: view(endpoint.tables, table, seat))
                decision = await decide(endpoint.rules, mine, random.Random(2))
                request_id = rid()
                await _retried(
                    lambda: send(endpoint.tables, table, seat, mine.version, decision, request_id=request_id)
                )

                async def next_move() -> table_service_pb2.WatchTableResponse:
                    while (message := await stream.read()).event.WhichOneof("payload") in (
                        "heartbeat",
                        "seat_presence",
                    ):
                        pass
                    return message

                heard = await asyncio.wait_for(next_move(), 60)
                assert heard.event.WhichOneof("payload") in ("bid_made", "cards_played"), heard
                assert heard.event.sequence > first.event.sequence
                stream.cancel()
            finally:
                await asyncio.to_thread(faulty_cluster.restart, victim)
        finally:
            await referee.aclose()


async def _retried(call: Callable[[], Awaitable[T]]) -> T:
    """``call()`` again while the store is unavailable (a failover under way), as a careful client does."""
    for _ in range(100):
        try:
            return await call()
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNAVAILABLE:
                raise
            await asyncio.sleep(0.2)
    raise AssertionError("still UNAVAILABLE after 20 s")


@contextlib.asynccontextmanager
async def _standalone(directory: Path, port: int) -> AsyncIterator[EmbeddedRedis]:
    server = EmbeddedRedis(directory, port, appendonly=True)
    await server.astart()
    try:
        yield server
    finally:
        await server.astop()


class TestStandaloneRestartedFromItsAppendOnlyFile:
    async def test_a_killed_redis_comes_back_from_its_file_and_no_acknowledged_move_is_lost(
        self, tmp_path: Path
    ) -> None:
        port = free_port()
        redis = EmbeddedRedis(tmp_path, port, appendonly=True)
        await redis.astart()
        started = Referees(redis.url, ["--redis-wait", "60", *QUIET], 2)
        try:
            await started.start_all()
            tables = await create_tables(started.endpoints[0], TABLES, round_limit=2)
            record = Record()
            async with contextlib.AsyncExitStack() as restarted:

                async def crash_and_restart() -> None:
                    assert redis.pid is not None
                    os.killpg(redis.pid, signal.SIGKILL)  # a crash: nothing is flushed on the way out
                    await redis.astop()
                    await asyncio.sleep(0.5)  # the clients meet a store that is gone
                    await restarted.enter_async_context(_standalone(tmp_path, port))

                ended = await play_through(started, tables, record, crash_and_restart)
                assert record.failures[grpc.StatusCode.UNAVAILABLE] > 0, "the restart went unnoticed"
                await _check_games(started, [table.table_id for table in tables], record, ended)
        finally:
            await started.aclose()
            await redis.astop()
