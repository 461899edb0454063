"""The store a test runs against: the session's Redis, or a local Redis Cluster.

A test class marked ``on_each_store`` runs twice, once per kind of store (``store_kind``:
``redis`` then ``cluster``): over the cluster, ``redis_client`` is a cluster client of the
emptied cluster, so each table's keys live on the node of its slot and the clock's and
presence's index shards on all three, and ``store_url`` names one of its nodes. The runs over
the cluster carry the ``cluster`` and ``slow`` tiers, as ``tests/cluster/`` does. The cluster
(``cluster``, 3 primaries with a replica each, from the same ``redis-server`` as the other
tests) starts once per session (per xdist worker) when a test first asks for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

import pytest
import redis.asyncio

from dizhu.store import TableStore
from tests.support.local_cluster import LocalCluster, cluster_client

REDIS: Final = "redis"
CLUSTER: Final = "cluster"
STORE_KINDS: Final = (REDIS, CLUSTER)

#: The shared cluster's ``cluster-node-timeout``. No test kills its nodes, so a failover there
#: could only be a false one: with the 1 s that a cluster of its own keeps for quick failovers, a
#: primary stalled for a second on a loaded machine can be voted out and its last write lost (a
#: rolling restart's follower once saw an event its table's log no longer had; a false failover
#: is the one way we know to that). Longer costs a slower start, the nodes waiting longer before
#: they call the cluster ready: the first test's setup took 6 s with 5 s, 10 s with 15 s, and
#: under 5 s with 1 s.
SHARED_NODE_TIMEOUT_MS: Final = 5_000


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "on_each_store: run over the session's Redis and over a local Redis Cluster")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.definition.get_closest_marker("on_each_store") is not None:
        metafunc.parametrize("store_kind", STORE_KINDS)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The runs over the cluster are in the cluster tier (before the tiers order the run)."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("store_kind") == CLUSTER:
            item.add_marker("cluster")
            item.add_marker("slow")


@pytest.fixture
def store_kind() -> str:
    """The kind of store the test runs against: the session's Redis, unless parametrised."""
    return REDIS


@pytest.fixture(scope="session")
def cluster() -> Iterator[LocalCluster]:
    """The session's Redis Cluster: 3 primaries, 1 replica each."""
    try:
        started = LocalCluster(node_timeout_ms=SHARED_NODE_TIMEOUT_MS).start()
    except Exception as error:  # reported, loudly, as the failure
        pytest.fail(f"cannot start a local Redis Cluster: {error}", pytrace=False)
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
def store_url(store_kind: str, request: pytest.FixtureRequest) -> str:
    """The URL of the store the test runs against (over the cluster: one of its nodes)."""
    if store_kind == CLUSTER:
        running: LocalCluster = request.getfixturevalue("cluster")
        return running.url
    url: str = request.getfixturevalue("redis_url")
    return url


def connect(store_kind: str, url: str) -> redis.asyncio.Redis | redis.asyncio.RedisCluster:
    """A client of its own (bytes in, bytes out) to the store at ``url``, as another process would have."""
    return cluster_client(url) if store_kind == CLUSTER else redis.asyncio.Redis.from_url(url)


@pytest.fixture
async def store(redis_client: redis.asyncio.Redis) -> TableStore:
    """A TableStore over the test's flushed database, scripts loaded."""
    table_store = TableStore(redis_client)
    await table_store.load_scripts()
    return table_store
