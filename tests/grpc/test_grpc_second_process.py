"""A second referee process (``dizhu serve``) on the same Redis carries on a game the first began.

The referee is stateless: any process can take the next move of any table. Server A runs in
this process; server B is a real ``python -m dizhu.cli serve`` child, whose port is read from
its "serving" JSON log line. SIGTERM must stop B gracefully (exit status 0, within seconds).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from dizhu import engine
from dizhu.v1 import rules_service_pb2_grpc, table_pb2, table_service_pb2_grpc
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import (
    THREE,
    RulesStub,
    TableStub,
    act,
    bid_to_play,
    create_table,
    play_round,
    refused,
    rid,
    view,
)

ROOT = Path(__file__).resolve().parents[2]
_START_TIMEOUT_S = 30.0
_STOP_TIMEOUT_S = 8.0


class _Child:
    """A ``dizhu serve`` child process and the JSON lines it logged."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.lines: list[dict[str, Any]] = []
        self.raw: list[str] = []

    async def read_line(self) -> dict[str, Any] | None:
        assert self.process.stderr is not None
        line = await self.process.stderr.readline()
        if not line:
            return None
        text = line.decode(errors="replace").strip()
        self.raw.append(text)
        try:
            record = json.loads(text)
        except ValueError:
            return {}
        if isinstance(record, dict):
            self.lines.append(record)
            return record
        return {}

    async def port(self) -> int:
        while True:
            record = await self.read_line()
            if record is None:
                raise AssertionError("the server exited before serving:\n" + "\n".join(self.raw))
            if record.get("event") == "serving":
                return int(record["port"])

    async def drain(self) -> None:
        while await self.read_line() is not None:
            pass


@pytest.fixture
async def server_b(redis_url: str, redis_client: object) -> AsyncIterator[_Child]:
    """``dizhu serve`` on a free port over the test's Redis (flushed by ``redis_client``)."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "server"), str(ROOT / "clients" / "python")]),
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "dizhu.cli",
        "serve",
        "--address",
        "127.0.0.1:0",
        "--redis-url",
        redis_url,
        "--log-format",
        "json",
        "--grace",
        "2",
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    child = _Child(process)
    try:
        yield child
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


class TestSecondProcess:
    async def test_a_game_begun_on_one_server_is_finished_on_another_that_then_stops_gracefully(
        self, tables: TableStub, rules: RulesStub, server_b: _Child
    ) -> None:
        port = await asyncio.wait_for(server_b.port(), _START_TIMEOUT_S)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            health = health_pb2_grpc.HealthStub(channel)
            checked = await health.Check(health_pb2.HealthCheckRequest(service="dizhu.v1.TableService"))
            assert checked.status == health_pb2.HealthCheckResponse.SERVING
            tables_b = table_service_pb2_grpc.TableServiceStub(channel)
            rules_b = rules_service_pb2_grpc.RulesServiceStub(channel)

            # Server A: create, bid, and play a few moves.
            rng = random.Random(21)
            table = await create_table(tables, THREE, round_limit=1)
            await bid_to_play(tables, table)
            for _ in range(4):
                await act(tables, rules, table, rng)
            half = await view(tables, table)
            assert half.phase == table_pb2.PHASE_PLAY

            # Server B sees exactly the same table, refuses what A would refuse, and finishes the round.
            assert await view(tables_b, table) == half
            wrong_seat = next(seat for seat in range(3) if seat != half.turn_seat)
            await refused(
                tables_b.Bid(
                    pb.BidRequest(table_id=table.table_id, request_id="b-refused", expected_version=half.version),
                    metadata=table.seat(wrong_seat),
                ),
                grpc.StatusCode.FAILED_PRECONDITION,
                "WRONG_PHASE",
            )
            ended = await play_round(tables_b, rules_b, table, rng)
            assert ended.phase == table_pb2.PHASE_CLOSED
            assert ended.version > half.version
            assert await view(tables, table) == await view(tables_b, table)
            assert sum(seat.balance for seat in ended.seats) == 0

            # And a table made on B is playable on A.
            from_b = await tables_b.CreateTable(
                pb.CreateTableRequest(request_id=rid(), settings=table.created.table.settings, player_names=["x"])
            )
            assert (await tables.GetTable(pb.GetTableRequest(table_id=from_b.table_id))).table.version == 1

        server_b.process.send_signal(signal.SIGTERM)
        returncode = await asyncio.wait_for(server_b.process.wait(), _STOP_TIMEOUT_S)
        await asyncio.wait_for(server_b.drain(), _STOP_TIMEOUT_S)
        assert returncode == 0, "\n".join(server_b.raw)
        events = [line.get("event") for line in server_b.lines]
        assert "stopping" in events, events
        assert "stopped" in events, events
        refusal = next(line for line in server_b.lines if line.get("event") == "refused")
        assert refusal["table_id"] == table.table_id
        assert refusal["call_id"]
        assert "b-refused" not in "\n".join(server_b.raw), "request ids are never logged"
        assert refusal["method"] == "Bid"
        assert refusal["reason"] == "WRONG_PHASE"
        assert all("timestamp" in line and "level" in line for line in server_b.lines)
        serving = next(line for line in server_b.lines if line.get("event") == "serving")
        assert serving["rules_engine"] == engine.backend(), "the referee says which rules engine checks the moves"
