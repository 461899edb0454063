"""Several seed nodes: a referee started while one node it names is down still reaches the cluster.

``--redis-url`` (or ``REDIS_URL``) with ``--redis-cluster`` takes a comma-separated list of
nodes; the cluster client asks them in turn, so any one that answers is enough. The referee
is a real ``dizhu serve`` process, the cluster the module's own (one of its nodes is killed).
"""

from __future__ import annotations

import uuid

import grpc
import pytest

from dizhu.cli import build_parser
from dizhu.config import config_from_args
from dizhu.v1 import cards_pb2, table_pb2, table_service_pb2, table_service_pb2_grpc
from tests.support.local_cluster import LocalCluster
from tests.support.referees import served_referee

FLAGS = ["--redis-cluster", "--redis-wait", "5"]


class TestSeedNodes:
    async def test_a_referee_starts_and_serves_while_the_first_seed_node_is_down(
        self, faulty_cluster: LocalCluster
    ) -> None:
        replica = faulty_cluster.replica_of(faulty_cluster.primary_nodes()[0])
        faulty_cluster.kill(replica)  # every slot is still served: a replica is down
        try:
            others = [node for node in faulty_cluster.nodes if not node.down]
            # A URL, then bare host:port nodes: the first item's options serve them all.
            seeds = ",".join([f"redis://{replica.address}/0", *(node.address for node in others[:2])])
            with served_referee(seeds, "seeds", flags=FLAGS) as target:
                async with grpc.aio.insecure_channel(target) as channel:
                    stub = table_service_pb2_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
                    settings = table_pb2.TableSettings(variant=cards_pb2.VARIANT_THREE_PLAYER)
                    request = table_service_pb2.CreateTableRequest(settings=settings, request_id=str(uuid.uuid4()))
                    created = await stub.CreateTable(request)
                    read = await stub.GetTable(table_service_pb2.GetTableRequest(table_id=created.table_id))
            assert read.table.table_id == created.table_id
        finally:
            faulty_cluster.restart(replica)


class TestSeedNodesSetting:
    def test_the_environment_variable_takes_the_list_too(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("REDIS_URL", "redis://node-a:7000,node-b:7001,redis://node-c:7002")
        monkeypatch.setenv("DIZHU_REDIS_CLUSTER", "1")
        config = config_from_args(build_parser().parse_args(["serve"]))
        assert config.redis_url == "redis://node-a:7000,node-b:7001,redis://node-c:7002"
        assert config.redis_cluster

    def test_several_nodes_without_the_cluster_flag_are_refused(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("DIZHU_REDIS_CLUSTER", raising=False)
        args = build_parser().parse_args(["serve", "--redis-url", "redis://node-a:7000,node-b:7001"])
        with pytest.raises(SystemExit):
            config_from_args(args)
