"""The clock's work on tables, with no client to ask for it: timeouts, quarantines, idle tables.

The turn clock (:mod:`dizhu.service.clock`) asks for it: apply a table's timeout once its
deadline passed, look at a table whose timeout failed again only later, and close the tables
nobody acts at any more (``TablePolicy.idle_close_ms``). Each change is the clock's own,
written by the unit of work's compare-and-set like a client's move, so several referee
processes can do this work at once and each change is still made exactly once.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import structlog

from dizhu.referee.commands import abandon, timeout
from dizhu.referee.table import TableStatus
from dizhu.service.decoded_tables import DecodedTables
from dizhu.service.errors import is_store_trouble
from dizhu.service.metrics import ABANDONED
from dizhu.service.unit_of_work import UnitOfWork
from dizhu.store import TableStore

__all__ = ["TableJanitor"]

#: The sweep logs under the name it had before it was a module of its own (log queries keep working).
_log = structlog.get_logger("dizhu.unit_of_work")


class TableJanitor:
    """What the clock does to tables: each change written through ``work`` (the unit of work)."""

    def __init__(
        self,
        store: TableStore,
        work: UnitOfWork,
        decoded: DecodedTables,
        *,
        now: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._work = work
        self._decoded = decoded
        self._now = now
        self.policy = work.policy

    def _now_ms(self) -> int:
        return int(self._now() * 1000)

    async def time_out(self, table_id: str) -> bool:
        """Apply the clock to a table whose indexed deadline passed; True if it acted.

        Several referee processes may try at once: the compare-and-set lets exactly one
        act, the others find the version moved on.
        """
        loaded = await self._store.load(table_id, "clock", None)
        if loaded.state is None:
            await self._store.indexes.index_deadline(table_id, loaded.version, None, final=True)
            return False
        table = self._decoded.decode(table_id, loaded.state, loaded.presence)
        now_ms = self._now_ms()
        outcome = timeout(table, now_ms)
        if not outcome.changed:
            # Not due (the index was early or stale): index this version's deadline instead; a
            # closed table is forgotten (a late write of an older version put it back).
            closed = table.status is TableStatus.CLOSED
            await self._store.indexes.index_deadline(
                table_id, table.version, table.turn.deadline_ms or None, final=closed
            )
            return False
        return await self._work.save_timeout(table, outcome, now_ms)

    async def quarantine(self, table_id: str, delay_ms: int) -> None:
        """Make the clock look at ``table_id`` again in ``delay_ms`` only: applying its timeout failed."""
        loaded = await self._store.load(table_id, "clock", None)
        await self._store.indexes.defer_deadline(table_id, loaded.version, self._now_ms() + delay_ms)

    async def close_idle(self, limit: int = 100) -> int:
        """Close the tables no client acted at for ``policy.idle_close_ms``; how many were closed.

        The activity index may lag (a client's action is indexed at most once a minute), so
        each candidate's own state decides; a table found active is indexed again.
        """
        if not self.policy.idle_close_ms:
            return 0
        now_ms = self._now_ms()
        before_ms = now_ms - self.policy.idle_close_ms
        closed = 0
        for table_id, _ in await self._store.indexes.inactive_tables(before_ms, limit):
            try:
                closed += await self._close_if_idle(table_id, now_ms, before_ms)
            except Exception as error:
                if is_store_trouble(error):
                    raise
                # One table that cannot be read must not stop the sweep: look at it again later.
                _log.error("idle_close_failed", table_id=table_id, exc_info=True)
                await self._store.indexes.mark_active(table_id, now_ms)
        return closed

    async def _close_if_idle(self, table_id: str, now_ms: int, before_ms: int) -> int:
        loaded = await self._store.load(table_id, "clock", None)
        if loaded.state is None:
            await self._store.indexes.forget_activity(table_id)
            return 0
        table = self._decoded.decode(table_id, loaded.state, loaded.presence)
        if table.status is TableStatus.CLOSED:
            await self._work.indexing.let_go(table)
            return 0
        if table.upkeep.active_ms >= before_ms:
            await self._store.indexes.mark_active(table_id, table.upkeep.active_ms)
            return 0
        if not await self._work.save_clock_change(table, abandon(table, now_ms), now_ms):
            return 0
        ABANDONED.inc()
        _log.info("table_abandoned", table_id=table_id)
        return 1
