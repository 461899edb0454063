"""Operations: Prometheus metrics, in process and from a `dizhu serve` process over HTTP."""

from __future__ import annotations

import urllib.request
import uuid

import grpc
import pytest
import redis.asyncio
from prometheus_client import REGISTRY

from dizhu.config import ServerConfig
from dizhu.process import create_server
from dizhu.store import TableStore
from dizhu.testing import free_port, serve_process
from dizhu.v1 import cards_pb2, table_pb2, table_service_pb2, table_service_pb2_grpc


def _calls(method: str, code: str) -> float:
    return REGISTRY.get_sample_value("dizhu_rpc_calls_total", {"method": method, "code": code}) or 0.0


class TestMetrics:
    async def test_calls_are_counted_by_method_and_status(self, redis_client: redis.asyncio.Redis) -> None:
        store = TableStore(redis_client)
        referee = await create_server(ServerConfig(address="127.0.0.1:0"), store)
        try:
            ok_before = _calls("CreateTable", "OK")
            missing_before = _calls("GetTable", "NOT_FOUND")
            async with grpc.aio.insecure_channel(f"127.0.0.1:{referee.port}") as channel:
                stub = table_service_pb2_grpc.TableServiceStub(channel)
                await stub.CreateTable(
                    table_service_pb2.CreateTableRequest(
                        request_id=uuid.uuid4().hex,
                        settings=table_pb2.TableSettings(variant=cards_pb2.VARIANT_THREE_PLAYER),
                    )
                )
                with pytest.raises(grpc.aio.AioRpcError):
                    await stub.GetTable(table_service_pb2.GetTableRequest(table_id="no-such-table"))
        finally:
            await referee.stop(0)
        assert _calls("CreateTable", "OK") == ok_before + 1
        assert _calls("GetTable", "NOT_FOUND") == missing_before + 1

    def test_serve_exposes_metrics_over_http(self, redis_url: str) -> None:
        metrics_port = free_port()
        with serve_process(redis_url, args=["--metrics-port", str(metrics_port)]) as referee:
            with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5) as response:
                body = response.read().decode()
            assert "dizhu_open_streams" in body
            assert "dizhu_rpc_duration_seconds" in body
        assert referee.process.returncode == 0, "SIGTERM must stop the referee cleanly"
