"""Key layout of a table in Redis, and validation of the ids that go into keys.

Every key of one table carries the same hash tag ``{t:<table_id>}``, so that Redis Cluster
puts them all in one slot and the multi-key Lua scripts of :mod:`dizhu.store.scripts` run
unchanged on a cluster::

    <prefix>:{t:<table_id>}:state      hash: version, data, seq, answers (a counter); fin = 1 once finished
    <prefix>:{t:<table_id>}:events     stream: ids "<seq>-1", field "e"
    <prefix>:{t:<table_id>}:records    hash: named records (replay:<round>)
    <prefix>:{t:<table_id>}:answers    hash: answer id -> "<expiry ms>:<the recorded answer>"
    <prefix>:{t:<table_id>}:answered   sorted set: answer id, scored by the order it was recorded in
    <prefix>:{t:<table_id>}:presence   sorted set: seat presence leases (dizhu.store.presence)

Beside the tables, the indexes every referee process scans (the turn clock's deadlines, the
presence leases due to lapse) are split into :data:`INDEX_SHARDS` shards, each under a hash
tag of its own, so that on Redis Cluster they spread over the nodes instead of loading one;
a table's entries all live in its shard (:func:`index_shard`)::

    <prefix>:{clock:<n>}:deadlines     sorted set: table id -> deadline (ms)
    <prefix>:{clock:<n>}:versions      hash: table id -> the table version its deadline belongs to
    <prefix>:{presence:<n>}:due        sorted set: table id -> the earliest time a lease of it may lapse (ms)

An answer id is a hash of who asked and the request id (:func:`answer_id`): neither appears
in any key or value, so a request id can be a secret its caller holds (docs/security.md).

Ids are validated here, before any key is built, so that no id can break out of its place in
a key (a ``}`` would move the hash tag, a ``*`` would widen a ``SCAN`` pattern). A bad id
raises :class:`ValueError`; callers map it to ``INVALID_ARGUMENT``.

- table ids: 1..128 characters of ``[A-Za-z0-9._:-]``;
- principals (who asks: a stable name of the caller, never a bearer token itself):
  1..128 characters of ``[A-Za-z0-9._-]``;
- request ids: 1..128 printable ASCII characters (``!`` to ``~`` and space), a superset of
  the ``[A-Za-z0-9._:-]`` that UUIDs use, because the public contract (docs/api.md) accepts
  any printable ASCII;
- the prefix: 1..64 characters of ``[A-Za-z0-9._:-]``.
"""

from __future__ import annotations

import hashlib
import re
import zlib
from dataclasses import dataclass
from typing import Final

__all__ = [
    "INDEX_SHARDS",
    "MAX_ID_LENGTH",
    "IndexKeys",
    "TableKeys",
    "answer_id",
    "index_keys",
    "index_shard",
    "table_keys",
    "validate_principal",
    "validate_request_id",
    "validate_table_id",
]

MAX_ID_LENGTH = 128
"""The longest table id, principal or request id accepted."""

INDEX_SHARDS: Final = 16
"""How many shards each scanned index has. Every process writes and scans all of them, so the
number is part of the layout: changing it strands the entries of the shards that go."""

_TABLE_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_PRINCIPAL = re.compile(r"[A-Za-z0-9._-]{1,128}")
_REQUEST_ID = re.compile(r"[ -~]{1,128}")
_PREFIX = re.compile(r"[A-Za-z0-9._:-]{1,64}")


def _check(value: object, pattern: re.Pattern[str], what: str, allowed: str) -> str:
    if not isinstance(value, str) or pattern.fullmatch(value) is None:
        raise ValueError(f"invalid {what} {value!r}: expected {allowed}")
    return value


def validate_table_id(table_id: str) -> str:
    """Return ``table_id`` unchanged, or raise :class:`ValueError` if it cannot be a table id."""
    return _check(table_id, _TABLE_ID, "table id", "1..128 characters of [A-Za-z0-9._:-]")


