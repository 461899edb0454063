"""What one referee process does with tables, put together once: reads, changes and the clock's work.

Each piece is its own object, and each caller takes the piece it uses: the servicers the
reads and the unit of work, the turn clock the janitor. They share this process's decoded
tables and one clock, both given here.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from dizhu.config import ServerConfig
from dizhu.referee.signing import SigningKeys
from dizhu.referee.table_codec import keep_growing_lists_of
from dizhu.referee.tokens import TokenKeys
from dizhu.rules.serialization import keep_plain_forms_of
from dizhu.service.convert.settings import keep_shown_settings_of
from dizhu.service.convert.views import keep_digests_of, keep_entries_of
from dizhu.service.decoded_tables import DecodedTables
from dizhu.service.janitor import TableJanitor
from dizhu.service.presence import Presence
from dizhu.service.rules_servicer import keep_legal_moves_of
from dizhu.service.table_reads import TableReads
from dizhu.service.unit_of_work import TablePolicy, UnitOfWork
from dizhu.service.watch import keep_decoded_events_of
from dizhu.store import TableStore, keep_table_keys_of

__all__ = ["TableWork", "bound_process_caches"]

#: The declared settings, for the defaults of a piece made without a configuration.
_DEFAULTS = ServerConfig()


@dataclasses.dataclass(frozen=True, slots=True)
class TableWork:
    """The pieces, built over one store by :meth:`build`."""

    reads: TableReads
    #: The changes a client asks for (and the clock's, written for the janitor).
    changes: UnitOfWork
    janitor: TableJanitor
    #: The last state this process decoded or wrote for each table, shared by the pieces.
    decoded: DecodedTables

    @property
    def presence(self) -> Presence:
        """Who is at which table (SeatView.connected); see :mod:`dizhu.service.presence`."""
        return self.reads.presence

    @classmethod
    def build(
        cls,
        store: TableStore,
        *,
        keys: TokenKeys | None = None,
        signing: SigningKeys | None = None,
        policy: TablePolicy | None = None,
        now: Callable[[], float] = time.time,
        cache_size: int = _DEFAULTS.cached_tables,
        presence_window_s: float = _DEFAULTS.presence_window_s,
        presence_lease_s: float = _DEFAULTS.presence_lease_s,
    ) -> TableWork:
        """The pieces over ``store``, all reading the time from ``now`` (seconds since the epoch)."""
        decoded = DecodedTables(cache_size)
        reads = TableReads(
            store, decoded, now=now, presence_window_s=presence_window_s, presence_lease_s=presence_lease_s
        )
        changes = UnitOfWork(store, decoded, reads.presence, keys=keys, signing=signing, policy=policy, now=now)
        return cls(reads, changes, TableJanitor(store, changes, decoded, now=now), decoded)


def bound_process_caches(cached_tables: int) -> None:
    """Bound every process-wide cache a referee fills by ``--cached-tables`` (docs/scaling.md, "Every
    bound of a referee process"): with the default, 4,096, each keeps the size it has unless set.

    Process-wide, so set by ``dizhu serve`` for its process, not by each referee that tests start in
    theirs; what the caches kept is forgotten.
    """
    # Kept for tables whose deal is running only: half as many as the decoded tables.
    keep_growing_lists_of(max(1, cached_tables // 2))
    keep_digests_of(max(1, cached_tables // 2))
    # Keyed by value, shared by the tables that show the same one: a deal, a stored event, a
    # table's keys and its shown settings per table; two actions and history entries (a table's
    # latest decisions, mostly); a seat entry per seat of the largest table, and as many legal moves.
    keep_plain_forms_of(deals=cached_tables, actions=2 * cached_tables)
    keep_decoded_events_of(cached_tables)
    keep_table_keys_of(cached_tables)
    keep_shown_settings_of(cached_tables)
    keep_entries_of(seats=4 * cached_tables, history=2 * cached_tables)
    keep_legal_moves_of(4 * cached_tables)
