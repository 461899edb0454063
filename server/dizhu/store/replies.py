"""What the table store answers (:class:`Loaded`, :class:`Saved`, :class:`MemoryUse`), and how
Redis' replies -- bytes, integers in text, stream entries, RESP2 or RESP3 -- become them."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "EVENT_FIELD",
    "Loaded",
    "MemoryUse",
    "SaveOutcome",
    "Saved",
    "StoredEvent",
    "reply_bytes",
    "reply_int",
    "reply_text",
    "saved_of",
    "stream_event",
    "xread_entries",
]

#: The field of a table's stream entries that holds the event; those of its time and write id.
EVENT_FIELD: Final = b"e"
_TIME_FIELD: Final = b"t"
_WRITE_FIELD: Final = b"w"


@dataclass(frozen=True, slots=True)
class Loaded:
    """What :meth:`TableStore.load` read, all at one instant."""

    state: bytes | None
    """The table's state, or ``None`` if there is no such table (never created, or expired)."""
    version: int
    """The table's version; 0 when there is no table."""
    answer: bytes | None
    """The answer recorded for the ``(principal, request_id)`` asked about, if any."""
    sequence: int = 0
    """The sequence number of the table's last event (0 before any): a snapshot of
    ``state`` is followed by the events after this one."""
    presence: int = 0
    """The seats last announced connected, bit ``s`` for seat ``s`` (:mod:`dizhu.store.presence`)."""
    write: int = 0
    """The write id of the event ``sequence`` names (0 before any): see :class:`StoredEvent`."""


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One entry of a table's event stream, as :meth:`TableStore.read_entries` reads it."""

    sequence: int
    """The event's place in the table's log: 1, 2, ..."""
    payload: bytes
    """The event, as the writer gave it."""
    time_ms: int
    """When it was written: the writer's clock, never earlier than the previous event's
    (:data:`~dizhu.store.scripts.STAMP_WRITE`); 0 for an event stored without one."""
    write: int
    """The id of the write that appended it, unique within the table's history: an entry of
    the same sequence with another id belongs to another history (the store was restored
    behind its last writes, or the table recreated). 0 for an event stored without one."""


class SaveOutcome(enum.Enum):
    """How a :meth:`TableStore.create` or :meth:`TableStore.save` ended."""

    SAVED = "SAVED"
    """Written: the state, the events and the answer, all at once."""
    CONFLICT = "CONFLICT"
    """Nothing written: the version moved on (or, for ``create``, the table already exists;
    for ``save``, it does not exist). The caller reloads and decides again."""
    DUPLICATE = "DUPLICATE"
    """Nothing written: this request id already has an answer, which is returned."""


@dataclass(frozen=True, slots=True)
class Saved:
    """The result of :meth:`TableStore.create` or :meth:`TableStore.save`."""

    outcome: SaveOutcome
    answer: bytes | None = None
    """The answer recorded first, for :attr:`SaveOutcome.DUPLICATE`; else ``None``."""
    first_sequence: int = 0
    """For :attr:`SaveOutcome.SAVED`: the sequence number of the first appended event (with no
    events, the number the next one will get); else 0."""
    version: int = 0
    """The table's version after the call: the new one when saved, the stored one otherwise
    (0 if there is no table) -- what a ``STALE_STATE`` error reports as ``current_version``."""


@dataclass(frozen=True, slots=True)
class MemoryUse:
    """How full Redis is: ``INFO memory``'s ``used_memory`` and ``maxmemory`` (0: no limit)."""

    used: int
    limit: int

    def above(self, fraction: float) -> bool:
        """Whether more than ``fraction`` of the limit is used (never, without a limit)."""
        return self.limit > 0 and self.used > fraction * self.limit


def reply_bytes(value: object) -> bytes | None:
    """A bulk reply as bytes (``None`` stays ``None``)."""
    if value is None or isinstance(value, bytes):
        return value
    raise TypeError(f"expected bytes from Redis, got {type(value).__name__}: is decode_responses on?")


def reply_text(value: object) -> str:
    """A member or key reply as text."""
    return value.decode() if isinstance(value, bytes) else str(value)


def reply_int(value: object) -> int:
    """A decimal bulk reply as an int; ``None`` (no such key or field) is 0."""
    raw = reply_bytes(value)
    return 0 if raw is None else int(raw)


def stream_event(entry: Any) -> StoredEvent:
    """A stream entry ``(b"<seq>-1", {b"e": payload, b"t": time, b"w": write id})``."""
    entry_id, fields = entry
    payload = reply_bytes(fields[EVENT_FIELD])
    assert payload is not None
    return StoredEvent(
        sequence=int(entry_id.split(b"-", 1)[0]),
        payload=payload,
        time_ms=reply_int(fields.get(_TIME_FIELD)),
        write=reply_int(fields.get(_WRITE_FIELD)),
    )


def saved_of(reply: list[Any]) -> Saved:
    outcome, answer, first_sequence, version = reply
    return Saved(
        outcome=SaveOutcome(outcome.decode()),
        answer=answer,
        first_sequence=int(first_sequence),
        version=reply_int(version),
    )


def xread_entries(reply: Any) -> list[Any]:
    """The entries of the one stream in an ``XREAD`` reply (RESP2 list or RESP3 map)."""
    if not reply:
        return []
    if isinstance(reply, dict):  # RESP3: {stream: [entries]}
        (entries,) = reply.values()
        return list(entries[0] if entries and isinstance(entries[0], list) else entries)
    ((_stream, entries),) = reply
    return list(entries)
