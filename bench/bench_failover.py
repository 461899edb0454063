"""Failover benchmark: acknowledged moves lost per failover, and what waiting for a replica costs.

For each durability setting of ``dizhu serve`` -- ``primary`` (a move is acknowledged once
Redis's primary has it) and ``replica`` (once a replica has it too: ``WAIT``) -- on a fresh
local Redis Cluster (3 primaries, 1 replica each, ``tests/support/local_cluster.py``):

- **latency**: complete 3p rounds on ``--tables`` concurrent tables through one referee
  (bench_service.py's planned games): moves/s and latency, the two settings side by side;
- **failovers**: ``--failovers`` times, games on ``--tables`` tables through two referees,
  careful clients (``tests/support/resilient_play.py``: ``UNAVAILABLE`` is retried, same
  request id, on the other referee); a primary holding a table is killed (``SIGKILL``), its
  replica takes over, the killed node comes back as a replica. Counted afterwards from
  every table's own record: acknowledged decisions that are missing (lost), decisions
  refused as stale because the table was behind what a client had been told, and the
  ``UNAVAILABLE`` answers met.

Replication on one machine is fast, so the ``primary`` setting rarely loses a move here;
across machines its loss is about (moves/s on the dead primary) x (replication lag).
Run: ``python bench/bench_failover.py [--failovers 3] [--tables 12]``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from pathlib import Path

import grpc
from bench_service import create_and_play, plan_game

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the tests package, for its cluster helpers
from dizhu.store.keys import table_keys  # noqa: E402
from dizhu.v1 import table_service_pb2_grpc  # noqa: E402
from tests.support.local_cluster import LocalCluster  # noqa: E402 -- after the path to the tests' helpers
from tests.support.resilient_play import Record, Referees, create_tables, lost_moves, play_through, read_log  # noqa: E402

SETTINGS = ("primary", "replica")


def _flags(durability: str) -> list[str]:
    return ["--redis-cluster", "--durability", durability, "--replica-timeout", "0.5", "--log-level", "error"]


async def _latency(cluster: LocalCluster, durability: str, tables: int, games: int) -> tuple[float, list[float]]:
    referees = Referees(cluster.url, _flags(durability), 1)
    await referees.start_all()
    try:
        planned = [plan_game(random.Random(n)) for n in range(games)]
        latencies: list[float] = []
        async with grpc.aio.insecure_channel(referees.endpoints[0].target) as channel:
            stub = table_service_pb2_grpc.TableServiceStub(channel)

            async def worker() -> int:
                moves = 0
                while planned:
                    moves += await create_and_play(stub, planned.pop(), latencies)
                return moves

            start = time.perf_counter()
            moves = sum(await asyncio.gather(*(worker() for _ in range(tables))))
            return moves / (time.perf_counter() - start), sorted(latencies)
    finally:
        await referees.aclose()


async def _failover(cluster: LocalCluster, durability: str, tables: int) -> dict[str, float]:
    referees = Referees(cluster.url, _flags(durability), 2)
    await referees.start_all()
    try:
        created = await create_tables(referees.endpoints[0], tables, round_limit=1)
        record = Record()
        switch: dict[str, float] = {}

        async def kill_a_primary() -> None:
            victim = cluster.node_of(table_keys("dizhu", created[0].table_id).state)
            killed = time.perf_counter()
            cluster.kill(victim)
            await asyncio.to_thread(cluster.wait_for_failover, victim)
            switch["promoted_s"] = time.perf_counter() - killed
            await asyncio.to_thread(cluster.restart, victim)

        await play_through(referees, created, record, kill_a_primary, pause_s=0.0)
        lost = 0
        for table in created:
            lost += len(
                lost_moves(record.acknowledged[table.table_id], await read_log(referees.endpoints[0], table.table_id))
            )
        return {
            "acknowledged": sum(len(acks) for acks in record.acknowledged.values()),
            "lost": lost,
            "behind": record.behind,
            "unavailable": record.failures[grpc.StatusCode.UNAVAILABLE],
            "other_failures": sum(
                count for code, count in record.failures.items() if code != grpc.StatusCode.UNAVAILABLE
            ),
            "promoted_s": switch["promoted_s"],
        }
    finally:
        await referees.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--failovers", type=int, default=3, help="failovers per setting (default 3)")
    parser.add_argument("--tables", type=int, default=12, help="tables played at once (default 12)")
    parser.add_argument("--games", type=int, default=48, help="rounds played for the latency figures (default 48)")
    args = parser.parse_args()
    print("latency: one referee over a local Redis Cluster (3+3), complete 3p rounds")
    rates = {}
    with LocalCluster() as cluster:
        for durability in SETTINGS:
            cluster.flush()
            rate, latencies = asyncio.run(_latency(cluster, durability, args.tables, args.games))
            p50, p99 = statistics.median(latencies) * 1000, latencies[int(0.99 * (len(latencies) - 1))] * 1000
            rates[durability] = (rate, p50)
            print(f"  --durability {durability:7}: {rate:6,.0f} moves/s   p50 {p50:.2f} ms   p99 {p99:.2f} ms")
    slower = rates["replica"][1] / rates["primary"][1]
    print(f"  replica / primary: p50 x{slower:.2f}, moves/s x{rates['replica'][0] / rates['primary'][0]:.2f}")
    print(f"failovers: a primary SIGKILLed under {args.tables} tables played through two referees")
    for durability in SETTINGS:
        results = []
        for _ in range(args.failovers):
            with LocalCluster() as cluster:
                results.append(asyncio.run(_failover(cluster, durability, args.tables)))
        total = {name: sum(result[name] for result in results) for name in results[0]}
        print(
            f"  --durability {durability:7}: {total['lost'] / args.failovers:.2f} acknowledged moves lost per failover "
            f"({total['lost']:.0f} of {total['acknowledged']:.0f}), {total['behind']:.0f} refused as stale, "
            f"{total['unavailable'] / args.failovers:.0f} UNAVAILABLE and {total['other_failures']:.0f} other failures "
            f"per failover, replica promoted in {total['promoted_s'] / args.failovers:.1f} s"
        )


if __name__ == "__main__":
    main()
