"""Table event feeds: what one process hears of the tables it streams, fanned out to streams.

A process follows every watched table on one Redis connection (:class:`~dizhu.store.Appends`:
the scripts that append to a table's stream publish its new last sequence). When a table's
stream grew, its feed reads the new events once, without blocking, and hands each to every
subscriber's queue; an idle table costs neither a connection nor a command. A subscriber
reads what it missed straight from the store, then its queue, skipping what it already has,
so nothing is lost or repeated. A subscriber too slow to keep up -- handed an event while
``queue_limit`` others wait for it (``dizhu serve --stream-backlog``) -- is told so
(``LAGGING``), given nothing more, and starts again from a fresh snapshot.

A feed also checks that the table's history is still the one it handed out: each read starts
at the last event handed out, which must still be there with the same write id
(:class:`~dizhu.store.StoredEvent`). If it is gone or another write's -- the store was
restored behind its last writes (a machine crash with ``appendfsync everysec``), or the
table deleted and created again -- later events would reuse sequence numbers the subscribers
already hold for other events: every subscriber is told ``REWRITTEN`` instead and starts
again from a fresh snapshot, and the feed follows the new history from its last event.

A subscription confirmed by Redis (the first time, or again after a reconnection) makes the
feed read the stream from where it is, so that nothing published while the connection was
down is missed. Heartbeats come from one timer per process: every quarter of
``heartbeat_s`` it hands ``HEARTBEAT`` to the subscriptions that were given nothing for
``heartbeat_s`` and have nothing waiting (a timer per stream cost more than the idle streams'
events themselves).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import structlog

from dizhu.config import ServerConfig
from dizhu.service.loop_failures import LoopFailures
from dizhu.store import SUBSCRIBED, StoredEvent, TableStore

__all__ = ["HEARTBEAT", "LAGGING", "REWRITTEN", "Entry", "Subscription", "TableFeeds"]

#: The declared settings, for the defaults of a piece made without a configuration.
_DEFAULTS = ServerConfig()

_log = structlog.get_logger("dizhu.feeds")
#: A stored event; ``LAGGING`` when the subscriber fell too far behind; ``HEARTBEAT`` when it
#: was given nothing for ``heartbeat_s``; ``REWRITTEN`` when the table's history is no longer
#: the one handed out.
Entry = StoredEvent
LAGGING: Entry = StoredEvent(-1, b"", 0, 0)
HEARTBEAT: Entry = StoredEvent(-2, b"", 0, 0)
REWRITTEN: Entry = StoredEvent(-3, b"", 0, 0)
_READ_COUNT = 500
#: Seconds between attempts to listen again after the notification connection failed.
_RETRY_S = 0.5


class Subscription:
    """One stream's place in a feed: its queue, and when it was last given something."""

    __slots__ = ("given", "queue")

    def __init__(self) -> None:
        # The limit is enforced by the feed (it marks the queue LAGGING), so the queue is unbounded.
        self.queue: asyncio.Queue[Entry] = asyncio.Queue()
        self.given = time.monotonic()

    def give(self, entry: Entry) -> None:
        self.queue.put_nowait(entry)
        self.given = time.monotonic()


class _Feed:
    """One watched table in this process."""

    def __init__(self, table_id: str, queue_limit: int) -> None:
        self.table_id = table_id
        self.subscribers: set[Subscription] = set()
        #: Set once the subscription is confirmed and the stream's last sequence read.
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        #: The last sequence handed out (None until ready), and its write id.
        self.cursor: int | None = None
        self.cursor_write = 0
        #: The highest sequence heard of; -1: read until the stream has nothing more.
        self.wanted = 0
        self.reading: asyncio.Task[None] | None = None
        self._queue_limit = queue_limit

    def hand_out(self, entry: Entry) -> None:
        for subscription in list(self.subscribers):
            if entry is REWRITTEN:
                self.subscribers.discard(subscription)
                subscription.give(REWRITTEN)
            elif subscription.queue.qsize() >= self._queue_limit:
                self.subscribers.discard(subscription)
                subscription.give(LAGGING)
            else:
                subscription.give(entry)


