"""Operations: Prometheus metrics, in process and from a `dizhu serve` process over HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import grpc
import pytest
import redis.asyncio
from prometheus_client import REGISTRY

from dizhu.config import ServerConfig
from dizhu.service.server import create_server
from dizhu.store import TableStore
from dizhu.v1 import cards_pb2, table_pb2, table_service_pb2, table_service_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]


def _calls(method: str, code: str) -> float:
    return REGISTRY.get_sample_value("dizhu_rpc_calls_total", {"method": method, "code": code}) or 0.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


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
        grpc_port, metrics_port = _free_port(), _free_port()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "server"), str(ROOT / "clients/python")])}
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "dizhu.cli",
                "serve",
                "--address",
                f"127.0.0.1:{grpc_port}",
                "--redis-url",
                redis_url,
                "--metrics-port",
                str(metrics_port),
            ],
            env=env,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 20
            body = ""
            while time.monotonic() < deadline and "dizhu_open_streams" not in body:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=2) as response:
                        body = response.read().decode()
                except OSError:
                    time.sleep(0.2)
            assert "dizhu_open_streams" in body
            assert "dizhu_rpc_duration_seconds" in body
        finally:
            server.terminate()
            assert server.wait(timeout=20) == 0
