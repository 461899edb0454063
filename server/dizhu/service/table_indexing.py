"""The unit of work's index bookkeeping: what each write of a table tells the store's indexes.

The indexes (:class:`~dizhu.store.TableIndexes`) say where to look, the table's state holds
the truth; so each entry is written in the order that keeps a crash harmless:

- a turn deadline is hinted before the write (it may only be made earlier: if this process
  dies right after the write, the clock still looks in time) and indexed after it;
- a closed table is let go: no longer active, no longer counted against its creator's quota;
- a client's action is indexed at most once a minute per table and process;
- a creator's new table is counted against its quota before it is written, and let go again
  if the write fails.
"""

from __future__ import annotations

import collections
from typing import Final

from dizhu.referee.errors import QuotaExceeded
from dizhu.referee.table import TableState, TableStatus
from dizhu.store import TableIndexes

__all__ = ["TableIndexing"]

#: A client action is written to the activity index at most this often per table.
_ACTIVITY_GRANULARITY_MS: Final = 60_000
#: How long a creator over its open-table quota is told to wait.
_QUOTA_RETRY_MS: Final = 60_000


class TableIndexing:
    """Keeps ``indexes`` in step with the tables this process writes.

    ``max_open_tables``: a creator's quota; ``remembered``: how many tables' last indexed
    action this process remembers (as many as it keeps decoded).
    """

    def __init__(self, indexes: TableIndexes, *, max_open_tables: int, remembered: int) -> None:
        self._indexes = indexes
        self._max_open_tables = max_open_tables
        self._remembered = remembered
        #: When this process last indexed each table's activity (the oldest forgotten first).
        self._marked: collections.OrderedDict[str, int] = collections.OrderedDict()

    @property
    def marks_kept(self) -> int:
        """How many tables' last activity marks this process remembers now (at most ``remembered``)."""
        return len(self._marked)

    async def before_write(self, after: TableState) -> None:
        """Hint the deadline of ``after``, about to be written, so that the clock looks in time."""
        if after.settings.clock.decision_ms and after.turn.deadline_ms:
            # Never later, never dropped before the write: an early entry only makes the clock look once more.
            await self._indexes.index_deadline(after.table_id, after.version, after.turn.deadline_ms, early=True)

    async def written(self, after: TableState, now_ms: int, *, by_client: bool) -> None:
        """Index ``after``, written: its deadline; a closed table let go; a client's action marked."""
        closing = after.status is TableStatus.CLOSED
        if after.settings.clock.decision_ms:
            await self._indexes.index_deadline(
                after.table_id, after.version, after.turn.deadline_ms or None, final=closing
            )
        if closing:
            await self.let_go(after)
        elif by_client:
            await self.mark_active(after.table_id, now_ms)

    async def created(self, table: TableState, now_ms: int) -> None:
        """Index a new table, written: active now, and its deadline if its clock runs already."""
        await self.mark_active(table.table_id, now_ms)
        if table.turn.deadline_ms:
            await self._indexes.index_deadline(table.table_id, table.version, table.turn.deadline_ms)

    async def let_go(self, table: TableState) -> None:
        """A closed table no longer counts as open: nor as active, nor against its creator's quota."""
        self._marked.pop(table.table_id, None)
        await self._indexes.forget_activity(table.table_id)
        if table.upkeep.owner:
            await self._indexes.release_table(table.upkeep.owner, table.table_id)

    async def mark_active(self, table_id: str, now_ms: int) -> None:
        """Index a client's action, at most once a minute per table and process (the state holds the truth)."""
        marked = self._marked.get(table_id)
        if marked is not None and now_ms - marked < _ACTIVITY_GRANULARITY_MS:
            return
        await self._indexes.mark_active(table_id, now_ms)
        self._marked[table_id] = now_ms
        self._marked.move_to_end(table_id)
        if len(self._marked) > self._remembered:
            self._marked.popitem(last=False)

    async def reserve(self, owner: str, table_id: str, now_ms: int) -> None:
        """Count a new table against ``owner``'s quota; QUOTA_EXCEEDED if it is full."""
        most = self._max_open_tables
        if await self._indexes.reserve_table(owner, table_id, most, now_ms):
            return
        # Full: a reservation whose release was lost (a process died meanwhile) may be stale.
        if await self._indexes.release_finished(owner) < most and await self._indexes.reserve_table(
            owner, table_id, most, now_ms
        ):
            return
        raise QuotaExceeded(
            f"this client has {most} open tables, as many as it may; close one first",
            retry_after_ms=_QUOTA_RETRY_MS,
            metadata={"limit": "open_tables", "max": str(most)},
        )

    async def release(self, owner: str, table_id: str) -> None:
        """A table reserved for ``owner`` was not created after all."""
        await self._indexes.release_table(owner, table_id)
