"""Hearing that a table's event stream grew, on one connection per process.

Every script that appends to a table's stream (:data:`~dizhu.store.scripts.CREATE`,
:data:`~dizhu.store.scripts.SAVE`, :data:`~dizhu.store.presence.PRESENCE`) publishes the
table's new last sequence, in the same atomic step, on a channel named as the stream's key
(``<prefix>:{t:<table_id>}:events``). :class:`Appends` subscribes one Redis connection to the
channels of the tables a process follows and reports what it hears.

Why publish/subscribe rather than a blocking read per table: an idle table then costs
nothing at all -- no connection and no command per watched table -- and one connection
serves any number of tables. Why a notification and not the events themselves: the stream
stays the one truth; a reader reads it (without blocking) from where it is, so a lost or
repeated notification costs one read and never an event.

Redis Cluster: a channel is no key, and a ``PUBLISH`` (also from a script) reaches the
subscribers of every node, so this works unchanged on a cluster (Redis 6.2 and 7). The
channel carries the table's hash tag, so moving to sharded channels (``SPUBLISH`` /
``SSUBSCRIBE``, Redis 7), which reach only the table's shard, is a change of command names.
A subscriber whose cluster node is gone for good (failed over) moves to a node that answers.

A notification published while the connection is down is lost: every confirmation of a
subscription (the first one, and those redis-py sends again after reconnecting) is
reported too, and the listener then reads the table's stream from where it is.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any, Final

from redis.asyncio import RedisCluster
from redis.asyncio.client import PubSub
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisClusterException, RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from dizhu.store.connection import StoreClient
from dizhu.store.keys import table_keys

__all__ = ["SUBSCRIBED", "Appends"]

#: What :meth:`Appends.listen` reports for a confirmed subscription: the table's stream may
#: have grown unheard (before it, or while reconnecting), so read it.
SUBSCRIBED: Final = -1
#: Seconds without any message after which the connection is checked with a PING.
_IDLE_CHECK_S: Final = 30.0


class Appends:
    """One subscriber connection for the tables of one process (see the module docstring).

    ``subscribe`` and ``unsubscribe`` are sent in the order they are called, so that a table
    left and followed again at once ends up subscribed.
    """

    def __init__(self, redis: StoreClient, *, prefix: str = "dizhu") -> None:
        self._redis = redis
        self._prefix = prefix
        self._pubsub: PubSub | None = None
        self._tables: dict[bytes, str] = {}
        #: Orders the commands: asyncio.Lock wakes its waiters first in, first out.
        self._sending = asyncio.Lock()
        #: The subscriber's cluster node is gone: the next listen moves to another one.
        self._moving = False

    def _channel(self, table_id: str) -> str:
        return table_keys(self._prefix, table_id).events

    def _connection(self) -> PubSub:
        if self._pubsub is None:
            self._pubsub = self._redis.pubsub()
        return self._pubsub

    async def subscribe(self, table_id: str) -> None:
        """Follow ``table_id``; :meth:`listen` reports ``(table_id, SUBSCRIBED)`` once Redis confirms."""
        channel = self._channel(table_id)
        self._tables[channel.encode()] = table_id
        async with self._sending:
            if not self._moving:  # else the new subscriber subscribes to every followed table
                await self._connection().subscribe(channel)

    async def unsubscribe(self, table_id: str) -> None:
        """Stop following ``table_id``."""
        channel = self._channel(table_id)
        self._tables.pop(channel.encode(), None)
        async with self._sending:
            if not self._moving:
                await self._connection().unsubscribe(channel)

    async def listen(self) -> AsyncIterator[tuple[str, int]]:
        """``(table_id, last sequence)`` for each append heard, ``(table_id, SUBSCRIBED)`` for
        each confirmed subscription; runs until cancelled. A lost connection is made again
        at once; raises redis-py's error when that fails (call again later)."""
        while True:
            if self._moving:
                await self._move()
            pubsub = self._connection()
            if pubsub.connection is None:  # nothing subscribed yet
                await asyncio.sleep(0.05)
                continue
            try:
                message: dict[str, Any] | None = await pubsub.get_message(timeout=_IDLE_CHECK_S)
            except (RedisConnectionError, RedisTimeoutError, OSError):
                await self._reconnect(pubsub)
                continue
            if message is None:
                async with self._sending:
                    await pubsub.ping()
                continue
            table_id = self._tables.get(message["channel"] or b"")
            if table_id is None:
                continue
            if message["type"] == "message":
                yield table_id, int(message["data"])
            elif message["type"] == "subscribe":
                yield table_id, SUBSCRIBED

    async def _reconnect(self, pubsub: PubSub) -> None:
        """Connect again; redis-py then subscribes again to every channel (each confirmation is reported).

        On a cluster the node may be gone for good (failed over): the subscriber then moves
        to a node that answers (:meth:`_move`, on the next :meth:`listen`).
        """
        connection = pubsub.connection
        assert connection is not None
        async with self._sending:
            try:
                await connection.disconnect()
                await connection.connect()
            except (RedisConnectionError, RedisTimeoutError, OSError):
                self._moving = isinstance(self._redis, RedisCluster)
                raise

    async def _move(self) -> None:
        """A new subscriber, on a cluster node that answers now, following every table again.

        Raises redis-py's error while none answers (:meth:`listen` is called again later).
        """
        async with self._sending:
            old, self._pubsub = self._pubsub, None
            if old is not None:
                with contextlib.suppress(Exception):
                    await old.aclose()  # type: ignore[no-untyped-call, unused-ignore]  # typed from redis-py 8.2
            with contextlib.suppress(RedisError, RedisClusterException):
                await self._redis.ping()  # lets the cluster client learn which nodes are left
            channels = [channel.decode() for channel in self._tables]
            if channels:
                await self._connection().subscribe(*channels)
            self._moving = False

    async def close(self) -> None:
        if self._pubsub is not None:
            await self._pubsub.aclose()  # type: ignore[no-untyped-call, unused-ignore]  # typed from redis-py 8.2
            self._pubsub = None
