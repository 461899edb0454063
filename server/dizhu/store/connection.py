"""Connecting the store to Redis -- one server or a Redis Cluster -- and what differs between them.

The store takes either client (:data:`StoreClient`): ``redis.asyncio.Redis`` for one server,
``redis.asyncio.RedisCluster`` for a cluster (docs/store.md#redis-cluster). Most of its calls
behave alike on both, because every key of a table shares one hash tag and each script
declares all of its keys: a cluster client routes them to the table's node. What differs is
handled here:

- ``XREAD`` has "movable" keys, which redis-py's cluster client resolves by asking a node
  (``COMMAND GETKEYS``) before every call: :func:`run_on_key_node` sends it straight to the
  node of its one key instead.
- ``INFO`` answers for one node: :func:`info_of_primaries` asks every primary.
- ``WAIT`` counts the replicas that hold what *its own connection* wrote, so the write and
  the ``WAIT`` must travel on one connection, to the node of the written key
  (:func:`write_and_wait`): a pipeline on one server; on a cluster, one connection of that
  node, never retried or redirected (a retry elsewhere could answer for another connection).
- Failures that pass (a node down, a failover under way, a slot moving) raise different
  exceptions on a cluster; :func:`is_unavailable` tells them all apart from real errors.
"""

from __future__ import annotations

import contextlib
import os
import traceback
import urllib.parse
from collections.abc import Sequence
from typing import Any, Final, TypeAlias

from redis.asyncio import Redis, RedisCluster
from redis.asyncio.cluster import ClusterNode, PipelineCommand
from redis.commands.core import AsyncScript
from redis.exceptions import (
    AskError,
    ClusterError,
    ConnectionError,
    NoScriptError,
    ReadOnlyError,
    RedisClusterException,
    RedisError,
    SlotNotCoveredError,
    TimeoutError,
    TryAgainError,
)

from dizhu.store.packing import hiredis_packing
from dizhu.store.pool import WaitingConnectionPool

__all__ = [
    "NotReplicated",
    "StoreClient",
    "connect",
    "info_of_primaries",
    "is_cluster",
    "is_unavailable",
    "run_on_key_node",
    "seed_nodes",
    "write_and_wait",
]

StoreClient: TypeAlias = Redis | RedisCluster
"""What the store runs on: one Redis server, or a Redis Cluster."""

#: Socket timeouts of the store's connections: well above a stream's blocking read (5 s).
SOCKET_TIMEOUT_S: Final = 10.0
_CONNECT_TIMEOUT_S: Final = 5.0

_REDIS_CONNECTION_CODE: Final = os.path.join("redis", "asyncio", "connection.py")
#: Failures of a cluster in motion: a failover, a node restarting, a slot moving.
_PASSING: Final = (
    ConnectionError,  # also a busy-loading node, a full client pool
    TimeoutError,
    ClusterError,  # CLUSTERDOWN, MASTERDOWN, a redirect loop ("TTL exhausted")
    TryAgainError,  # a slot in migration
    AskError,  # a slot that moves or moved (MOVED too), seen where it is not followed (write_and_wait)
    ReadOnlyError,  # a write that reached a primary just demoted to a replica
    OSError,
)


class NotReplicated(Exception):
    """A write reached the primary but no replica confirmed it within the timeout.

    Nothing is acknowledged: the caller retries the same request (same request id), which
    either finds it applied and confirmed, or -- after a failover lost it -- applies it again.
    """


def is_cluster(client: StoreClient) -> bool:
    return isinstance(client, RedisCluster)


def is_unavailable(error: BaseException) -> bool:
    """Whether ``error`` says the store is briefly out of reach (retry), not that a request is wrong."""
    if isinstance(error, (*_PASSING, NotReplicated)) or _torn_down_under_a_write(error):
        return True
    # The cluster client's own words for "no node answers" or "this slot has no node now" (but
    # not for a node that answers and is no cluster's: that is the configuration's fault).
    said = str(error)
    return isinstance(error, SlotNotCoveredError) or (
        isinstance(error, RedisClusterException) and "cannot be connected" in said and "not enabled" not in said
    )


_DEFAULT_PORT: Final = 6379


def seed_nodes(url: str) -> tuple[str, list[tuple[str, int]]]:
    """A cluster's seed nodes, ``url`` being one node's URL or several, comma-separated.

    The first item is a URL (``redis://`` or ``rediss://``) whose options -- credentials,
    database, TLS -- serve every node; the others are URLs too or bare ``host:port``. Returns
    the first URL and the ``(host, port)`` of the others; ``ValueError`` for an item that
    names no node.
    """
    first, *others = (item.strip() for item in url.split(","))
    nodes = []
    for item in others:
        parts = urllib.parse.urlsplit(item if "://" in item else f"//{item}")
        if not parts.hostname:
            raise ValueError(f"{item!r} names no node (host:port, or a URL)")
        nodes.append((parts.hostname, parts.port or _DEFAULT_PORT))
    return first, nodes


