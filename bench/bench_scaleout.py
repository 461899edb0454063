"""Scale-out benchmark: moves/s and streams with 1, 2 and 4 referee processes, on one Redis and on a cluster.

For each store -- one Redis server, and a Redis Cluster of 3 primaries with a replica each
(``tests/support/local_cluster.py``), both with their append-only file on -- and each number
of ``dizhu serve`` processes, two loads run, from this process:

- **moves**: complete 3p rounds, planned here with the rules core (bench_service.py), on
  ``--tables`` concurrent tables spread over the processes. Reported: moves/s, latency, and
  what extrapolates past this machine: referee CPU per move, Redis CPU per move, Redis
  commands per move (as Redis counts them: a script's own commands included) and bytes per
  move (client traffic, and replication traffic on the cluster);
- **streams**: ``--streams`` spectator streams spread over the processes and ``--stream-tables``
  tables, then moves on those tables. Reported: the referee's memory per open stream, events
  delivered per second, and referee CPU per delivered event.

On two shared cores the absolute figures are bounded by the machine (the load generator and
Redis share it); the per-move and per-event costs are what docs/scaling.md builds on. Run:
``python bench/bench_scaleout.py [--processes 1,2,4] [--stores single,cluster] [--tables 48]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import redis
from bench_service import Game, cpu_seconds, create_and_play, plan_game

from dizhu.embedded_redis import EmbeddedRedis, find_redis_server
from dizhu.testing import ServeProcess, serve_process
from dizhu.v1 import cards_pb2, table_pb2, table_service_pb2, table_service_pb2_grpc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the tests package, for its cluster helper
from tests.support.local_cluster import LocalCluster  # noqa: E402 -- after the path to the tests' helper


@dataclass
class Store:
    """A running Redis (one server or a cluster) as the benchmark sees it."""

    name: str
    url: str
    flags: list[str]
    #: Every redis-server process, for CPU; the primaries, for statistics.
    pids: list[int]
    primaries: list[redis.Redis]
    replicas: list[redis.Redis]

    def counters(self) -> dict[str, int]:
        """Commands and bytes, summed over the primaries (``INFO stats``).

        What the replicas received is the replication traffic; the primaries count it in their
        output (Redis 6.2 and 7 alike), so it is taken out of the clients' share.
        """
        total: dict[str, int] = {}
        for client in self.primaries:
            stats = client.info("stats")
            for name in ("total_commands_processed", "total_net_input_bytes", "total_net_output_bytes"):
                total[name] = total.get(name, 0) + int(stats.get(name, 0))
        total["repl_bytes"] = sum(int(client.info("stats")["total_net_input_bytes"]) for client in self.replicas)
        return total

    def used_memory(self) -> int:
        return sum(int(client.info("memory")["used_memory"]) for client in self.primaries)

    def finished_table_keys(self, sample: int = 20) -> dict[str, float]:
        """The memory of a finished table's keys, by kind (``MEMORY USAGE``), averaged over a sample."""
        sizes: dict[str, list[int]] = {}
        for client in self.primaries:
            for state in client.scan_iter(match="dizhu:{t:*}:state", count=1000):
                base = state.decode().rsplit(":", 1)[0]
                for kind in ("state", "events", "records", "answers", "answered"):
                    sizes.setdefault(kind, []).append(int(client.memory_usage(f"{base}:{kind}") or 0))
                if len(sizes["state"]) >= sample:
                    break
        return {kind: statistics.mean(values) for kind, values in sizes.items()}

    def flush(self) -> None:
        for client in self.primaries:
            client.flushall()


@contextlib.contextmanager
def single_store() -> Iterator[Store]:
    with tempfile.TemporaryDirectory() as data, EmbeddedRedis(Path(data), appendonly=True) as server:
        assert server.pid is not None
        yield Store("one Redis", server.url, [], [server.pid], [redis.Redis.from_url(server.url)], [])


