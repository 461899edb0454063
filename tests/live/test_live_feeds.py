"""A process's table feeds over a real Redis: what a subscriber too slow to keep up is told.

The feed is driven by real writes of a real :class:`TableStore` (its scripts publish each
append); the subscriber is the one a ``WatchTable`` stream holds, read here directly so that
it can be left behind on purpose.
"""

from __future__ import annotations

import asyncio

import redis.asyncio
from live_helpers import SOON_S

from dizhu.service.feeds import LAGGING, Entry, Subscription, TableFeeds
from dizhu.store import TableStore

TABLE = "feed-1"


async def _given(subscription: Subscription, count: int) -> list[Entry]:
    """The first ``count`` entries handed to ``subscription`` (fails after SOON_S)."""
    async with asyncio.timeout(SOON_S):
        return [await subscription.queue.get() for _ in range(count)]


class TestALaggingSubscriber:
    async def test_is_told_lagging_once_its_queue_is_full_and_then_given_nothing_more(
        self, redis_client: redis.asyncio.Redis
    ) -> None:
        store = TableStore(redis_client)
        await store.load_scripts()
        feeds = TableFeeds(store, heartbeat_s=3600, queue_limit=3)
        await store.create(TABLE, b"v1", 1, [b"created"], "creator", None, None)
        try:
            async with feeds.subscribe(TABLE) as slow, feeds.subscribe(TABLE) as keeping_up:
                for version in range(1, 6):
                    await store.save(TABLE, version, version + 1, f"v{version + 1}".encode(), [b"e"], "p", None, None)
                    assert [entry.sequence for entry in await _given(keeping_up, 1)] == [version + 1]
                given = await _given(slow, 4)
                assert [entry.sequence for entry in given[:3]] == [2, 3, 4]
                assert given[3] is LAGGING
                await store.save(TABLE, 6, 7, b"v7", [b"e"], "p", None, None)
                assert [entry.sequence for entry in await _given(keeping_up, 1)] == [7]
                assert slow.queue.empty()
        finally:
            await feeds.close()
