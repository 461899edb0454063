"""gRPC-Web (and Connect) against native gRPC on the same referee: calls per second and stream latency.

One referee runs as ``dizhu serve --http-address ...`` over a Redis started here: its gRPC
port and its HTTP port serve the very same servicers. This process then measures, for
each protocol in turn,

- unary calls: ``GetTable`` (a spectator's read: one Redis read, a view built) from
  ``--callers`` concurrent callers for ``--seconds``: calls per second and p50 / p99;
- stream latency: on ``--tables`` tables, one native and one gRPC-Web spectator stream
  each; moves are made one at a time (passes in the auction) and each subscriber's
  delay from sending the move to receiving its ``bid_made`` event is recorded (p50 / p99).

The clients differ too: grpcio's aio client for gRPC, ``connectrpc``'s (over pyqwest,
HTTP/1.1) for gRPC-Web and Connect. Figures are ratios of one run; the load generator
and the referee share the machine's cores.

Run: ``python bench/bench_web.py [--seconds 5] [--callers 16] [--tables 10] [--moves 200]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc

from dizhu.embedded_redis import EmbeddedRedis
from dizhu.testing import free_port, serve_process
from dizhu.v1 import cards_pb2, table_pb2, table_service_pb2, table_service_pb2_grpc
from dizhu.web.client import ProtocolType, WebClient

Call = Callable[[], Awaitable[object]]


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[int(fraction * (len(ordered) - 1))]


async def _load(call: Call, callers: int, seconds: float) -> tuple[float, list[float]]:
    """Calls per second and every call's latency, ``callers`` at once for ``seconds``."""
    latencies: list[float] = []
    until = time.perf_counter() + seconds

    async def caller() -> None:
        while time.perf_counter() < until:
            started = time.perf_counter()
            await call()
            latencies.append(time.perf_counter() - started)

    for _ in range(20):  # warm up connections and caches
        await call()
    started = time.perf_counter()
    await asyncio.gather(*(caller() for _ in range(callers)))
    return len(latencies) / (time.perf_counter() - started), latencies


async def _tables(stub: table_service_pb2_grpc.TableServiceStub, count: int) -> dict[str, dict[int, str]]:
    tokens: dict[str, dict[int, str]] = {}
    for _ in range(count):
        created = await stub.CreateTable(
            table_service_pb2.CreateTableRequest(
                request_id=uuid.uuid4().hex,
                settings=table_pb2.TableSettings(variant=cards_pb2.VARIANT_THREE_PLAYER),
                player_names=["a", "b", "c"],
            )
        )
        tokens[created.table_id] = {seat.seat: seat.token for seat in created.seat_tokens}
    return tokens


async def _unary(target: str, base_url: str, table_id: str, callers: int, seconds: float) -> None:
    request = table_service_pb2.GetTableRequest(table_id=table_id)
    async with grpc.aio.insecure_channel(target) as channel:
        stub = table_service_pb2_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
        native = await _load(lambda: stub.GetTable(request), callers, seconds)
    results = {"gRPC (grpcio)": native}
    for name, protocol in (("gRPC-Web", ProtocolType.GRPC_WEB), ("Connect", ProtocolType.CONNECT)):
        async with WebClient(base_url, protocol=protocol) as web:
            results[name] = await _load(
                lambda web=web: web.unary("TableService", "GetTable", request), callers, seconds
            )  # type: ignore[misc]
    print(f"unary GetTable, {callers} callers for {seconds:g} s each:")
    for name, (rate, latencies) in results.items():
        print(
            f"  {name:14} {rate:8.0f} calls/s  p50 {statistics.median(latencies) * 1000:6.2f} ms  "
            f"p99 {_percentile(latencies, 0.99) * 1000:6.2f} ms  ({rate / native[0]:.2f}x gRPC)"
        )


async def _streams(target: str, base_url: str, table_count: int, moves: int) -> None:
    sent: dict[tuple[str, int], float] = {}
    delays: dict[str, list[float]] = {"gRPC": [], "gRPC-Web": []}
    ready = asyncio.Event()
    opened = 0

    def received(protocol: str, table_id: str, event: object) -> None:
        nonlocal opened
        kind = event.WhichOneof("payload")  # type: ignore[attr-defined]
        if kind == "snapshot":
            opened += 1
            if opened == 2 * table_count:
                ready.set()
        elif kind == "bid_made" and (started := sent.get((table_id, event.version))) is not None:  # type: ignore[attr-defined]
            delays[protocol].append(time.perf_counter() - started)

    async with grpc.aio.insecure_channel(target) as channel, WebClient(base_url) as web:
        stub = table_service_pb2_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
        tokens = await _tables(stub, table_count)

        async def native(table_id: str) -> None:
            async for response in stub.WatchTable(table_service_pb2.WatchTableRequest(table_id=table_id)):
                received("gRPC", table_id, response.event)

        async def browser(table_id: str) -> None:
            request = table_service_pb2.WatchTableRequest(table_id=table_id)
            async for response in web.stream("TableService", "WatchTable", request):
                received("gRPC-Web", table_id, response.event)

        tasks = [asyncio.create_task(follow(t)) for t in tokens for follow in (native, browser)]
        await asyncio.wait_for(ready.wait(), 60)
        for move in range(moves):
            table_id = list(tokens)[move % table_count]
            view = (await stub.GetTable(table_service_pb2.GetTableRequest(table_id=table_id))).table
            sent[(table_id, view.version + 1)] = time.perf_counter()
            await stub.Bid(
                table_service_pb2.BidRequest(
                    table_id=table_id, request_id=uuid.uuid4().hex, expected_version=view.version, amount=0
                ),
                metadata=(("authorization", f"Bearer {tokens[table_id][view.turn_seat]}"),),
            )
            await asyncio.sleep(0.005)
        await asyncio.sleep(1)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    print(f"stream latency, move sent to event received, {moves} moves on {table_count} tables:")
    for name, values in delays.items():
        print(
            f"  {name:14} {len(values):5d} events  p50 {statistics.median(values) * 1000:6.2f} ms  "
            f"p99 {_percentile(values, 0.99) * 1000:6.2f} ms  "
            f"({statistics.median(values) / statistics.median(delays['gRPC']):.2f}x gRPC's p50)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds of load per protocol (default 5)")
    parser.add_argument("--callers", type=int, default=16, help="concurrent unary callers (default 16)")
    parser.add_argument("--tables", type=int, default=10, help="tables with streams (default 10)")
    parser.add_argument("--moves", type=int, default=200, help="moves timed on the streams (default 200)")
    args = parser.parse_args()
    http = f"127.0.0.1:{free_port()}"
    flags = ["--log-level", "warning", "--http-address", http]
    with (
        tempfile.TemporaryDirectory() as data,
        EmbeddedRedis(Path(data), appendonly=False) as store,
        serve_process(store.url, args=flags) as referee,
    ):

        async def run() -> None:
            async with grpc.aio.insecure_channel(referee.target) as channel:
                stub = table_service_pb2_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
                (table_id,) = await _tables(stub, 1)
            await _unary(referee.target, f"http://{http}", table_id, args.callers, args.seconds)
            await _streams(referee.target, f"http://{http}", args.tables, args.moves)

        print(f"one referee process: gRPC on {referee.target}, HTTP on {http}")
        asyncio.run(run())


if __name__ == "__main__":
    main()
