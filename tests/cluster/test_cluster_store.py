"""TableStore on a real Redis Cluster: every call it makes, where its keys live, what differs from one server."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
import redis.asyncio
from redis.crc import key_slot

from dizhu.store import Answer, Change, NotReplicated, SaveOutcome, TableStore, answer_id
from dizhu.store.keys import INDEX_SHARDS, index_keys, index_shard
from tests.support.local_cluster import LocalCluster

TABLE = "t-1"
ALICE = "seat-0"


async def _create(store: TableStore, table: str = TABLE, events: int = 1) -> None:
    created = await store.create(table, b"s1", 1, [f"e{i}".encode() for i in range(events)], ALICE, "c-1", b"made")
    assert created.outcome is SaveOutcome.SAVED


def _key_lookups(cluster: LocalCluster) -> int:
    """How often the cluster's nodes were asked where a command's keys are (``COMMAND GETKEYS``, in all)."""
    total = 0
    for node in cluster.nodes:
        for name, stats in node.client().info("commandstats").items():
            # "cmdstat_command" on Redis 6.2, "cmdstat_command|getkeys" on Redis 7.
            if name.startswith("cmdstat_command") and isinstance(stats, dict):
                total += int(stats.get("calls", 0))
    return total


class TestLayout:
    def test_every_key_of_a_table_is_in_one_slot_and_the_index_shards_on_every_primary(
        self, cluster: LocalCluster, store: TableStore
    ) -> None:
        keys = store.keys("some-table")
        slots = {key_slot(key.encode()) for key in (keys.state, keys.events, keys.records, keys.answers, keys.answered)}
        assert len(slots | {key_slot(keys.presence.encode()), key_slot(keys.sync.encode())}) == 1
        shards = [index_keys("dizhu", shard) for shard in range(INDEX_SHARDS)]
        for shard in shards:
            assert key_slot(shard.deadlines.encode()) == key_slot(shard.versions.encode())
        owners = {cluster.node_of(shard.deadlines).port for shard in shards}
        owners_of_presence = {cluster.node_of(shard.presence_due).port for shard in shards}
        assert owners == owners_of_presence == {node.port for node in cluster.primary_nodes()}


class TestEveryCall:
    async def test_a_table_lives_its_whole_life_on_the_cluster(self, store: TableStore) -> None:
        await _create(store, events=2)
        loaded = await store.load(TABLE, ALICE, "c-1")
        assert (loaded.state, loaded.version, loaded.answer, loaded.sequence) == (b"s1", 1, b"made", 2)
        assert (await store.load(TABLE, ALICE, None)).answer is None
        saved = await store.save(
            Change(TABLE, 1, 2, b"s2", [b"e2"], Answer(ALICE, "m-1", b"moved"), records=[("replay:1", b"R")])
        )
        assert (saved.outcome, saved.first_sequence) == (SaveOutcome.SAVED, 3)
        again = await store.save(Change(TABLE, 1, 2, b"other", [], Answer(ALICE, "m-1", b"other")))
        assert (again.outcome, again.answer) == (SaveOutcome.DUPLICATE, b"moved")
        stale = await store.save(Change(TABLE, 1, 2, b"other", [], Answer(ALICE, "m-2", b"other")))
        assert (stale.outcome, stale.version) == (SaveOutcome.CONFLICT, 2)
        assert await store.read_record(TABLE, "replay:1") == b"R"
        assert await store.read_events(TABLE, 1) == [(2, b"e1"), (3, b"e2")]
        assert (await store.oldest_sequence(TABLE), await store.last_sequence(TABLE)) == (1, 3)
        finished = await store.save(Change(TABLE, 2, 3, b"s3", [], Answer(ALICE, "m-3", b"done"), finished=True))
        assert finished.outcome is SaveOutcome.SAVED
        await store.delete(TABLE)
        assert (await store.load(TABLE, ALICE, None)).state is None

    async def test_a_blocking_read_waits_on_the_tables_node_without_asking_another_for_its_keys(
        self, store: TableStore, cluster: LocalCluster
    ) -> None:
        await _create(store)
        await store.read_events(TABLE, 1, block_ms=10)  # the client knows the slots now
        asked = _key_lookups(cluster)
        reader = asyncio.create_task(store.read_events(TABLE, 1, block_ms=5000))
        await asyncio.sleep(0.1)
        assert not reader.done()
        await store.save(Change(TABLE, 1, 2, b"s2", [b"next"], Answer(ALICE)))
        assert await asyncio.wait_for(reader, 5) == [(2, b"next")]
        assert await store.read_events(TABLE, 2, block_ms=10) == []
        assert _key_lookups(cluster) == asked

    async def test_due_tables_gathers_every_shard_earliest_first(self, store: TableStore) -> None:
        tables = [f"table-{n}" for n in range(40)]
        assert len({index_shard(table) for table in tables}) > INDEX_SHARDS // 2
        for n, table in enumerate(tables):
            await store.indexes.index_deadline(table, 1, 1_000 + n)
        assert await store.indexes.due_tables(1_000 + 39) == [(table, 1_000 + n) for n, table in enumerate(tables)]
        assert await store.indexes.due_tables(1_000 + 4, limit=3) == [
            (table, 1_000 + n) for n, table in enumerate(tables[:3])
        ]
        assert await store.indexes.defer_deadline("table-0", 1, 9_000)
        assert ("table-0", 9_000) not in await store.indexes.due_tables(5_000)

    async def test_activity_quota_and_memory(self, store: TableStore, cluster: LocalCluster) -> None:
        await store.indexes.mark_active("a", 10)
        await store.indexes.mark_active("b", 20)
        assert await store.indexes.inactive_tables(15) == [("a", 10)]
        await store.indexes.forget_activity("a")
        assert await store.indexes.inactive_tables(100) == [("b", 20)]
        await _create(store, "t-open")
        await _create(store, "t-done")
        await store.save(Change("t-done", 1, 2, b"s", [], Answer(ALICE), finished=True))
        for table in ("t-open", "t-done", "t-gone"):
            assert await store.indexes.reserve_table("owner", table, 3, 1)
        assert not await store.indexes.reserve_table("owner", "t-4", 3, 1)
        assert await store.indexes.release_finished("owner") == 1  # the pipeline read tables on several nodes
        fullest = cluster.primary_nodes()[1]
        fullest.client().config_set("maxmemory", "500mb")
        try:
            use = await store.memory()
        finally:
            fullest.client().config_set("maxmemory", "0")
        assert use.limit == 500 * 1024 * 1024

    async def test_scripts_load_by_themselves_after_every_primary_forgot_them(
        self, store: TableStore, cluster: LocalCluster
    ) -> None:
        for node in cluster.primary_nodes():
            node.client().script_flush()
        await _create(store)
        assert (await store.load(TABLE, ALICE, "c-1")).answer == b"made"

    async def test_presence_leases_and_their_due_index(self, store: TableStore) -> None:
        await _create(store)
        presence = store.presence()
        now = int(time.time() * 1000)
        events = [b"gone", b"here"]
        taken = await presence.update(
            TABLE, now_ms=now, version=1, occupied=1, leases=[("0:x", now + 5_000)], events=events
        )
        assert taken.mask == 1
        assert await presence.due(now + 5_000) == [(TABLE, now + 5_000)]
        lapsed = await presence.update(
            TABLE, now_ms=now + 6_000, version=1, occupied=1, swept_ms=now + 5_000, events=events
        )
        assert lapsed.mask == 0
        assert await presence.due(now + 10**9) == []
        assert [payload for _, payload in await store.read_events(TABLE, 1)] == [b"here", b"gone"]

    async def test_the_one_key_deadline_index_of_older_versions_is_adopted_into_the_shards(
        self, store: TableStore, redis_client: redis.asyncio.RedisCluster
    ) -> None:
        await redis_client.zadd("dizhu:{clock}:deadlines", {"old": 1_000, "hinted": 2_000})
        await redis_client.hset("dizhu:{clock}:versions", "old", 7)
        assert await store.indexes.adopt_unsharded_indexes() == 2
        assert await store.indexes.due_tables(5_000) == [("old", 1_000), ("hinted", 2_000)]
        assert not await store.indexes.index_deadline("old", 6, 9_000)  # its version came along
        assert await redis_client.exists("dizhu:{clock}:deadlines", "dizhu:{clock}:versions") == 0
        assert await store.indexes.adopt_unsharded_indexes() == 0


class TestReplicaDurability:
    async def test_a_write_returns_once_the_tables_replica_holds_it(
        self, redis_client: redis.asyncio.RedisCluster, cluster: LocalCluster
    ) -> None:
        store = TableStore(redis_client, replicas=1)
        await _create(store)
        saved = await store.save(Change(TABLE, 1, 2, b"s2", [b"e"], Answer(ALICE, "m-1", b"moved")))
        assert saved.outcome is SaveOutcome.SAVED
        replica = cluster.replica_of(cluster.node_of(store.keys(TABLE).state)).client()
        replica.execute_command("READONLY")
        assert replica.hget(store.keys(TABLE).state, "version") == "2"
        answer: Any = replica.hget(store.keys(TABLE).answers, answer_id(ALICE, "m-1"))
        assert answer.endswith(":moved")

    async def test_two_replicas_are_more_than_a_shard_has(self, redis_client: redis.asyncio.RedisCluster) -> None:
        store = TableStore(redis_client, replicas=2, replica_timeout_ms=50)
        with pytest.raises(NotReplicated):
            await _create(store)
        # The write itself stands on the primary: the retry finds it, and still waits for replicas.
        with pytest.raises(NotReplicated):
            await store.load(TABLE, ALICE, "c-1")
        assert (await TableStore(redis_client).load(TABLE, ALICE, "c-1")).answer == b"made"
