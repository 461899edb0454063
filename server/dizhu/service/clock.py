"""The turn clock: acts for seats whose time ran out, even when no client calls again.

Every referee process runs one clock task. It polls the deadline index for tables whose
deadline has passed and applies the table's timeout policy through the janitor
(:mod:`dizhu.service.janitor`), with the same compare-and-set as a move: when several
processes find the same due table, exactly one acts and the others see the version moved on.

One table cannot stop the clock of the others. A table whose timeout cannot be applied (a
state that does not decode, a bug) is logged with its traceback, counted
(``dizhu_clock_failures_total``) and quarantined: its index entry is moved later, by a
backoff that doubles from 1 s up to 5 minutes, so the tables due after it are served, and it
is tried again then. The same task also closes abandoned tables, every ``sweep_interval_s``.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import time
from typing import Final, Protocol

import structlog

from dizhu.service.errors import is_store_trouble
from dizhu.service.janitor import TableJanitor
from dizhu.service.loop_failures import LoopFailures
from dizhu.service.metrics import CLOCK_FAILURES, QUARANTINED
from dizhu.store import TableStore

__all__ = ["FIRST_BACKOFF_MS", "MAX_BACKOFF_MS", "Clock", "Quarantine", "run_clock"]

_log = structlog.get_logger("dizhu.clock")

#: The first wait before a failed table is tried again; it doubles up to ``MAX_BACKOFF_MS``.
FIRST_BACKOFF_MS: Final = 1000
MAX_BACKOFF_MS: Final = 5 * 60 * 1000
#: Failing tables remembered per process (beyond it the oldest start over at the first backoff).
_REMEMBERED: Final = 10_000


class Clock(Protocol):
    """Where the clock task reads the time: the ``time`` module, unless the caller gives another."""

    def time(self) -> float: ...

    def monotonic(self) -> float: ...


class Quarantine:
    """How often each table's timeout failed in a row, and how long to wait before the next try."""

    def __init__(self) -> None:
        self._failures: collections.OrderedDict[str, int] = collections.OrderedDict()

    def failed(self, table_id: str) -> int:
        """Count a failure; the backoff (ms) before the table is tried again."""
        failures = self._failures.pop(table_id, 0) + 1
        self._failures[table_id] = failures
        if len(self._failures) > _REMEMBERED:
            self._failures.popitem(last=False)
        QUARANTINED.set(len(self._failures))
        return min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS << min(failures - 1, 20))

    def succeeded(self, table_id: str) -> None:
        if self._failures.pop(table_id, None) is not None:
            QUARANTINED.set(len(self._failures))


async def _apply(janitor: TableJanitor, quarantine: Quarantine, table_id: str) -> None:
    """Apply one due table's timeout; quarantine the table if that fails for a reason of its own."""
    try:
        await janitor.time_out(table_id)  # counted and logged where it is written
    except asyncio.CancelledError:
        raise
    except Exception as error:
        if is_store_trouble(error):
            raise  # the store, not the table (unreachable, failing over, full): the whole tick is retried
        backoff_ms = quarantine.failed(table_id)
        CLOCK_FAILURES.inc()
        _log.error("clock_table_failed", table_id=table_id, retry_in_ms=backoff_ms, exc_info=True)
        await janitor.quarantine(table_id, backoff_ms)
        return
    quarantine.succeeded(table_id)


async def run_clock(
    store: TableStore,
    janitor: TableJanitor,
    *,
    interval_s: float = 0.1,
    sweep_interval_s: float = 10.0,
    stopping: asyncio.Event | None = None,
    clock: Clock = time,
) -> None:
    """Check the deadline index every ``interval_s`` until ``stopping`` is set (or the task is cancelled).

    Stopping does not rely on cancellation alone: redis-py's asyncio client can swallow a
    cancellation that lands in the middle of a command, and the loop would then run on.
    """
    stopping = stopping or asyncio.Event()
    quarantine = Quarantine()
    failures = LoopFailures("clock", monotonic=clock.monotonic)
    next_sweep = clock.monotonic()
    while not stopping.is_set():
        try:
            for table_id, _deadline in await store.indexes.due_tables(int(clock.time() * 1000)):
                await _apply(janitor, quarantine, table_id)
            if clock.monotonic() >= next_sweep:
                next_sweep = clock.monotonic() + sweep_interval_s
                if closed := await janitor.close_idle():
                    _log.info("abandoned_tables_closed", tables=closed)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            failures.failed(error)
        else:
            failures.succeeded()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stopping.wait(), interval_s)
