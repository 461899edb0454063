"""The scanned indexes -- the clock's deadlines, presence's due leases -- in shards of their own."""

from __future__ import annotations

import time

import pytest
import redis.asyncio

from dizhu.store import Answer, Change, NotReplicated, SaveOutcome, TableStore
from dizhu.store.keys import INDEX_SHARDS, index_keys, index_shard

TABLE = "t-1"


class TestShards:
    def test_a_table_has_one_shard_and_tables_spread_over_all(self) -> None:
        assert index_shard("a") == index_shard("a")
        assert {index_shard(f"table-{n}") for n in range(400)} == set(range(INDEX_SHARDS))

    def test_each_shard_has_its_own_hash_tags(self) -> None:
        keys = index_keys("p", 3)
        assert (keys.deadlines, keys.versions, keys.presence_due) == (
            "p:{clock:3}:deadlines",
            "p:{clock:3}:versions",
            "p:{presence:3}:due",
        )
        with pytest.raises(ValueError, match="no index shard"):
            index_keys("p", INDEX_SHARDS)

    async def test_due_tables_merges_the_shards_earliest_first_up_to_the_limit(self, store: TableStore) -> None:
        tables = [f"table-{n}" for n in range(30)]
        for n, table in reversed(list(enumerate(tables))):
            await store.indexes.index_deadline(table, 1, 1_000 + n)
        assert await store.indexes.due_tables(2_000) == [(table, 1_000 + n) for n, table in enumerate(tables)]
        assert [table for table, _ in await store.indexes.due_tables(2_000, limit=4)] == tables[:4]

    async def test_an_entry_is_written_in_its_tables_shard_only(
        self, store: TableStore, redis_client: redis.asyncio.Redis
    ) -> None:
        await store.indexes.index_deadline(TABLE, 2, 5_000)
        shard = index_keys("dizhu", index_shard(TABLE))
        assert await redis_client.zscore(shard.deadlines, TABLE) == 5_000
        assert await redis_client.hget(shard.versions, TABLE) == b"2"
        others = [index_keys("dizhu", n).deadlines for n in range(INDEX_SHARDS) if n != index_shard(TABLE)]
        assert await redis_client.exists(*others) == 0
        await store.delete(TABLE)
        assert await redis_client.exists(shard.deadlines, shard.versions) == 0


class TestUnshardedIndex:
    async def test_entries_of_the_one_key_index_move_into_the_shards_keeping_their_versions(
        self, store: TableStore, redis_client: redis.asyncio.Redis
    ) -> None:
        await redis_client.zadd("dizhu:{clock}:deadlines", {"old": 1_000, "hinted": 2_000})
        await redis_client.hset("dizhu:{clock}:versions", "old", 7)
        await store.indexes.index_deadline("hinted", 3, 2_500)  # written meanwhile by an upgraded process
        assert await store.indexes.adopt_unsharded_indexes() == 2
        assert await store.indexes.due_tables(5_000) == [("old", 1_000), ("hinted", 2_000)]
        assert not await store.indexes.index_deadline("old", 6, 9_000)
        assert await redis_client.exists("dizhu:{clock}:deadlines", "dizhu:{clock}:versions") == 0
        assert await store.indexes.adopt_unsharded_indexes() == 0


class TestPresenceDue:
    """The presence due index: never later than a table's earliest lease (docs/store.md).

    Times are offsets from now: the leases' key expires by Redis' clock after its last lease.
    """

    EVENTS = (b"0-gone", b"0-here")

    @pytest.fixture
    def t0(self) -> int:
        return int(time.time() * 1000)

    async def _table(self, store: TableStore) -> None:
        saved = await store.create(TABLE, b"s", 1, [], "p", None, None)
        assert saved.outcome is SaveOutcome.SAVED

    async def _update(self, store: TableStore, now_ms: int, **changes: object) -> None:
        await store.presence().update(
            TABLE,
            now_ms=now_ms,
            version=1,
            occupied=1,
            events=self.EVENTS,
            **changes,  # type: ignore[arg-type]
        )

    async def test_a_new_lease_indexes_its_table_at_the_earliest_expiry(self, store: TableStore, t0: int) -> None:
        await self._table(store)
        await self._update(store, t0, leases=[("0:a", t0 + 9_000)])
        await self._update(store, t0, leases=[("0:b", t0 + 4_000)])
        assert await store.presence().due(t0 + 10_000) == [(TABLE, t0 + 4_000)]

    async def test_a_renewal_writes_nothing_and_the_sweep_moves_the_entry_to_the_earliest_lease(
        self, store: TableStore, t0: int
    ) -> None:
        await self._table(store)
        await self._update(store, t0, leases=[("0:a", t0 + 4_000)])
        await self._update(store, t0 + 1_000, leases=[("0:a", t0 + 8_000)], extending=True)
        assert await store.presence().due(t0 + 10_000) == [(TABLE, t0 + 4_000)]  # early: looked at once more
        await self._update(store, t0 + 4_000, swept_ms=t0 + 4_000)
        assert await store.presence().due(t0 + 10_000) == [(TABLE, t0 + 8_000)]
        await self._update(store, t0 + 8_000, swept_ms=t0 + 8_000)  # the lease lapsed: nothing left to watch
        assert await store.presence().due(t0 + 10**9) == []

    async def test_a_sweep_that_raced_with_a_new_lease_leaves_its_earlier_entry(
        self, store: TableStore, t0: int
    ) -> None:
        await self._table(store)
        await self._update(store, t0, leases=[("0:a", t0 + 4_000)])
        await self._update(store, t0, leases=[("0:b", t0 + 3_000)])  # lowered after the sweeper read 4000
        await self._update(store, t0 + 4_000, swept_ms=t0 + 4_000)
        assert await store.presence().due(t0 + 10**9) == [(TABLE, t0 + 3_000)]


class TestReplicaDurability:
    async def test_a_write_no_replica_confirms_is_not_acknowledged_and_its_retry_waits_again(
        self, redis_client: redis.asyncio.Redis
    ) -> None:
        store = TableStore(redis_client, replicas=1, replica_timeout_ms=20)  # a server without replicas
        with pytest.raises(NotReplicated):
            await store.create(TABLE, b"s", 1, [b"e"], "p", "r-1", b"made")
        with pytest.raises(NotReplicated):
            await store.create(TABLE, b"s", 1, [b"e"], "p", "r-1", b"made")  # a DUPLICATE: still unconfirmed
        with pytest.raises(NotReplicated):
            await store.load(TABLE, "p", "r-1")
        loaded = await TableStore(redis_client).load(TABLE, "p", "r-1")
        assert (loaded.version, loaded.answer) == (1, b"made")  # written on the primary all along

    async def test_a_conflict_and_a_plain_read_wait_for_nothing(self, redis_client: redis.asyncio.Redis) -> None:
        await TableStore(redis_client).create(TABLE, b"s", 1, [], "p", None, None)
        store = TableStore(redis_client, replicas=1, replica_timeout_ms=20)
        assert (
            await store.save(Change(TABLE, 5, 6, b"s", [], Answer("p", "r-2", b"x")))
        ).outcome is SaveOutcome.CONFLICT
        assert (await store.load(TABLE, "p", None)).version == 1
        assert (await store.load(TABLE, "p", "never-answered")).answer is None