def validate_principal(principal: str) -> str:
    """Return ``principal`` unchanged, or raise :class:`ValueError` if it cannot name a caller."""
    return _check(principal, _PRINCIPAL, "principal", "1..128 characters of [A-Za-z0-9._-]")


def validate_request_id(request_id: str) -> str:
    """Return ``request_id`` unchanged, or raise :class:`ValueError` if it cannot be a request id."""
    return _check(request_id, _REQUEST_ID, "request id", "1..128 printable ASCII characters")


def validate_prefix(prefix: str) -> str:
    """Return ``prefix`` unchanged, or raise :class:`ValueError` if it cannot start a key."""
    return _check(prefix, _PREFIX, "key prefix", "1..64 characters of [A-Za-z0-9._:-]")


@dataclass(frozen=True, slots=True)
class TableKeys:
    """The keys of one table. Build it with :func:`table_keys`, which validates the ids."""

    state: str
    """The hash with fields ``version`` (decimal), ``data`` (the caller's bytes), ``seq``
    (the sequence number of the table's last event, decimal; 0 before any)."""
    events: str
    """The stream of events; entry ``<seq>-1`` holds field ``e`` = the event's bytes."""
    records: str
    """A hash of named records kept with the table (e.g. ``replay:<round>``)."""
    answers: str
    """A hash of the recorded answers, by answer id (:func:`answer_id`), each ``<expiry ms>:<answer>``."""
    answered: str
    """A sorted set of the answer ids, scored by the order they were recorded in."""
    presence: str
    """A sorted set of the seats' presence leases (see :mod:`dizhu.store.presence`)."""
    sync: str
    """A short-lived marker written only to confirm, with ``WAIT``, that a replica holds
    everything written to the table before (see :mod:`dizhu.store.connection`)."""
    scan_pattern: str
    """A ``SCAN MATCH`` pattern for every key of the table (admin and tests only)."""


def answer_id(principal: str, request_id: str) -> str:
    """The name of the answer to ``request_id`` sent by ``principal``: a hash that gives back neither."""
    digest = hashlib.sha256(f"{validate_principal(principal)}\0{validate_request_id(request_id)}".encode())
    return digest.hexdigest()[:32]


def table_keys(prefix: str, table_id: str) -> TableKeys:
    """The keys of table ``table_id`` under ``prefix``; raises :class:`ValueError` on a bad id."""
    base = f"{validate_prefix(prefix)}:{{t:{validate_table_id(table_id)}}}"
    return TableKeys(
        state=f"{base}:state",
        events=f"{base}:events",
        records=f"{base}:records",
        answers=f"{base}:answers",
        answered=f"{base}:answered",
        presence=f"{base}:presence",
        sync=f"{base}:sync",
        scan_pattern=f"{base}:*",
    )


def index_shard(table_id: str) -> int:
    """The shard of the indexes that holds ``table_id``'s entries: CRC-32 of the id, modulo the shards."""
    return zlib.crc32(validate_table_id(table_id).encode()) % INDEX_SHARDS


@dataclass(frozen=True, slots=True)
class IndexKeys:
    """The keys of one shard of the scanned indexes (all under the shard's own hash tags)."""

    deadlines: str
    """The turn clock's sorted set: table id -> deadline (ms)."""
    versions: str
    """The hash beside it: table id -> the table version the indexed deadline belongs to."""
    presence_due: str
    """The presence sorted set: table id -> the earliest time one of its leases may lapse (ms)."""


def index_keys(prefix: str, shard: int) -> IndexKeys:
    """The keys of index shard ``shard`` (0 <= shard < :data:`INDEX_SHARDS`) under ``prefix``."""
    if not 0 <= shard < INDEX_SHARDS:
        raise ValueError(f"no index shard {shard}: there are {INDEX_SHARDS}")
    prefix = validate_prefix(prefix)
    return IndexKeys(
        deadlines=f"{prefix}:{{clock:{shard}}}:deadlines",
        versions=f"{prefix}:{{clock:{shard}}}:versions",
        presence_due=f"{prefix}:{{presence:{shard}}}:due",
    )