@contextlib.contextmanager
def cluster_store() -> Iterator[Store]:
    with LocalCluster(appendonly=True) as cluster:
        pids = [node.server.pid for node in cluster.nodes if node.server is not None and node.server.pid]
        primaries = [redis.Redis(host="127.0.0.1", port=node.port) for node in cluster.primary_nodes()]
        replicas = [
            redis.Redis(host="127.0.0.1", port=node.port)
            for node in cluster.nodes
            if node.port not in {primary.port for primary in cluster.primary_nodes()}
        ]
        yield Store("Redis Cluster 3+3", cluster.url, ["--redis-cluster"], pids, primaries, replicas)


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


@contextlib.contextmanager
def referees(store: Store, count: int) -> Iterator[list[ServeProcess]]:
    flags = [*store.flags, "--log-level", "warning", "--grace", "1"]
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(serve_process(store.url, args=flags)) for _ in range(count)]


async def _moves(targets: list[str], games: list[Game], tables: int) -> tuple[int, float, list[float]]:
    """Play ``games`` on ``tables`` concurrent tables, each table's calls on one of ``targets`` in turn."""
    latencies: list[float] = []
    queue = list(games)
    channels = [grpc.aio.insecure_channel(target) for target in targets]
    stubs = [table_service_pb2_grpc.TableServiceStub(channel) for channel in channels]

    async def worker(index: int) -> int:
        moves = 0
        while queue:
            moves += await create_and_play(stubs[index % len(stubs)], queue.pop(), latencies)
        return moves

    start = time.perf_counter()
    moves = sum(await asyncio.gather(*(worker(index) for index in range(tables))))
    elapsed = time.perf_counter() - start
    for channel in channels:
        await channel.close()
    return moves, elapsed, latencies


