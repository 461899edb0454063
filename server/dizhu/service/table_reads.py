"""Reading tables for the table service: a table, a page of open tables, a caller's snapshot, a replay.

A read never changes a table: it goes through this process's decoded tables (the bytes the
store holds decide which state is current) and, for a seat's own read, counts as the seat's
call for its presence (:mod:`dizhu.service.presence`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple

from dizhu.referee.auth import Principal, Role, resolve
from dizhu.referee.errors import TableNotFound
from dizhu.referee.table import TableState, TableStatus
from dizhu.rules import VARIANTS
from dizhu.service.decoded_tables import DecodedTables
from dizhu.service.identifiers import valid_table_id
from dizhu.service.metadata import Credentials
from dizhu.service.presence import Presence, occupied_mask
from dizhu.store import TableStore

__all__ = ["Snapshot", "TableReads"]


#: The most seats a table has: a table's presence refreshes are remembered per seat.
_MOST_SEATS = max(variant.players for variant in VARIANTS.values())


class Snapshot(NamedTuple):
    """A table as read for one caller (see :meth:`TableReads.snapshot`)."""

    table: TableState
    principal: Principal
    #: The sequence of the last event the table reflects.
    sequence: int
    #: The seats connected, bit ``s`` for seat ``s``.
    presence: int
    #: The write id of the event ``sequence`` names (see :class:`dizhu.store.StoredEvent`).
    write: int = 0


class TableReads:
    """The table service's reads, and who is at which table (``presence``: it reads tables too)."""

    def __init__(
        self,
        store: TableStore,
        decoded: DecodedTables,
        *,
        now: Callable[[], float] = time.time,
        presence_window_s: float = 30.0,
        presence_lease_s: float = 15.0,
    ) -> None:
        self._store = store
        self._decoded = decoded
        #: Who is at which table (SeatView.connected); see :mod:`dizhu.service.presence`.
        self.presence = Presence(
            store.presence(),
            self.table,
            window_s=presence_window_s,
            lease_s=presence_lease_s,
            now=now,
            remembered=_MOST_SEATS * decoded.size,
        )

    async def table(self, table_id: str) -> TableState | None:
        """The table as stored now, None if there is none."""
        loaded = await self._store.load(valid_table_id(table_id), "anon", None)
        return None if loaded.state is None else self._decoded.decode(table_id, loaded.state, loaded.presence)

    async def open_tables(self, start: int, count: int) -> tuple[list[TableState], bool]:
        """Up to ``count`` open tables from position ``start`` of the activity index (the most
        recently active first), and whether the index may hold more after them. Entries of
        tables closed or gone meanwhile are skipped (they leave the index as they close)."""
        listed = await self._store.indexes.active_tables(start, count)
        found = [await self.table(table_id) for table_id in listed]
        still_open = [table for table in found if table is not None and table.status is not TableStatus.CLOSED]
        return still_open, len(listed) == count

    async def snapshot(self, table_id: str, credentials: Credentials) -> Snapshot:
        """The table, who the caller is, the sequence of the last event the table reflects, and
        who is connected (a seat's read counts as a call: see :mod:`dizhu.service.presence`)."""
        loaded = await self._store.load(valid_table_id(table_id), "anon", None)
        if loaded.state is None:
            raise TableNotFound(f"no table {table_id}", metadata={"table_id": table_id})
        table = self._decoded.decode(table_id, loaded.state, loaded.presence)
        principal = resolve(table, credentials.token())
        if table.status is TableStatus.CLOSED:
            return Snapshot(table, principal, loaded.sequence, 0, loaded.write)
        presence = loaded.presence & occupied_mask(table)
        if principal.role is Role.SEAT and principal.seat is not None:
            await self.presence.called(table, principal.seat, loaded.presence)
            presence |= 1 << principal.seat
        return Snapshot(table, principal, loaded.sequence, presence, loaded.write)

    async def read_replay(self, table_id: str, round_number: int) -> str:
        """The JSON record of a finished round."""
        record = await self._store.read_record(valid_table_id(table_id), f"replay:{round_number}")
        if record is None:
            raise TableNotFound(
                f"no finished round {round_number} at table {table_id}",
                metadata={"table_id": table_id, "round": str(round_number)},
            )
        return record.decode()
