"""The composition root takes the process's clock: every part of a referee reads the time from it."""

from __future__ import annotations

import time

import grpc

from dizhu.config import ServerConfig
from dizhu.process import create_server
from dizhu.store import TableStore
from dizhu.v1 import table_service_pb2_grpc
from tests.support.grpc_calls import THREE, create_table
from tests.support.live import watch

#: Far more than a call takes: a time this far ahead can only be the given clock's.
_AHEAD_S = 3600.0


class _ClockAhead:
    def time(self) -> float:
        return time.time() + _AHEAD_S

    def monotonic(self) -> float:
        return time.monotonic()


class TestTheProcessClock:
    async def test_a_referee_created_with_a_clock_stamps_with_it(self, store: TableStore) -> None:
        referee = await create_server(ServerConfig(address="127.0.0.1:0"), store, clock=_ClockAhead())
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{referee.port}") as channel:
                tables = table_service_pb2_grpc.TableServiceStub(channel)
                table = await create_table(tables, THREE)
                watcher = watch(tables, table.table_id)
                snapshot = await watcher.wait_kind("snapshot")
                await watcher.cancel()
        finally:
            await referee.stop(0)
        # The table's creation was stamped by the given clock, and so is the snapshot that shows it.
        assert snapshot.time.ToSeconds() > time.time() + _AHEAD_S / 2