def connect(url: str, *, cluster: bool, max_connections: int, wait_for_connection: bool = False) -> StoreClient:
    """A client of the Redis at ``url`` (when ``cluster``: seed nodes, see :func:`seed_nodes`), returning bytes.

    ``max_connections`` bounds the connections (per node on a cluster). ``wait_for_connection``:
    a call finding them all busy waits up to the socket timeout for one, instead of failing
    (one server only: the cluster client fails such a call as unavailable).
    """
    if cluster:
        first, others = seed_nodes(url)
        return RedisCluster.from_url(
            first,
            # Asked in turn until one answers: a seed node that is down does not keep the referee from starting.
            startup_nodes=[ClusterNode(host, port) for host, port in others],
            max_connections=max_connections,
            socket_timeout=SOCKET_TIMEOUT_S,
            socket_connect_timeout=_CONNECT_TIMEOUT_S,
            # Keep serving the slots that have a node while others have none (both halves of a shard lost).
            require_full_coverage=False,
        )
    if wait_for_connection:
        pool = WaitingConnectionPool.from_url(
            url, max_connections=max_connections, timeout=SOCKET_TIMEOUT_S, socket_timeout=SOCKET_TIMEOUT_S
        )
        pool.connection_class = hiredis_packing(pool.connection_class)
        return Redis.from_pool(pool)  # the client owns the pool and closes it
    client = Redis.from_url(url, socket_timeout=SOCKET_TIMEOUT_S, max_connections=max_connections)
    client.connection_pool.connection_class = hiredis_packing(client.connection_pool.connection_class)
    return client


def _torn_down_under_a_write(error: BaseException) -> bool:
    """A connection closed (by the peer, or by the client's own failover handling) while a command
    was being written to it: redis-py (seen with 8.1) lets that escape from its connection code
    as an ``AttributeError`` or ``TypeError`` about ``None`` instead of a ``ConnectionError``.
    The command may not have been sent; like any unavailable store, the caller retries it."""
    if not isinstance(error, AttributeError | TypeError) or "NoneType" not in str(error):
        return False
    return any(frame.filename.endswith(_REDIS_CONNECTION_CODE) for frame in traceback.extract_tb(error.__traceback__))


async def run_on_key_node(client: StoreClient, key: str, *args: Any) -> Any:
    """Run a command whose only key is ``key`` (``XREAD`` ... ``STREAMS key id``) on that key's node."""
    if isinstance(client, RedisCluster):
        await client.initialize()  # a no-op once the client knows the slots
        try:
            return await client.execute_command(*args, target_nodes=_node_of(client, key))
        except _PASSING:
            await _relearn(client, key)
            raise
    return await client.execute_command(*args)  # type: ignore[no-untyped-call]


async def info_of_primaries(client: StoreClient, section: str) -> list[dict[str, Any]]:
    """``INFO <section>`` of the one server, or of every primary of the cluster."""
    if isinstance(client, RedisCluster):
        replies: dict[str, dict[str, Any]] = await client.info(section, target_nodes=RedisCluster.PRIMARIES)
        return list(replies.values())
    return [await client.info(section)]


async def write_and_wait(
    client: StoreClient,
    script: AsyncScript,
    keys: Sequence[str],
    args: Sequence[bytes | str | int],
    *,
    replicas: int,
    timeout_ms: int,
) -> tuple[Any, int]:
    """Run ``script`` on ``keys`` (one slot), then ``WAIT replicas timeout_ms`` on the same connection.

    Returns the script's reply and how many replicas hold everything the connection wrote
    up to then. Loads the script once if the node does not know it (``NOSCRIPT``).
    """
    for _ in range(2):
        reply, acknowledged = await _pipelined(
            client,
            keys[0],
            ("EVALSHA", script.sha, len(keys), *keys, *args),
            ("WAIT", replicas, timeout_ms),
        )
        if isinstance(reply, NoScriptError):
            script.sha = await client.script_load(script.script)
            continue
        for result in (reply, acknowledged):
            if isinstance(result, Exception):
                raise result
        return reply, int(acknowledged)
    raise reply


async def confirm_replicated(client: StoreClient, marker: str, *, replicas: int, timeout_ms: int) -> int:
    """How many replicas hold everything written to ``marker``'s node so far (waiting up to ``timeout_ms``).

    ``WAIT`` only covers what its own connection wrote, so this writes a short-lived
    ``marker`` first: its replication offset covers every earlier write to the node.
    """
    written, acknowledged = await _pipelined(
        client, marker, ("SET", marker, b"", "PX", 1000), ("WAIT", replicas, timeout_ms)
    )
    for result in (written, acknowledged):
        if isinstance(result, Exception):
            raise result
    return int(acknowledged)


def _node_of(client: RedisCluster, key: str) -> ClusterNode:
    """The primary serving ``key``'s slot, as the client knows it."""
    node = client.get_node_from_key(key)
    if node is None:
        raise SlotNotCoveredError(f"no node serves the slot of {key}")
    return node


async def _relearn(client: RedisCluster, key: str) -> None:
    """After a failure outside the cluster client's own routing: let it find ``key``'s node again.

    One ordinary command on the key goes through the client's redirect and reconnection
    handling, which updates its map of the slots (a failover moved them, or a node is down).
    """
    with contextlib.suppress(RedisError, RedisClusterException):
        await client.exists(key)


async def _pipelined(client: StoreClient, key: str, *commands: tuple[Any, ...]) -> list[Any]:
    """Send ``commands`` on one connection to ``key``'s node, in order; their replies (or errors)."""
    if isinstance(client, RedisCluster):
        await client.initialize()
        queued = [PipelineCommand(position, *command) for position, command in enumerate(commands)]
        try:
            await _node_of(client, key).execute_pipeline(queued)
        except _PASSING:
            await _relearn(client, key)
            raise
        results = [command.result for command in queued]
        if any(isinstance(result, _PASSING) for result in results):
            await _relearn(client, key)
        return results
    async with client.pipeline(transaction=False) as pipe:
        for command in commands:
            pipe.execute_command(*command)
        replies: list[Any] = await pipe.execute(raise_on_error=False)
        return replies
