"""Appends are announced: every script that grows a table's stream publishes its new last sequence,
and :class:`Appends` reports it, and reports every (re)confirmed subscription so that a listener
reads what it could not hear while its connection was down."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
import redis.asyncio

from dizhu.store import SUBSCRIBED, Answer, Appends, Change, TableStore
from dizhu.store.presence import UNKNOWN

TABLE = "t-notified"


@pytest.fixture
async def store(redis_client: redis.asyncio.Redis) -> TableStore:
    # Channels are shared by every database of a server: a prefix of its own keeps other tests' out.
    table_store = TableStore(redis_client, prefix=f"n{uuid.uuid4().hex[:8]}")
    await table_store.load_scripts()
    return table_store


@pytest.fixture
async def appends(redis_url: str, store: TableStore) -> AsyncIterator[tuple[Appends, AsyncIterator[tuple[str, int]]]]:
    client = redis.asyncio.Redis.from_url(redis_url)
    listener = Appends(client, prefix=store.keys(TABLE).state.split(":{", 1)[0])
    await listener.subscribe(TABLE)
    heard = listener.listen()
    assert await _next(heard) == (TABLE, SUBSCRIBED)
    yield listener, heard
    await listener.close()
    await client.aclose()


async def _next(heard: AsyncIterator[tuple[str, int]]) -> tuple[str, int]:
    return await asyncio.wait_for(anext(heard), 10)


async def _create_and_save(store: TableStore) -> None:
    await store.create(TABLE, b"state-1", 1, [b"created-0", b"created-1"], "alice", None, None)
    await store.save(Change(TABLE, 1, 2, b"state-2", [b"moved"], Answer("alice")))


class TestAnnouncements:
    async def test_create_and_save_announce_the_new_last_sequence(self, store: TableStore, appends: tuple) -> None:
        _, heard = appends
        await _create_and_save(store)
        assert [await _next(heard), await _next(heard)] == [(TABLE, 2), (TABLE, 3)]

    async def test_a_presence_change_is_announced_like_a_move(self, store: TableStore, appends: tuple) -> None:
        _, heard = appends
        await store.create(TABLE, b"state-1", 1, [b"created-0"], "alice", None, None)
        assert await _next(heard) == (TABLE, 1)
        presence = store.presence()
        events = [b"away-0", b"here-0", b"away-1", b"here-1", b"away-2", b"here-2"]
        await presence.update(TABLE, now_ms=1, version=1, occupied=0b111, leases=[("0:act", 10**15)], events=events)
        assert await _next(heard) == (TABLE, 2)
        assert await store.read_events(TABLE, 1) == [(2, b"here-0")]

    async def test_a_save_that_appends_nothing_announces_nothing(self, store: TableStore, appends: tuple) -> None:
        _, heard = appends
        await store.create(TABLE, b"state-1", 1, [b"created-0"], "alice", None, None)
        assert await _next(heard) == (TABLE, 1)
        await store.save(Change(TABLE, 1, 2, b"state-2", [], Answer("alice")))
        await store.save(Change(TABLE, 2, 3, b"state-3", [b"moved"], Answer("alice")))
        assert await _next(heard) == (TABLE, 2)

    async def test_a_table_no_longer_followed_is_not_reported(self, store: TableStore, appends: tuple) -> None:
        listener, heard = appends
        await listener.unsubscribe(TABLE)
        await store.create(TABLE, b"state-1", 1, [b"created-0"], "alice", None, None)
        presence = store.presence()
        await presence.update(TABLE, now_ms=1, version=UNKNOWN, occupied=UNKNOWN)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(anext(heard), 0.5)


class TestReconnection:
    async def test_a_lost_connection_is_reported_as_a_new_confirmation_after_reconnecting(
        self, redis_client: redis.asyncio.Redis, store: TableStore, appends: tuple
    ) -> None:
        _, heard = appends
        await redis_client.client_kill_filter(_type="pubsub")
        # Appended while nobody listened: the announcement is lost, the confirmation says to read.
        await _create_and_save(store)
        assert await _next(heard) == (TABLE, SUBSCRIBED)
        assert [sequence for sequence, _ in await store.read_events(TABLE, 0)] == [1, 2, 3]
