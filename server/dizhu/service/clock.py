"""The turn clock: acts for seats whose time ran out, even when no client calls again.

Every referee process runs one clock task. It polls the deadline index for tables whose
deadline has passed and applies the table's timeout policy through the gateway, with the
same compare-and-set as a move: when several processes find the same due table, exactly one
acts and the others see the version moved on.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import structlog

from dizhu.service.gateway import Gateway
from dizhu.service.metrics import TIMEOUTS
from dizhu.store import TableStore

__all__ = ["run_clock"]

_log = structlog.get_logger("dizhu.clock")


async def run_clock(
    store: TableStore, gateway: Gateway, *, interval_s: float = 0.1, stopping: asyncio.Event | None = None
) -> None:
    """Check the deadline index every ``interval_s`` until ``stopping`` is set (or the task is cancelled).

    Stopping does not rely on cancellation alone: redis-py's asyncio client can swallow a
    cancellation that lands in the middle of a command, and the loop would then run on.
    """
    stopping = stopping or asyncio.Event()
    while not stopping.is_set():
        try:
            for table_id, _deadline in await store.due_tables(int(time.time() * 1000)):
                if await gateway.time_out(table_id):
                    TIMEOUTS.inc()
                    _log.info("timed_out", table_id=table_id)
        except asyncio.CancelledError:
            raise
        except Exception:
            _log.warning("clock_failed", exc_info=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stopping.wait(), interval_s)
