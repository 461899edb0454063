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
from dataclasses import dataclass

__all__ = [
    "MAX_ID_LENGTH",
    "TableKeys",
    "answer_id",
    "table_keys",
    "validate_principal",
    "validate_request_id",
    "validate_table_id",
]

MAX_ID_LENGTH = 128
"""The longest table id, principal or request id accepted."""

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
        scan_pattern=f"{base}:*",
    )
