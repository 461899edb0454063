"""The store's indexes of tables, kept apart from the tables' own keys: where to look, never the truth.

- the turn clock's deadlines (in :data:`~dizhu.store.keys.INDEX_SHARDS` shards, each under a
  hash tag of its own), with the table version each deadline belongs to;
- when each table last saw a client act (to close abandoned tables, and to list open ones);
- each creator's open tables (a quota).

A table's state holds the real deadline and activity: whoever acts on an index entry reads
the table and changes it with the same compare-and-set as a move (:class:`TableStore`).
"""

from __future__ import annotations

from typing import Any

from redis.commands.core import AsyncScript

from dizhu.store import scripts
from dizhu.store.connection import StoreClient, write_and_wait
from dizhu.store.keys import (
    INDEX_SHARDS,
    IndexKeys,
    index_keys,
    index_shard,
    table_keys,
    validate_principal,
    validate_table_id,
)
from dizhu.store.replies import reply_int, reply_text

__all__ = ["TableIndexes"]


class TableIndexes:
    """The deadline, activity and quota indexes of the tables under ``prefix``.

    ``replicas`` and ``replica_timeout_ms``: as the :class:`TableStore` they belong to (a
    deadline entry is waited for like a move, but a replica's silence fails nothing).
    """

    def __init__(self, redis: StoreClient, *, prefix: str, replicas: int, replica_timeout_ms: int) -> None:
        self._redis = redis
        self._prefix = prefix
        self._shards = [index_keys(prefix, shard) for shard in range(INDEX_SHARDS)]
        self._activity_key = f"{prefix}:{{idle}}:active"
        self._replicas = replicas
        self._replica_timeout_ms = replica_timeout_ms
        self._deadline = redis.register_script(scripts.DEADLINE)
        self._defer = redis.register_script(scripts.DEFER)
        self._reserve = redis.register_script(scripts.RESERVE)

    @property
    def scripts(self) -> tuple[AsyncScript, ...]:
        """The Lua scripts of the indexes (:meth:`TableStore.load_scripts` loads them)."""
        return (self._deadline, self._defer, self._reserve)

    def _shard(self, table_id: str) -> IndexKeys:
        """The index shard holding ``table_id``'s entries."""
        return self._shards[index_shard(table_id)]

    async def adopt_unsharded_indexes(self) -> int:
        """Move the entries of the one-key deadline index that older versions kept into the shards.

        Safe while other processes run (each entry goes through the version-ordered
        ``DEADLINE`` script); idempotent; how many entries moved. Call it at start-up.
        """
        old_deadlines, old_versions = f"{self._prefix}:{{clock}}:deadlines", f"{self._prefix}:{{clock}}:versions"
        entries: list[Any] = await self._redis.zrange(old_deadlines, 0, -1, withscores=True)
        for member, score in entries:
            table_id = reply_text(member)
            version = reply_int(await self._redis.hget(old_versions, table_id))
            await self._deadline(
                keys=self._deadline_keys(table_id), args=[table_id, version, int(score), "0", "0" if version else "1"]
            )
            await self._redis.zrem(old_deadlines, table_id)
            await self._redis.hdel(old_versions, table_id)
        return len(entries)

    async def index_deadline(
        self, table_id: str, version: int, deadline_ms: int | None, *, final: bool = False, early: bool = False
    ) -> bool:
        """Index the turn deadline of ``table_id`` at ``version`` (None: it has none) for :meth:`due_tables`.

        The index is a sorted set in each of its shards (``<prefix>:{clock:<n>}:deadlines``,
        with the indexed versions beside it; the table's shard is
        :func:`~dizhu.store.keys.index_shard`), written apart from the table's own keys: it
        says where to look, the table's state holds the real deadline, and whoever acts on a
        due table checks it with the same compare-and-set as a move. An older version never
        overwrites a newer one. ``final`` forgets the table (closed or gone). ``early`` is a
        hint written before the state: it may only make the indexed deadline earlier. With
        ``replicas``, an entry (not a hint) is waited for like a move, up to the timeout, but
        a replica's silence fails nothing: the move it follows is acknowledged already. True
        if the index changed.
        """
        script_keys = self._deadline_keys(table_id)
        args: list[bytes | str | int] = [
            table_id,
            version,
            deadline_ms or 0,
            "1" if final else "0",
            "1" if early else "0",
        ]
        if self._replicas and not early:
            changed, _ = await write_and_wait(
                self._redis,
                self._deadline,
                script_keys,
                args,
                replicas=self._replicas,
                timeout_ms=self._replica_timeout_ms,
            )
        else:
            changed = await self._deadline(keys=script_keys, args=args)
        return bool(changed)

    def _deadline_keys(self, table_id: str) -> list[str]:
        shard = self._shard(table_id)
        return [shard.deadlines, shard.versions]

    async def defer_deadline(self, table_id: str, version: int, until_ms: int) -> bool:
        """Make the clock look at ``table_id`` again at ``until_ms`` (it failed on ``version``).

        Only an indexed deadline of that version or an older one moves; True if it did.
        """
        moved = await self._defer(keys=self._deadline_keys(table_id), args=[table_id, version, until_ms])
        return bool(moved)

    async def due_tables(self, now_ms: int, limit: int = 100) -> list[tuple[str, int]]:
        """Tables whose indexed deadline is at or before ``now_ms``: ``(table_id, deadline_ms)``, earliest first.

        Reads every shard in one pipeline (on a cluster, one round trip per node, in parallel):
        at most ``limit`` entries, the earliest of each shard's earliest ``limit``.
        """
        async with self._redis.pipeline(transaction=False) as pipe:
            for shard in self._shards:
                pipe.zrangebyscore(shard.deadlines, 0, now_ms, start=0, num=limit, withscores=True)
            shards: list[list[Any]] = await pipe.execute()
        entries = sorted((int(score), reply_text(member)) for entries in shards for member, score in entries)
        return [(table_id, deadline_ms) for deadline_ms, table_id in entries[:limit]]

    async def mark_active(self, table_id: str, active_ms: int) -> None:
        """Index when a client last acted at ``table_id`` (see :meth:`inactive_tables`)."""
        await self._redis.zadd(self._activity_key, {validate_table_id(table_id): active_ms})

    async def inactive_tables(self, before_ms: int, limit: int = 100) -> list[tuple[str, int]]:
        """Tables whose indexed activity is before ``before_ms``: ``(table_id, active_ms)``, oldest first."""
        entries: list[Any] = await self._redis.zrangebyscore(
            self._activity_key, 0, f"({before_ms}", start=0, num=limit, withscores=True
        )
        return [(reply_text(member), int(score)) for member, score in entries]

    async def active_tables(self, start: int, count: int) -> list[str]:
        """``count`` tables of the activity index from position ``start``, the most recently active first."""
        members: list[Any] = await self._redis.zrevrange(self._activity_key, start, start + count - 1)
        return [reply_text(member) for member in members]

    async def forget_activity(self, table_id: str) -> None:
        """Drop ``table_id`` from the activity index (it is closed, or gone)."""
        await self._redis.zrem(self._activity_key, validate_table_id(table_id))

    def _quota_key(self, owner: str) -> str:
        return f"{self._prefix}:{{quota}}:open:{validate_principal(owner)}"

    async def reserve_table(self, owner: str, table_id: str, limit: int, now_ms: int) -> bool:
        """Count ``table_id`` as one of ``owner``'s open tables, unless it has ``limit`` already.

        True if it is counted (also when it already was: a retried create).
        """
        counted = await self._reserve(keys=[self._quota_key(owner)], args=[validate_table_id(table_id), limit, now_ms])
        return bool(counted)

    async def release_table(self, owner: str, table_id: str) -> None:
        """``table_id`` no longer counts as one of ``owner``'s open tables."""
        await self._redis.zrem(self._quota_key(owner), validate_table_id(table_id))

    async def release_finished(self, owner: str) -> int:
        """Stop counting ``owner``'s tables that are finished or gone; how many still count.

        For a reservation whose release was lost (a process died between closing a table and
        releasing it): one pipelined read of every counted table.
        """
        key = self._quota_key(owner)
        members = [reply_text(member) for member in await self._redis.zrange(key, 0, -1)]
        async with self._redis.pipeline(transaction=False) as pipe:
            for table_id in members:
                pipe.hmget(table_keys(self._prefix, table_id).state, ["version", "fin"])
            states = await pipe.execute()
        gone = [table_id for table_id, (version, fin) in zip(members, states, strict=True) if version is None or fin]
        if gone:
            await self._redis.zrem(key, *gone)
        return len(members) - len(gone)

    async def forget(self, table_id: str) -> None:
        """Drop every index entry of ``table_id``: its deadline, presence due time and activity."""
        shard = self._shard(table_id)
        await self._redis.zrem(shard.deadlines, table_id)
        await self._redis.hdel(shard.versions, table_id)
        await self._redis.zrem(shard.presence_due, table_id)
        await self._redis.zrem(self._activity_key, table_id)
