"""A mismatch between ``--redis-cluster`` and the Redis it names is one clear message, not a crash."""

from __future__ import annotations

from tests.support.command_line import FAILED, assert_clean, dizhu
from tests.support.local_cluster import LocalCluster

QUICKLY = ["--redis-wait", "5", "--address", "127.0.0.1:0"]


class TestMismatch:
    def test_a_cluster_node_without_the_flag_is_named_as_one(self, cluster: LocalCluster) -> None:
        result = dizhu("serve", "--redis-url", cluster.url, *QUICKLY)
        assert_clean(result, FAILED, "is a node of a Redis Cluster: start with --redis-cluster")

    def test_the_flag_with_a_server_that_is_no_cluster_says_so(self, cluster: LocalCluster) -> None:
        from dizhu.embedded_redis import EmbeddedRedis

        with EmbeddedRedis(appendonly=False) as single:
            result = dizhu("serve", "--redis-url", single.url, "--redis-cluster", *QUICKLY)
        assert_clean(result, FAILED, "cannot serve as a Redis Cluster", "is --redis-cluster meant?")
