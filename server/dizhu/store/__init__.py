"""Where tables live: state, event streams and recorded answers in Redis.

``TableStore`` is the whole API; the key layout is in :mod:`dizhu.store.keys`, the Lua
scripts in :mod:`dizhu.store.scripts`, connecting to one Redis or a Redis Cluster in
:mod:`dizhu.store.connection`, the guarantees in docs/store.md.
"""

from __future__ import annotations

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
from dizhu.store.redis_store import Loaded, MemoryUse, NotReplicated, Saved, SaveOutcome, StoredEvent, TableStore

__all__ = [
    "SUBSCRIBED",
    "Appends",
    "Loaded",
    "MemoryUse",
    "NotReplicated",
    "PresenceOutcome",
    "PresenceStore",
    "PresenceUpdate",
    "SaveOutcome",
    "Saved",
    "StoredEvent",
    "TableKeys",
    "TableStore",
    "answer_id",
    "table_keys",
    "validate_principal",
    "validate_request_id",
    "validate_table_id",
]
