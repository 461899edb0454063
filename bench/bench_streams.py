"""Event-stream benchmark: open streams one referee process holds, and delivery latency.

A referee runs in its own process (``dizhu serve`` over a Redis started here). This process
opens many ``WatchTable`` streams (spread over a number of tables, as spectators), checks
they all received their snapshot, then makes moves on every table and measures, for each
move, the time from sending the move to each subscriber receiving its event (p50/p99), and
the referee's resident memory per open stream.

Run: ``python bench/bench_streams.py [--streams 1000] [--tables 50] [--moves 10]``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import grpc

from dizhu.embedded_redis import EmbeddedRedis
from dizhu.testing import serve_process
from dizhu.v1 import cards_pb2, table_pb2, table_service_pb2, table_service_pb2_grpc

ROOT = Path(__file__).resolve().parent.parent


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def _create_tables(
    creator: table_service_pb2_grpc.TableServiceStub, tables: int
) -> tuple[list[str], dict[str, dict[int, str]]]:
    table_ids: list[str] = []
    tokens: dict[str, dict[int, str]] = {}
    for _ in range(tables):
        created = await creator.CreateTable(
            table_service_pb2.CreateTableRequest(
                request_id=uuid.uuid4().hex,
                settings=table_pb2.TableSettings(variant=cards_pb2.VARIANT_THREE_PLAYER),
                player_names=["a", "b", "c"],
            )
        )
        table_ids.append(created.table_id)
        tokens[created.table_id] = {seat.seat: seat.token for seat in created.seat_tokens}
    return table_ids, tokens


async def _all_ready(
    event: asyncio.Event, tasks: list[asyncio.Task[None]], ready: Callable[[], int], streams: int
) -> bool:
    """Wait until every stream got its snapshot; give up (cancelling them) after two minutes."""
    try:
        await asyncio.wait_for(event.wait(), timeout=120)
    except TimeoutError:
        print(f"  only {ready()} of {streams} streams got their snapshot within 120 s")
        failed = [task.exception() for task in tasks if task.done() and not task.cancelled() and task.exception()]
        codes = sorted({error.code().name for error in failed if isinstance(error, grpc.aio.AioRpcError)})
        print(f"  {len(failed)} streams had failed: {', '.join(codes) or '-'}")
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return False
    return True


async def _run(target: str, pid: int, streams: int, tables: int, moves: int) -> None:
    # HTTP/2 caps concurrent streams per connection: spread them over connections of their own.
    channels = [
        grpc.aio.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)])
        for _ in range(max(8, streams // 80))
    ]
    stubs = [table_service_pb2_grpc.TableServiceStub(channel) for channel in channels]
    creator = stubs[0]
    table_ids, tokens = await _create_tables(creator, tables)
    rss_before = _rss_kib(pid)
    sent: dict[tuple[str, int], float] = {}
    delays: list[float] = []
    ready = 0
    all_ready = asyncio.Event()

    async def subscriber(index: int) -> None:
        nonlocal ready
        table_id = table_ids[index % tables]
        call = stubs[index % len(stubs)].WatchTable(table_service_pb2.WatchTableRequest(table_id=table_id))
        async for message in call:
            event = message.event
            kind = event.WhichOneof("payload")
            if kind == "snapshot":
                ready += 1
                if ready == streams:
                    all_ready.set()
            elif kind == "bid_made":
                started = sent.get((table_id, event.version))
                if started is not None:
                    delays.append(time.perf_counter() - started)

    tasks = [asyncio.create_task(subscriber(index)) for index in range(streams)]
    start = time.perf_counter()
    if not await _all_ready(all_ready, tasks, lambda: ready, streams):
        return
    opened = time.perf_counter() - start
    await asyncio.sleep(1)
    rss_after = _rss_kib(pid)
    print(f"  {streams} streams on {tables} tables opened in {opened:.1f} s; all got their snapshot")
    print(
        f"  referee memory: +{(rss_after - rss_before) / streams:.1f} KiB per open stream ({rss_after / 1024:.0f} MiB)"
    )
    rng = random.Random(1)
    for _ in range(moves):
        for table_id in table_ids:
            view = (await creator.GetTable(table_service_pb2.GetTableRequest(table_id=table_id))).table
            if view.phase != table_pb2.PHASE_AUCTION:
                continue
            seat = view.turn_seat
            amount = rng.choice([0, *range(view.highest_bid + 1, 4)])
            sent[(table_id, view.version + 1)] = time.perf_counter()
            await creator.Bid(
                table_service_pb2.BidRequest(
                    table_id=table_id, request_id=uuid.uuid4().hex, expected_version=view.version, amount=amount
                ),
                metadata=(("authorization", f"Bearer {tokens[table_id][seat]}"),),
            )
        await asyncio.sleep(0.2)
    await asyncio.sleep(1)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for channel in channels:
        await channel.close()
    delays.sort()
    per_move = len(delays) / max(1, len(sent))
    print(f"  {len(sent)} moves, {len(delays)} deliveries ({per_move:.0f} subscribers per move)")
    print(
        f"  move-to-subscriber latency: p50 {statistics.median(delays) * 1000:.1f} ms, "
        f"p99 {delays[int(0.99 * (len(delays) - 1))] * 1000:.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--moves", type=int, default=10, help="bidding rounds over all tables (default 10)")
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as data,
        EmbeddedRedis(Path(data), appendonly=False) as store,
        serve_process(store.url, args=["--log-level", "warning"]) as referee,
    ):
        print(f"one referee process, {args.streams} spectator streams")
        asyncio.run(_run(referee.target, referee.process.pid, args.streams, args.tables, args.moves))


if __name__ == "__main__":
    main()
