"""Fixtures of the Redis Cluster tests: every test here runs over a real local cluster.

``store_kind`` is ``cluster`` in this directory, so ``redis_client`` and ``store``
(``tests.support.store_fixtures``) are over the session's cluster (``cluster``: 3 primaries with
a replica each), and ``redis_url`` names one of its nodes. The service's core scenarios run
over the cluster where they are written, in ``tests/grpc`` and ``tests/live`` (``on_each_store``).
Tests that kill nodes use a cluster of their own (``faulty_cluster``), so that the shared one
keeps its shape.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.local_cluster import LocalCluster
from tests.support.store_fixtures import CLUSTER


@pytest.fixture
def store_kind() -> str:
    """Every test of this directory runs over the cluster."""
    return CLUSTER


@pytest.fixture(scope="module")
def faulty_cluster() -> Iterator[LocalCluster]:
    """A cluster of the module's own, whose nodes its tests may kill and restart."""
    with LocalCluster() as started:
        yield started


@pytest.fixture(scope="session")
def redis_url(cluster: LocalCluster) -> str:
    """A node of the session's cluster (the cluster client finds the others)."""
    return cluster.url