async def _streams(targets: list[str], pids: list[int], streams: int, tables: int) -> dict[str, float]:
    """Open ``streams`` spectator streams spread over the referees, then bid on every table for a while."""
    # HTTP/2 caps concurrent streams per connection: spread them over connections of their own.
    channels = [
        grpc.aio.insecure_channel(targets[n % len(targets)], options=[("grpc.use_local_subchannel_pool", 1)])
        for n in range(max(4 * len(targets), streams // 80))
    ]
    stubs = [table_service_pb2_grpc.TableServiceStub(channel) for channel in channels]
    creator = stubs[0]
    settings = table_pb2.TableSettings(variant=cards_pb2.VARIANT_THREE_PLAYER)
    created = [
        await creator.CreateTable(
            table_service_pb2.CreateTableRequest(
                request_id=uuid.uuid4().hex, settings=settings, player_names=["a", "b", "c"]
            )
        )
        for _ in range(tables)
    ]
    rss_before = sum(_rss_kib(pid) for pid in pids)
    ready = asyncio.Semaphore(0)
    delivered = reopened = 0

    async def subscriber(index: int) -> None:
        """One stream, opened again (as a client would) if it fails UNAVAILABLE before it is ready."""
        nonlocal delivered, reopened
        request = table_service_pb2.WatchTableRequest(table_id=created[index % tables].table_id)
        while True:
            try:
                async for message in stubs[index % len(stubs)].WatchTable(request):
                    if message.event.WhichOneof("payload") == "snapshot":
                        ready.release()
                    elif message.event.WhichOneof("payload") != "heartbeat":
                        delivered += 1
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.UNAVAILABLE:
                    raise
                reopened += 1
                await asyncio.sleep(0.1)

    tasks = [asyncio.create_task(subscriber(index)) for index in range(streams)]
    for _ in range(streams):
        await asyncio.wait_for(ready.acquire(), 60)
    await asyncio.sleep(1)
    rss_after = sum(_rss_kib(pid) for pid in pids)
    rng = random.Random(3)
    cpu_before = cpu_seconds(pids)
    start = time.perf_counter()
    moves = 0
    for table in created:  # a whole auction on every table: a few bids each
        tokens = {seat.seat: (("authorization", f"Bearer {seat.token}"),) for seat in table.seat_tokens}
        while True:
            view = (await creator.GetTable(table_service_pb2.GetTableRequest(table_id=table.table_id))).table
            if view.phase != table_pb2.PHASE_AUCTION:
                break
            amount = rng.choice([0, *range(view.highest_bid + 1, 4)])
            request = table_service_pb2.BidRequest(
                table_id=table.table_id, request_id=uuid.uuid4().hex, expected_version=view.version, amount=amount
            )
            await creator.Bid(request, metadata=tokens[view.turn_seat])
            moves += 1
    await asyncio.sleep(1)
    elapsed = time.perf_counter() - start
    cpu = cpu_seconds(pids) - cpu_before
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for channel in channels:
        await channel.close()
    return {
        "kib_per_stream": (rss_after - rss_before) / streams,
        "events_per_s": delivered / elapsed,
        "cpu_us_per_event": cpu / max(1, delivered) * 1e6,
        "moves": moves,
        "delivered": delivered,
        "reopened": reopened,
    }


def run(store: Store, processes: int, games: list[Game], tables: int, streams: int, stream_tables: int) -> None:
    store.flush()
    with referees(store, processes) as running:
        targets = [process.target for process in running]
        pids = [process.process.pid for process in running]
        time.sleep(0.5)
        before, memory_before = store.counters(), store.used_memory()
        cpu_referees, cpu_redis = cpu_seconds(pids), cpu_seconds(store.pids)
        moves, elapsed, latencies = asyncio.run(_moves(targets, games, tables))
        cpu_referees = cpu_seconds(pids) - cpu_referees
        cpu_redis = cpu_seconds(store.pids) - cpu_redis
        after, memory_after = store.counters(), store.used_memory()
        calls = moves + 2 * len(games)  # each game also creates its table (a load and a create)

        def per_call(name: str) -> float:
            return (after[name] - before[name]) / calls

        latencies.sort()
        p50, p99 = statistics.median(latencies) * 1000, latencies[int(0.99 * (len(latencies) - 1))] * 1000
        rate = moves / elapsed
        print(f"  {processes} referee process(es): {rate:7,.0f} moves/s   p50 {p50:5.1f} ms   p99 {p99:6.1f} ms")
        replication = f", {per_call('repl_bytes'):,.0f} B to replicas" if store.replicas else ""
        referee_ms, redis_ms = cpu_referees / calls * 1000, cpu_redis / calls * 1000
        print(
            f"      per move: referee CPU {referee_ms:.2f} ms, Redis CPU {redis_ms:.3f} ms, "
            f"{per_call('total_commands_processed'):.1f} Redis commands, "
            f"{per_call('total_net_input_bytes'):,.0f} B in + "
            f"{per_call('total_net_output_bytes') - per_call('repl_bytes'):,.0f} B out{replication}"
        )
        kept = (memory_after - memory_before) / len(games) / 1024
        parts = ", ".join(f"{kind} {size / 1024:.1f}" for kind, size in store.finished_table_keys().items())
        print(f"      a finished table keeps {kept:.1f} KiB in Redis (KiB by key: {parts})")
        if streams:
            found = asyncio.run(_streams(targets, pids, streams, stream_tables))
            print(
                f"      {streams} streams: {found['kib_per_stream']:.1f} KiB each, "
                f"{found['events_per_s']:,.0f} events/s delivered, "
                f"referee CPU {found['cpu_us_per_event']:.0f} µs per delivered event"
                + (f" ({found['reopened']:.0f} streams opened again after UNAVAILABLE)" if found["reopened"] else "")
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", default="1,2,4", help="numbers of referee processes (default 1,2,4)")
    parser.add_argument("--stores", default="single,cluster", help="single, cluster or both (default both)")
    parser.add_argument("--tables", type=int, default=48, help="tables played concurrently (default 48)")
    parser.add_argument("--games", type=int, default=96, help="complete rounds per configuration (default 96)")
    parser.add_argument("--streams", type=int, default=600, help="spectator streams, 0 for none (default 600)")
    parser.add_argument("--stream-tables", type=int, default=60, help="tables the streams watch (default 60)")
    args = parser.parse_args()
    rng = random.Random(7)
    games = [plan_game(rng) for _ in range(args.games)]
    counts = [int(n) for n in args.processes.split(",")]
    makers = {"single": single_store, "cluster": cluster_store}
    for name in args.stores.split(","):
        with makers[name]() as store:
            print(
                f"{store.name} ({find_redis_server()}): {args.games} complete 3p rounds "
                f"on {args.tables} concurrent tables (AOF on)"
            )
            for processes in counts:
                run(store, processes, games, args.tables, args.streams, args.stream_tables)


if __name__ == "__main__":
    main()
