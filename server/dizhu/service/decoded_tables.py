"""The last state this process decoded or wrote for each table, by its exact bytes.

Consecutive moves at a table mostly reach the same process, which then skips decoding: the
bytes read from the store are compared with the ones it has (the store stays the truth; a
table changed elsewhere simply has other bytes). A table this process wrote last is also
where its next move starts from without reading it (see :meth:`UnitOfWork.mutate
<dizhu.service.unit_of_work.UnitOfWork.mutate>`). The reads, the changes and the clock's
work of a process share one.
"""

from __future__ import annotations

import collections
from typing import NamedTuple

from dizhu.referee import decode
from dizhu.referee.table import TableState, TableStatus

__all__ = ["DecodedTables"]


class _Known(NamedTuple):
    """A table as this process last read or wrote it."""

    data: bytes
    table: TableState
    #: The seats announced connected when it was read or written; None if unknown since.
    presence: int | None


class DecodedTables:
    """The tables this process decoded or wrote last, the least recently used going first beyond ``size``."""

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._tables: collections.OrderedDict[str, _Known] = collections.OrderedDict()

    @property
    def size(self) -> int:
        """How many tables are kept at most."""
        return self._size

    def __len__(self) -> int:
        return len(self._tables)

    def __contains__(self, table_id: object) -> bool:
        return table_id in self._tables

    def keep(self, table_id: str, data: bytes, table: TableState, presence: int | None) -> None:
        if table.status is TableStatus.CLOSED:  # never changed again: nothing to start a move from
            self._tables.pop(table_id, None)
            return
        self._tables[table_id] = _Known(data, table, presence)
        self._tables.move_to_end(table_id)
        if len(self._tables) > self._size:
            self._tables.popitem(last=False)

    def decode(self, table_id: str, data: bytes, presence: int) -> TableState:
        known = self._tables.get(table_id)
        table = known.table if known is not None and known.data == data else decode(data)
        self.keep(table_id, data, table, presence)
        return table

    def at(self, table_id: str, version: int) -> tuple[bytes, TableState, int] | None:
        """The table as last known here (its bytes, state and announced seats), if that was at
        ``version`` with its presence known."""
        known = self._tables.get(table_id)
        if known is None or known.presence is None or known.table.version != version:
            return None
        return known.data, known.table, known.presence

    def announced(self, table_id: str, presence: int | None) -> None:
        """The seats announced connected at the table changed here to ``presence`` (None: unknown)."""
        known = self._tables.get(table_id)
        if known is not None and known.presence != presence:
            self._tables[table_id] = known._replace(presence=presence)
