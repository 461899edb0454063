"""A process's table feeds over a real Redis: what a subscriber too slow to keep up is told.

The feed is driven by real writes of a real :class:`TableStore` (its scripts publish each
append); the subscriber is the one a ``WatchTable`` stream holds, read here directly so that
it can be left behind on purpose.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import redis.asyncio
import structlog

from dizhu.service.feeds import HEARTBEAT, LAGGING, REWRITTEN, Entry, Subscription, TableFeeds
from dizhu.store import SUBSCRIBED, Answer, Appends, Change, TableStore
from tests.support.live import SOON_S

TABLE = "feed-1"


async def _given(subscription: Subscription, count: int) -> list[Entry]:
    """The first ``count`` entries handed to ``subscription`` (fails after SOON_S)."""
    async with asyncio.timeout(SOON_S):
        return [await subscription.queue.get() for _ in range(count)]


@pytest.fixture
async def store(redis_client: redis.asyncio.Redis) -> TableStore:
    """A real store holding TABLE, at version 1 with one event."""
    store = TableStore(redis_client)
    await store.load_scripts()
    await store.create(TABLE, b"v1", 1, [b"created"], "creator", None, None)
    return store


class TestALaggingSubscriber:
    async def test_is_told_lagging_once_its_queue_is_full_and_then_given_nothing_more(self, store: TableStore) -> None:
        feeds = TableFeeds(store, heartbeat_s=3600, queue_limit=3)
        try:
            async with feeds.subscribe(TABLE) as slow, feeds.subscribe(TABLE) as keeping_up:
                for version in range(1, 6):
                    await store.save(
                        Change(TABLE, version, version + 1, f"v{version + 1}".encode(), [b"e"], Answer("p"))
                    )
                    assert [entry.sequence for entry in await _given(keeping_up, 1)] == [version + 1]
                given = await _given(slow, 4)
                assert [entry.sequence for entry in given[:3]] == [2, 3, 4]
                assert given[3] is LAGGING
                await store.save(Change(TABLE, 6, 7, b"v7", [b"e"], Answer("p")))
                assert [entry.sequence for entry in await _given(keeping_up, 1)] == [7]
                assert slow.queue.empty()
        finally:
            await feeds.close()


class TestHeartbeats:
    async def test_go_to_a_silent_subscriber_only_never_piling_up_behind_one_that_does_not_read(
        self, store: TableStore
    ) -> None:
        feeds = TableFeeds(store, heartbeat_s=0.05)
        try:
            async with feeds.subscribe(TABLE) as reading, feeds.subscribe(TABLE) as stuck:
                await store.save(Change(TABLE, 1, 2, b"v2", [b"e"], Answer("p")))
                while (await _given(reading, 1))[0] is HEARTBEAT:  # beats before the event
                    pass
                # Both were given the event at once, so both fell silent at once: every beat the
                # reading one gets after it, the stuck one was due for too.
                assert await _given(reading, 3) == [HEARTBEAT] * 3
                waiting = [stuck.queue.get_nowait() for _ in range(stuck.queue.qsize())]
                assert waiting[-1].sequence == 2, "a stream with an event waiting is not silent: no heartbeat queued"
        finally:
            await feeds.close()


class TestARewrittenHistory:
    async def test_is_told_logged_once_and_the_feed_follows_the_new_history_from_its_end(
        self, store: TableStore, redis_client: redis.asyncio.Redis
    ) -> None:
        feeds = TableFeeds(store, heartbeat_s=3600)
        await store.save(Change(TABLE, 1, 2, b"v2", [b"e"], Answer("p")))
        try:
            async with feeds.subscribe(TABLE) as following:
                # The table's history replaced by another of the same length, as a store restored
                # behind its last writes gives their sequence numbers to other writes.
                keys = store.keys(TABLE)
                await redis_client.delete(keys.state, keys.events)
                await store.create(TABLE, b"v1", 1, [b"other"], "creator", None, None)
                await store.save(Change(TABLE, 1, 2, b"v2", [b"other"], Answer("p")))
                with structlog.testing.capture_logs() as logs:
                    await store.save(Change(TABLE, 2, 3, b"v3", [b"other"], Answer("p")))
                    assert await _given(following, 1) == [REWRITTEN]
                    async with feeds.subscribe(TABLE) as newcomer:
                        await store.save(Change(TABLE, 3, 4, b"v4", [b"other"], Answer("p")))
                        (given,) = await _given(newcomer, 1)
                        assert (given.sequence, given.write) == await store.last_event(TABLE)
                        assert given.sequence == 4
                rewritten = [entry for entry in logs if entry["event"] == "table_history_rewritten"]
                assert rewritten == [
                    {
                        "event": "table_history_rewritten",
                        "log_level": "warning",
                        "table_id": TABLE,
                        "sequence": 2,
                        "subscribers": 1,
                    }
                ]
                assert following.queue.empty()
                assert newcomer.queue.empty()
        finally:
            await feeds.close()


class _ListenerLosingACancellation(Appends):
    """Confirms the subscription, then waits on Redis and drops the first cancellation that lands
    meanwhile, as a redis-py read can drop one that arrives with its reply."""

    def __init__(self, client: redis.asyncio.Redis) -> None:
        super().__init__(client)
        self.waiting = asyncio.Event()
        self.dropped = False

    async def listen(self) -> AsyncIterator[tuple[str, int]]:
        yield TABLE, SUBSCRIBED
        self.waiting.set()
        while True:
            try:
                await asyncio.sleep(0.05)  # a read of Redis under way
            except asyncio.CancelledError:
                if self.dropped:
                    raise
                self.dropped = True


class _StoreWithThatListener(TableStore):
    def __init__(self, client: redis.asyncio.Redis) -> None:
        super().__init__(client)
        self.listener = _ListenerLosingACancellation(client)

    def appends(self) -> Appends:
        return self.listener


class TestClosing:
    async def test_ends_even_when_its_listener_lost_a_cancellation(self, redis_client: redis.asyncio.Redis) -> None:
        store = _StoreWithThatListener(redis_client)
        await store.load_scripts()
        await store.create(TABLE, b"v1", 1, [b"created"], "creator", None, None)
        feeds = TableFeeds(store, heartbeat_s=3600)
        async with feeds.subscribe(TABLE):
            await asyncio.wait_for(store.listener.waiting.wait(), SOON_S)
        try:
            await asyncio.wait_for(feeds.close(), SOON_S)
            assert store.listener.dropped
        finally:  # a listener that lived on would keep the event loop from closing
            store.listener.dropped = True
            for task in asyncio.all_tasks():
                if task.get_name() == "feeds-listener":
                    task.cancel()
