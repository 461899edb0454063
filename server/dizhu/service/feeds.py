"""Table event feeds: one Redis reader per watched table per process, fanned out to streams.

Every open ``WatchTable`` stream of a table in this process shares one reader that blocks
on the table's Redis stream (``XREAD BLOCK``) and hands each new event to every
subscriber's queue. A subscriber reads what it missed straight from the store, then its
queue, skipping what it already has, so nothing is lost or repeated. A subscriber too slow
to keep up is told so (``LAGGING``) and starts again from a fresh snapshot.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import structlog

from dizhu.store import TableStore

__all__ = ["LAGGING", "Entry", "TableFeeds"]

_log = structlog.get_logger("dizhu.feeds")
#: ``(sequence, stored event)``; ``LAGGING`` when the subscriber fell too far behind.
Entry = tuple[int, bytes]
LAGGING: Entry = (-1, b"")


class _Feed:
    def __init__(self, store: TableStore, table_id: str, cursor: int, block_ms: int, queue_limit: int) -> None:
        self.subscribers: set[asyncio.Queue[Entry]] = set()
        #: The last sequence read: set before the first subscriber joins, so none can miss an event.
        self.cursor = cursor
        self._store = store
        self._table_id = table_id
        self._block_ms = block_ms
        self._queue_limit = queue_limit
        self.task: asyncio.Task[None] | None = None
        #: Set to stop the reader. Cancelling alone is not enough: redis-py's asyncio client can
        #: swallow a cancellation that lands in the middle of a command, and the reader would run on.
        self.stopping = False

    def stop(self) -> None:
        self.stopping = True
        if self.task is not None:
            self.task.cancel()

    async def run(self) -> None:
        cursor = self.cursor
        while not self.stopping:
            try:
                entries = await self._store.read_events(self._table_id, cursor, count=500, block_ms=self._block_ms)
            except asyncio.CancelledError:
                raise
            except Exception:
                _log.warning("feed_read_failed", table_id=self._table_id, exc_info=True)
                await asyncio.sleep(0.5)
                continue
            for entry in entries:
                cursor = entry[0]
                for queue in list(self.subscribers):
                    if queue.qsize() >= self._queue_limit:
                        self.subscribers.discard(queue)
                        queue.put_nowait(LAGGING)
                    else:
                        queue.put_nowait(entry)


class TableFeeds:
    """The feeds of one referee process.

    An idle feed costs one blocking read per ``block_ms`` (5 s: well below the 10 s socket
    timeout of the streams' Redis connections). With 1 s, 1,000 idle streams on 1,000 tables
    took about 12 % of a core here; with 5 s about 5 %.
    """

    def __init__(self, store: TableStore, *, block_ms: int = 5000, queue_limit: int = 1000) -> None:
        self._store = store
        self._block_ms = block_ms
        self._queue_limit = queue_limit
        self._feeds: dict[str, _Feed] = {}

    @property
    def watched_tables(self) -> int:
        return len(self._feeds)

    @contextlib.asynccontextmanager
    async def subscribe(self, table_id: str) -> AsyncIterator[asyncio.Queue[Entry]]:
        """A queue of the table's events from now on, for as long as the context lasts."""
        feed = self._feeds.get(table_id)
        if feed is None:
            cursor = await self._store.last_sequence(table_id)
            feed = self._feeds.get(table_id)  # another stream may have started it meanwhile
            if feed is None:
                feed = self._feeds[table_id] = _Feed(self._store, table_id, cursor, self._block_ms, self._queue_limit)
                feed.task = asyncio.create_task(feed.run(), name=f"feed-{table_id}")
        # The limit is enforced by the feed (it marks the queue LAGGING), so the queue is unbounded.
        queue: asyncio.Queue[Entry] = asyncio.Queue()
        feed.subscribers.add(queue)
        try:
            yield queue
        finally:
            feed.subscribers.discard(queue)
            if not feed.subscribers and self._feeds.get(table_id) is feed:
                del self._feeds[table_id]
                feed.stop()

    async def close(self) -> None:
        """Stop every reader (at shutdown, once the streams are gone)."""
        tasks = [feed.task for feed in self._feeds.values() if feed.task is not None]
        for feed in self._feeds.values():
            feed.stop()
        self._feeds.clear()
        await asyncio.gather(*tasks, return_exceptions=True)
