"""Where tables live: state, event streams and recorded answers in Redis.

``TableStore`` keeps the tables (its ``save`` writes a :class:`Change`), its ``indexes``
(:class:`TableIndexes`) the deadlines, activity and quotas beside them; the key layout is
in :mod:`dizhu.store.keys`, the Lua scripts in :mod:`dizhu.store.scripts`, connecting to one
Redis or a Redis Cluster in :mod:`dizhu.store.connection`, the guarantees in docs/store.md.
"""

from __future__ import annotations

from dizhu.store.changes import Answer, Change
from dizhu.store.indexes import TableIndexes
from dizhu.store.keys import (
    TableKeys,
    answer_id,
    table_keys,
    validate_principal,
    validate_request_id,
    validate_table_id,
)
from dizhu.store.notifications import SUBSCRIBED, Appends
from dizhu.store.presence import PresenceOutcome, PresenceStore, PresenceUpdate
from dizhu.store.replies import Loaded, MemoryUse, Saved, SaveOutcome, StoredEvent
from dizhu.store.table_store import NotReplicated, TableStore, keep_table_keys_of

__all__ = [
    "SUBSCRIBED",
    "Answer",
    "Appends",
    "Change",
    "Loaded",
    "MemoryUse",
    "NotReplicated",
    "PresenceOutcome",
    "PresenceStore",
    "PresenceUpdate",
    "SaveOutcome",
    "Saved",
    "StoredEvent",
    "TableIndexes",
    "TableKeys",
    "TableStore",
    "answer_id",
    "keep_table_keys_of",
    "table_keys",
    "validate_principal",
    "validate_request_id",
    "validate_table_id",
]