class TableFeeds:
    """The feeds of one referee process (see the module docstring)."""

    def __init__(
        self,
        store: TableStore,
        *,
        heartbeat_s: float = _DEFAULTS.heartbeat_s,
        queue_limit: int = _DEFAULTS.stream_backlog,
    ) -> None:
        self._store = store
        self._heartbeat_s = heartbeat_s
        self._queue_limit = queue_limit
        self._feeds: dict[str, _Feed] = {}
        self._appends = store.appends()
        self._listener: asyncio.Task[None] | None = None
        self._beats: asyncio.Task[None] | None = None
        self._listening = LoopFailures("feed_notifications")
        self._reading = LoopFailures("feed_read")  # the feeds' reads: an outage fails them all alike

    @property
    def watched_tables(self) -> int:
        return len(self._feeds)

    @contextlib.asynccontextmanager
    async def subscribe(self, table_id: str) -> AsyncIterator[Subscription]:
        """The table's events from now on (and heartbeats), for as long as the context lasts."""
        feed = self._feeds.get(table_id)
        subscription = Subscription()
        created = feed is None
        if feed is None:
            feed = self._feeds[table_id] = _Feed(table_id, self._queue_limit)
            self._start()
        feed.subscribers.add(subscription)
        try:
            if created:
                await self._subscribe(feed)
            await asyncio.shield(feed.ready)
            yield subscription
        finally:
            feed.subscribers.discard(subscription)
            if not feed.subscribers and self._feeds.get(table_id) is feed:
                del self._feeds[table_id]
                if feed.reading is not None:
                    feed.reading.cancel()
                with contextlib.suppress(Exception):  # a failed connection forgets its subscriptions anyway
                    await self._appends.unsubscribe(table_id)

    async def _subscribe(self, feed: _Feed) -> None:
        try:
            await self._appends.subscribe(feed.table_id)
        except BaseException as error:
            # Every stream waiting for this feed fails alike; the next one starts afresh.
            if self._feeds.get(feed.table_id) is feed:
                del self._feeds[feed.table_id]
            if not feed.ready.done():
                feed.ready.set_exception(error if isinstance(error, Exception) else asyncio.CancelledError())
                feed.ready.exception()  # retrieved: the streams waiting for it raise it themselves
            raise

    def _start(self) -> None:
        if self._listener is None:
            self._listener = asyncio.create_task(self._listen(), name="feeds-listener")
            self._beats = asyncio.create_task(self._heartbeats(), name="feeds-heartbeats")

    async def _listen(self) -> None:
        while True:
            try:
                async for table_id, sequence in self._appends.listen():
                    self._listening.succeeded()
                    feed = self._feeds.get(table_id)
                    if feed is not None:
                        self._heard(feed, sequence)
            except asyncio.CancelledError:
                raise
            except Exception as error:
                self._listening.failed(error)
                await asyncio.sleep(_RETRY_S)

    def _heard(self, feed: _Feed, sequence: int) -> None:
        if sequence == SUBSCRIBED:
            feed.wanted = -1
        elif feed.cursor is not None and sequence <= max(feed.cursor, feed.wanted):
            return
        else:
            feed.wanted = max(feed.wanted, sequence) if feed.wanted >= 0 else -1
        if feed.reading is None or feed.reading.done():
            feed.reading = asyncio.create_task(self._read(feed), name=f"feed-{feed.table_id}")

    async def _read(self, feed: _Feed) -> None:
        """Hand out what the table's stream has after the feed's cursor: up to the sequence
        heard of, or (``wanted`` -1) all there is."""
        try:
            if feed.cursor is None:
                feed.cursor, feed.cursor_write = await self._store.last_event(feed.table_id)
                if not feed.ready.done():
                    feed.ready.set_result(None)
            while feed.wanted < 0 or feed.cursor < feed.wanted:
                asked = feed.wanted
                feed.wanted = max(asked, 0)
                entries = await self._follow(feed)
                for entry in entries:
                    feed.cursor, feed.cursor_write = entry.sequence, entry.write
                    feed.hand_out(entry)
                if len(entries) == _READ_COUNT and asked < 0 <= feed.wanted:
                    feed.wanted = -1  # more to read: all there is was asked for
                elif not entries and feed.wanted == asked:
                    feed.wanted = 0  # heard of a sequence the stream no longer has: nothing to wait for
            self._reading.succeeded()
        except asyncio.CancelledError:
            raise
        except Exception as error:
            self._reading.failed(error, table_id=feed.table_id)
            await asyncio.sleep(_RETRY_S)
            feed.wanted = -1
            if self._feeds.get(feed.table_id) is feed:
                feed.reading = asyncio.create_task(self._read(feed), name=f"feed-{feed.table_id}")

    async def _follow(self, feed: _Feed) -> list[StoredEvent]:
        """The events after the feed's cursor, once its last event is seen to be still there
        (see the module docstring); ``[]`` after telling the subscribers of a rewritten history."""
        assert feed.cursor is not None
        if not feed.cursor:
            return await self._store.read_entries(feed.table_id, 0, count=_READ_COUNT)
        entries = await self._store.read_entries(feed.table_id, feed.cursor - 1, count=_READ_COUNT + 1)
        if entries and (entries[0].sequence, entries[0].write) == (feed.cursor, feed.cursor_write):
            return entries[1:]
        _log.warning(
            "table_history_rewritten", table_id=feed.table_id, sequence=feed.cursor, subscribers=len(feed.subscribers)
        )
        feed.hand_out(REWRITTEN)
        feed.cursor, feed.cursor_write = await self._store.last_event(feed.table_id)
        feed.wanted = -1  # read the new history to its end
        return []

    async def _heartbeats(self) -> None:
        while True:
            await asyncio.sleep(self._heartbeat_s / 4)
            quiet_since = time.monotonic() - self._heartbeat_s
            for feed in list(self._feeds.values()):
                for subscription in feed.subscribers:
                    # One with entries waiting is not silent: a beat would only pile up behind
                    # them (a stream whose client stopped reading would grow by one a beat).
                    if subscription.given <= quiet_since and subscription.queue.empty():
                        subscription.give(HEARTBEAT)

    async def close(self) -> None:
        """Stop listening (at shutdown, once the streams are gone)."""
        tasks = [task for task in (self._listener, self._beats) if task is not None]
        tasks += [feed.reading for feed in self._feeds.values() if feed.reading is not None]
        self._feeds.clear()
        await _cancel_until_done(tasks)
        await self._appends.close()


async def _cancel_until_done(tasks: list[asyncio.Task[None]]) -> None:
    """Cancel ``tasks`` and wait for them, cancelling again every tenth of a second those still running.

    A cancellation can be lost: one that lands as a Redis reply does may be swallowed on the way
    (Python 3.11's ``asyncio.wait_for``), and the listener's loop goes on; the next one ends it.
    """
    pending = set(tasks)
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=0.1)
    await asyncio.gather(*tasks, return_exceptions=True)  # their exceptions retrieved
