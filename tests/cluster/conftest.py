"""Fixtures of the Redis Cluster tests: a real local cluster, and the service's fixtures over it.

``cluster`` (session) is a :class:`tests.support.local_cluster.LocalCluster` -- 3 primaries with a replica
each, from the same ``redis-server`` binary as the other tests -- started once per session
(per xdist worker) and torn down at its end. Here ``redis_url`` names one of its nodes and
``redis_client`` is a flushed ``RedisCluster`` client, so the gRPC and live-table fixtures
(imported from ``tests/grpc`` and ``tests/live``, not copied) run the same scenarios over the
cluster: a referee's ``TableStore`` takes either client. Tests that kill nodes use a cluster
of their own (``faulty_cluster``), so that the shared one keeps its shape.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import redis.asyncio

from dizhu.config import ServerConfig
from dizhu.process import Referee, create_server
from dizhu.store import TableStore
from tests.grpc import conftest as _grpc
from tests.support.live import Referees
from tests.support.local_cluster import LocalCluster

# The gRPC tests' fixtures, resolved here against the cluster's redis_client.
store = _grpc.store
referee = _grpc.referee
channel = _grpc.channel
tables = _grpc.tables
rules = _grpc.rules
health = _grpc.health
second_tables = _grpc.second_tables


def cluster_client(url: str) -> redis.asyncio.RedisCluster:
    """A cluster client (bytes in, bytes out) discovering the cluster from the node at ``url``."""
    return redis.asyncio.RedisCluster.from_url(url)


#: The shared cluster's ``cluster-node-timeout``. No test kills its nodes, so a failover there
#: could only be a false one: with the 1 s that ``faulty_cluster`` keeps for quick failovers, a
#: primary stalled for a second on a loaded machine can be voted out and its last write lost (a
#: rolling restart's follower once saw an event its table's log no longer had; a false failover
#: is the one way we know to that). Longer costs a slower start, the nodes waiting longer before
#: they call the cluster ready: the first test's setup took 6 s with 5 s, 10 s with 15 s, and
#: under 5 s with 1 s.
SHARED_NODE_TIMEOUT_MS = 5_000


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


@pytest.fixture(scope="module")
def faulty_cluster() -> Iterator[LocalCluster]:
    """A cluster of the module's own, whose nodes its tests may kill and restart."""
    with LocalCluster() as started:
        yield started


@pytest.fixture(scope="session")
def redis_url(cluster: LocalCluster) -> str:
    """A node of the session's cluster (the cluster client finds the others)."""
    return cluster.url


@pytest.fixture
async def redis_client(cluster: LocalCluster) -> AsyncIterator[redis.asyncio.RedisCluster]:
    """A cluster client over the emptied cluster, closed afterwards."""
    cluster.flush()
    client = cluster_client(cluster.url)
    yield client
    await client.aclose()


class ClusterReferees(Referees):
    """``Referees`` whose own clients are cluster clients."""

    def connect(self) -> redis.asyncio.RedisCluster:
        return cluster_client(self._url)


@pytest.fixture
async def referees(redis_url: str, redis_client: redis.asyncio.RedisCluster) -> AsyncIterator[Referees]:
    """The live tests' factory of referees, over the cluster."""
    started = ClusterReferees(redis_url, redis_client)
    try:
        yield started
    finally:
        await started.aclose()


@pytest.fixture
async def second_referee(redis_url: str) -> AsyncIterator[Referee]:
    """Another referee on the cluster, with its own cluster client."""
    client = cluster_client(redis_url)
    table_store = TableStore(client)
    await table_store.load_scripts()
    server = await create_server(ServerConfig(address="127.0.0.1:0"), table_store)
    yield server
    await server.stop(0)
    await client.aclose()
