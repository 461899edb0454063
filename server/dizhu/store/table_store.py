"""The table store: each table's state, event stream, records and recorded answers in Redis.

The store knows bytes and integers only -- no game, no protobuf. Every referee process holds
its own :class:`TableStore` over the same Redis, and the store makes their writes safe:

- :meth:`TableStore.save` is one ``EVALSHA`` that checks the request id (idempotency), then
  the expected version (compare-and-set), and only then writes the state, appends the events
  and records the answer -- all or nothing, never interleaved with another writer. What it
  writes is one :class:`~dizhu.store.changes.Change`.
- :meth:`TableStore.load` is one round trip, and reads state and answer atomically.

Beside the tables, its :attr:`TableStore.indexes` (:class:`~dizhu.store.indexes.TableIndexes`)
keep the turn clock's deadlines, each table's last client action and each creator's open
tables, apart from the tables' keys.

It runs on one Redis server or on a Redis Cluster (:mod:`dizhu.store.connection`). With
``replicas`` > 0 a write is acknowledged only once that many replicas hold it (``WAIT``):
a failover then loses no acknowledged move.

The key layout is in :mod:`dizhu.store.keys`, the scripts in :mod:`dizhu.store.scripts`,
what it answers in :mod:`dizhu.store.replies`, the guarantees in docs/store.md.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Final

from redis.commands.core import AsyncScript

from dizhu.store import scripts
from dizhu.store.changes import Answer, Change
from dizhu.store.connection import (
    NotReplicated,
    StoreClient,
    confirm_replicated,
    info_of_primaries,
    run_on_key_node,
    write_and_wait,
)
from dizhu.store.indexes import TableIndexes
from dizhu.store.keys import TableKeys, answer_id, table_keys, validate_principal
from dizhu.store.notifications import Appends
from dizhu.store.presence import PresenceStore
from dizhu.store.replies import (
    Loaded,
    MemoryUse,
    Saved,
    SaveOutcome,
    StoredEvent,
    reply_bytes,
    reply_int,
    saved_of,
    stream_event,
    xread_entries,
)

__all__ = [
    "Answer",
    "Change",
    "Loaded",
    "MemoryUse",
    "NotReplicated",
    "SaveOutcome",
    "Saved",
    "StoredEvent",
    "TableIndexes",
    "TableStore",
    "keep_table_keys_of",
]

DAY_S: Final = 24 * 60 * 60
# The highest sub-id of a stream id: "<n>-<MAX>" is the last id any entry of sequence n can have.
_MAX_SUB_ID: Final = 2**64 - 1


#: Keys of the tables in play, built (and their ids validated) once rather than on every call;
#: as many as the referee keeps decoded tables (about 0.8 KiB each).
_known_table_keys = functools.lru_cache(maxsize=4096)(table_keys)


def keep_table_keys_of(tables: int) -> None:
    """Keep the keys of at most ``tables`` tables in this process (4,096 unless set); those kept are forgotten."""
    global _known_table_keys  # noqa: PLW0603 -- the process's one cache, resized
    _known_table_keys = functools.lru_cache(maxsize=tables)(table_keys)


class TableStore:
    """Tables in Redis, shared by any number of referee processes.

    ``redis`` (one server's client, or a cluster's) must return bytes (the default
    ``decode_responses=False``). On a server-streaming handler keep ``block_ms`` of
    :meth:`read_events` well below the client's ``socket_timeout``.

    ``replicas``: how many replicas must hold a created or saved table (and an answer returned
    again) before the call returns; 0 (the default) does not wait. A write no replica confirms
    within ``replica_timeout_ms`` raises :class:`NotReplicated` (nothing acknowledged: retry).

    Raises :class:`ValueError` for a malformed table id, principal or request id (see
    :mod:`dizhu.store.keys`), and lets ``redis.exceptions.RedisError`` through.
    """

    def __init__(
        self,
        redis: StoreClient,
        *,
        prefix: str = "dizhu",
        finished_ttl_s: int = 7 * DAY_S,
        answer_ttl_s: int = DAY_S,
        events_maxlen: int = 10_000,
        answers_per_table: int = 1000,
        replicas: int = 0,
        replica_timeout_ms: int = 1000,
    ) -> None:
        if redis.get_connection_kwargs().get("decode_responses"):
            raise ValueError("TableStore needs a Redis client with decode_responses=False")
        if min(finished_ttl_s, answer_ttl_s, events_maxlen, answers_per_table, replica_timeout_ms) < 1:
            raise ValueError(
                "finished_ttl_s, answer_ttl_s, events_maxlen, answers_per_table and replica_timeout_ms must be positive"
            )
        if replicas < 0:
            raise ValueError("replicas must be 0 or more")
        table_keys(prefix, "x")  # validates the prefix now rather than at the first call
        self._redis = redis
        self._prefix = prefix
        self.finished_ttl_s: Final = finished_ttl_s
        self.answer_ttl_s: Final = answer_ttl_s
        self.events_maxlen: Final = events_maxlen
        self.answers_per_table: Final = answers_per_table
        self.replicas: Final = replicas
        self.replica_timeout_ms: Final = replica_timeout_ms
        self._load = redis.register_script(scripts.LOAD)
        self._create = redis.register_script(scripts.CREATE)
        self._save = redis.register_script(scripts.SAVE)
        #: The deadline, activity and quota indexes of the same tables.
        self.indexes: Final = TableIndexes(
            redis, prefix=prefix, replicas=replicas, replica_timeout_ms=replica_timeout_ms
        )

    def appends(self) -> Appends:
        """A subscriber that hears when the streams of chosen tables grow (:mod:`dizhu.store.notifications`)."""
        return Appends(self._redis, prefix=self._prefix)

    def presence(self) -> PresenceStore:
        """The presence leases of the same tables (same Redis, same prefix)."""
        return PresenceStore(self._redis, prefix=self._prefix, events_maxlen=self.events_maxlen)

    def keys(self, table_id: str) -> TableKeys:
        """The keys of ``table_id`` (raises :class:`ValueError` on a malformed id)."""
        return _known_table_keys(self._prefix, table_id)

    async def load_scripts(self) -> None:
        """Load the scripts into the server now (optional: they load on first use anyway).

        Call it at start-up to check the connection and spare the first requests a
        ``NOSCRIPT`` round trip.
        """
        for script in (self._load, self._create, self._save, *self.indexes.scripts):
            script.sha = await self._redis.script_load(script.script)

    async def load(self, table_id: str, principal: str, request_id: str | None) -> Loaded:
        """Read the table and the answer recorded for ``(principal, request_id)``: one round trip.

        Without a ``request_id`` only the state is read (``answer`` is ``None``).
        """
        keys = self.keys(table_id)
        if request_id is None:
            validate_principal(principal)
            version, data, seq, presence, write = await self._redis.hmget(
                keys.state, ["version", "data", "seq", "presence", "write"]
            )
            answer = None
        else:
            version, data, seq, answer, presence, write = await self._load(
                keys=[keys.state, keys.answers], args=[answer_id(principal, request_id)]
            )
            if answer is not None:
                await self._confirm(keys)  # the answer acknowledges a write: it must be on a replica too
        return Loaded(
            state=reply_bytes(data),
            version=reply_int(version),
            answer=reply_bytes(answer),
            sequence=reply_int(seq),
            presence=reply_int(presence),
            write=reply_int(write),
        )

    async def create(
        self,
        table_id: str,
        state: bytes,
        version: int,
        events: Sequence[bytes],
        principal: str,
        request_id: str | None,
        answer: bytes | None,
        *,
        time_ms: int | None = None,
    ) -> Saved:
        """Create the table, atomically, only if it does not exist yet.

        Writes ``state`` at ``version``, appends ``events`` (sequence numbers 1, 2, ...) and
        records ``answer`` for ``(principal, request_id)``. If the table exists: ``DUPLICATE``
        with the recorded answer when this request id has one, else ``CONFLICT``.

        Creation is deduplicated per table: to make a retried "create" return its first
        answer, derive ``table_id`` from the request (e.g. a hash of principal and request id).
        The answer is kept ``answer_ttl_s`` (see :meth:`save`). ``time_ms`` is the events'
        time (see :meth:`save`).
        """
        if version < 1:
            raise ValueError(f"a table's first version must be positive, not {version}")
        keys = self.keys(table_id)
        args: list[bytes | str | int] = [
            version,
            state,
            self.events_maxlen,
            *self._answer_args(Answer(principal, request_id, answer), self.answer_ttl_s),
            "" if time_ms is None else time_ms,
            *events,
        ]
        return await self._write(self._create, keys, [keys.state, keys.events, keys.answers, keys.answered], args)

    async def _write(
        self, script: AsyncScript, keys: TableKeys, script_keys: list[str], args: list[bytes | str | int]
    ) -> Saved:
        """Run ``CREATE`` or ``SAVE``; with ``replicas``, return only once replicas hold the outcome."""
        if not self.replicas:
            return saved_of(await script(keys=script_keys, args=args))
        reply, acknowledged = await write_and_wait(
            self._redis, script, script_keys, args, replicas=self.replicas, timeout_ms=self.replica_timeout_ms
        )
        saved = saved_of(reply)
        if saved.outcome is SaveOutcome.SAVED and acknowledged < self.replicas:
            raise NotReplicated(f"table written, but {acknowledged} of {self.replicas} replicas confirmed it in time")
        if saved.outcome is SaveOutcome.DUPLICATE:
            await self._confirm(keys)  # the first write of this answer may not have reached a replica
        return saved

    async def _confirm(self, keys: TableKeys) -> None:
        """With ``replicas``, wait until that many replicas hold everything written to the table."""
        if not self.replicas:
            return
        acknowledged = await confirm_replicated(
            self._redis, keys.sync, replicas=self.replicas, timeout_ms=self.replica_timeout_ms
        )
        if acknowledged < self.replicas:
            raise NotReplicated(f"{acknowledged} of {self.replicas} replicas confirmed the table's writes in time")

    def _answer_args(self, answer: Answer, ttl_s: int) -> list[bytes | str | int]:
        """The scripts' answer arguments: id ("" for none), whether to record, answer, TTL (ms), cap."""
        if answer.request_id is None:
            validate_principal(answer.principal)
            return ["", "0", b"", 0, self.answers_per_table]
        recording = "1" if answer.data is not None else "0"
        answer_key = answer_id(answer.principal, answer.request_id)
        return [answer_key, recording, answer.data or b"", ttl_s * 1000, self.answers_per_table]

    async def save(self, change: Change) -> Saved:
        """Replace the state if the stored version is ``change.expected_version``: one ``EVALSHA``.

        In order: if the answer's ``(principal, request_id)`` has an answer → ``DUPLICATE`` with
        it; if the table is missing or its version is not ``expected_version`` → ``CONFLICT``;
        else writes ``state`` at ``new_version``, keeps each ``(name, data)`` of ``records`` in
        the table's records hash (see :meth:`read_record`) and deletes those named in
        ``drop_records``, appends ``events`` after the table's last sequence (the stream
        trimmed to about ``events_maxlen``), records the answer and returns ``SAVED``.

        An answer is kept ``answer_ttl_s`` (no longer than the table, once finished), and a
        table keeps at most its ``answers_per_table`` latest answers. ``finished`` makes every
        key of the table expire after ``finished_ttl_s``; not finished removes any such expiry.

        ``decided_on`` and ``presence``, for a change decided without reading the table first:
        ``CONFLICT`` too unless the stored state is exactly ``decided_on`` and the seats last
        announced connected are ``presence`` (see :class:`dizhu.service.unit_of_work.UnitOfWork`).

        ``time_ms``, the writer's clock, is the events' time, moved up to the table's previous
        event's if that is later (``None``: Redis' clock): see :class:`StoredEvent`.
        """
        if not 0 < change.expected_version < change.new_version:
            raise ValueError(
                f"versions must grow from a positive one, not {change.expected_version} → {change.new_version}"
            )
        keys = self.keys(change.table_id)
        finished = change.finished
        answer_ttl_s = min(self.answer_ttl_s, self.finished_ttl_s) if finished else self.answer_ttl_s
        args: list[bytes | str | int] = [
            change.expected_version,
            change.new_version,
            change.state,
            self.events_maxlen,
            *self._answer_args(change.answer, answer_ttl_s),
            self.finished_ttl_s if finished else 0,
            len(change.records),
            len(change.drop_records),
            b"" if change.decided_on is None else change.decided_on,
            "" if change.presence is None else change.presence,
            "" if change.time_ms is None else change.time_ms,
        ]
        for name, data in change.records:
            args += [name, data]
        args += change.drop_records
        args += change.events
        script_keys = [keys.state, keys.events, keys.records, keys.answers, keys.answered]
        return await self._write(self._save, keys, script_keys, args)

    async def read_record(self, table_id: str, name: str) -> bytes | None:
        """A record kept by :meth:`save` (``None`` if there is none, or it expired)."""
        return reply_bytes(await self._redis.hget(self.keys(table_id).records, name))

    async def read_events(
        self, table_id: str, after_sequence: int, count: int = 1000, block_ms: int | None = None
    ) -> list[tuple[int, bytes]]:
        """Up to ``count`` events with a sequence number above ``after_sequence``, in order.

        With ``block_ms``, waits up to that long for the first such event when there is none
        yet (``XREAD BLOCK``; 0 waits for ever) and returns ``[]`` on timeout. Events older
        than :meth:`oldest_sequence` are gone: a reader that far behind needs a fresh snapshot.
        """
        entries = await self.read_entries(table_id, after_sequence, count, block_ms)
        return [(event.sequence, event.payload) for event in entries]

    async def read_entries(
        self, table_id: str, after_sequence: int, count: int = 1000, block_ms: int | None = None
    ) -> list[StoredEvent]:
        """:meth:`read_events` with each event's time and write id."""
        if after_sequence < 0 or count < 1:
            raise ValueError("after_sequence must be >= 0 and count >= 1")
        events_key = self.keys(table_id).events
        if block_ms is None:
            entries = await self._redis.xrange(events_key, min=f"{after_sequence + 1}-0", count=count)
        else:
            after = f"{after_sequence}-{_MAX_SUB_ID}"
            reply = await run_on_key_node(
                self._redis, events_key, "XREAD", "COUNT", count, "BLOCK", block_ms, "STREAMS", events_key, after
            )
            entries = xread_entries(reply)
        return [stream_event(entry) for entry in entries or ()]

    async def oldest_sequence(self, table_id: str) -> int | None:
        """The sequence number of the oldest event still kept, or ``None`` if none is."""
        entries = await self._redis.xrange(self.keys(table_id).events, count=1)
        return stream_event(entries[0]).sequence if entries else None

    async def last_sequence(self, table_id: str) -> int:
        """The sequence number of the table's last event; 0 before any (or with no table)."""
        return reply_int(await self._redis.hget(self.keys(table_id).state, "seq"))

    async def last_event(self, table_id: str) -> tuple[int, int]:
        """The sequence number and write id of the table's last event; ``(0, 0)`` before any."""
        seq, write = await self._redis.hmget(self.keys(table_id).state, ["seq", "write"])
        return reply_int(seq), reply_int(write)

    async def memory(self) -> MemoryUse:
        """How full Redis is (``INFO memory``); on a cluster, its fullest primary."""
        uses = [
            MemoryUse(used=int(info.get("used_memory", 0)), limit=int(info.get("maxmemory", 0)))
            for info in await info_of_primaries(self._redis, "memory")
        ]
        return max(uses, key=lambda use: use.used / use.limit if use.limit else 0.0)

    async def delete(self, table_id: str) -> None:
        """Delete every key of the table, answers included, and its index entries (tests and admin)."""
        keys = self.keys(table_id)
        await self.indexes.forget(table_id)
        await self._redis.delete(
            keys.state, keys.events, keys.records, keys.answers, keys.answered, keys.presence, keys.sync
        )
