"""Soak benchmark: a referee's memory while it serves thousands of tables, and after they are gone.

One Redis and ``--processes`` ``dizhu serve`` processes. ``--tables`` one-round 3p tables
are played through gRPC, ``--concurrency`` at a time, spread over the processes; every
``--abandon-every``-th table stops after a few moves and is never finished (as players who
walk away leave them). Each process's resident memory (RSS) is sampled every 0.2 s.
Finished tables expire from Redis after ``--finished-ttl`` seconds; once the load stops the
benchmark waits ``--drain`` seconds, so that every finished table has expired, and reads
RSS again.

Printed per process: RSS at the start (serving, before the first table), after each
``--parts``-th of the tables (quarters by default), at the peak and after the drain, and the
growth per 1,000 tables over the second half of the tables and over the last part (what
a process that runs for months would keep gaining if its memory depended on the tables
served); then Redis' memory and keys before and after. Every per-process memory of tables,
and every cache keyed by values, is bounded by the referees' ``--cached-tables`` (4,096
unless ``--cached-tables`` here sets it; docs/scaling.md, "Every bound of a referee process"):
``--abandon-every 1`` with more tables than that keeps every table live in the caches, the
worst case, and shows the ceiling.
``--watch-every N`` opens a seat's stream on every Nth table while it is played, and closes it.
``--tracemalloc FILE`` runs the referees under tracemalloc with ``bench/soak_probe`` loaded:
after each part each appends its caches' sizes and the lines whose memory grew most to FILE.
Run: ``python bench/bench_soak.py [--tables 4000] [--processes 2] [--parts 4]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import redis
from bench_service import Game, Pace, Timings, create_table, plan_game, play_game

from dizhu.embedded_redis import EmbeddedRedis
from dizhu.testing import ServeProcess, serve_process
from dizhu.v1 import table_service_pb2, table_service_pb2_grpc

#: Moves an abandoned table gets before its players walk away.
_ABANDONED_MOVES = 6


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class RssSampler:
    """Samples the RSS of some processes in a thread: the latest and the peak of each."""

    def __init__(self, pids: list[int], period_s: float = 0.2) -> None:
        self._pids = pids
        self._period_s = period_s
        self.peak = {pid: rss_kib(pid) for pid in pids}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self._period_s):
            self.sample()

    def sample(self) -> dict[int, int]:
        now = {pid: rss_kib(pid) for pid in self._pids}
        for pid, kib in now.items():
            self.peak[pid] = max(self.peak[pid], kib)
        return now

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


async def _play(stub: table_service_pb2_grpc.TableServiceStub, game: Game, *, abandon: bool, watch: bool) -> int:
    """Play ``game`` (its first moves only if ``abandon``), a seat's stream open meanwhile if ``watch``. (moves)"""
    table = await create_table(stub, game)
    if abandon:
        table.game = Game(game.seed, game.dealer, game.actions[:_ABANDONED_MOVES])
    timings = Timings()
    if not watch:
        await play_game(stub, table, Pace(None), timings)
        return timings.moves
    call = stub.WatchTable(table_service_pb2.WatchTableRequest(table_id=table.table_id), metadata=table.tokens[0])
    reading = asyncio.create_task(_read_all(call))
    try:
        await play_game(stub, table, Pace(None), timings)
    finally:
        call.cancel()  # the stream closes, as a client that walks away closes it
        await reading
    return timings.moves


async def _read_all(call: grpc.aio.UnaryStreamCall[Any, Any]) -> None:
    with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
        async for _ in call:
            pass


async def _serve_tables(
    targets: list[str],
    games: list[Game],
    concurrency: int,
    abandon_every: int,
    quarter_done: asyncio.Queue[int],
    parts: int = 4,
    watch_every: int = 0,
) -> tuple[int, int]:
    """Play ``games``; put the count of tables done on ``quarter_done`` at each of ``parts``. (moves, abandoned)."""
    channels = [grpc.aio.insecure_channel(target) for target in targets]
    stubs = [table_service_pb2_grpc.TableServiceStub(channel) for channel in channels]
    pending = list(enumerate(games))
    pending.reverse()
    done = moves = abandoned = 0
    quarters = {len(games) * part // parts for part in range(1, parts + 1)}

    async def worker() -> None:
        nonlocal done, moves, abandoned
        while pending:
            index, game = pending.pop()
            stub = stubs[index % len(stubs)]
            abandon = bool(abandon_every) and index % abandon_every == abandon_every - 1
            # Awaited first: ``moves += await ...`` reads ``moves`` before the await and loses others' moves.
            played = await _play(stub, game, abandon=abandon, watch=bool(watch_every) and index % watch_every == 0)
            moves += played
            abandoned += abandon
            done += 1
            if done in quarters:
                quarter_done.put_nowait(done)

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    for channel in channels:
        await channel.close()
    return moves, abandoned


def _probe(pids: list[int], out: Path | None) -> None:
    """Have each referee append its caches and its allocations' growth to ``out`` (``--tracemalloc``)."""
    if out is not None:
        for pid in pids:
            os.kill(pid, signal.SIGUSR2)


def _table_keys(client: redis.Redis) -> int:
    return sum(1 for _ in client.scan_iter(match="*", count=1000))


@contextlib.contextmanager
def _referees(
    redis_url: str, count: int, finished_ttl_s: int, cached_tables: int | None
) -> Iterator[list[ServeProcess]]:
    flags = ["--log-level", "warning", "--grace", "1", "--finished-ttl", str(finished_ttl_s)]
    if cached_tables is not None:
        flags += ["--cached-tables", str(cached_tables)]
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(serve_process(redis_url, args=flags)) for _ in range(count)]


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=4000)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--abandon-every", type=int, default=5, help="every Nth table is left unfinished (0: none)")
    parser.add_argument("--finished-ttl", type=int, default=10, help="seconds a finished table stays in Redis")
    parser.add_argument("--drain", type=float, default=20.0, help="seconds to wait after the load")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--parts", type=int, default=4, help="RSS is read after each part of the tables (default 4)")
    parser.add_argument("--cached-tables", type=int, help="the referees' --cached-tables (default: theirs)")
    parser.add_argument("--watch-every", type=int, default=0, help="every Nth table has a stream open while played")
    parser.add_argument(
        "--tracemalloc",
        type=Path,
        help="trace the referee's allocations; after each part it appends its caches' sizes and the lines "
        "that grew most to this file (bench/soak_probe)",
    )
    args = parser.parse_args()
    if args.tracemalloc is not None:
        args.tracemalloc.unlink(missing_ok=True)
        probe = str(Path(__file__).resolve().parent / "soak_probe")
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [probe, os.environ.get("PYTHONPATH", "")]))
        os.environ |= {"PYTHONTRACEMALLOC": "1", "DIZHU_SOAK_PROBE": str(args.tracemalloc.resolve())}

    return args


def main() -> None:
    args = _arguments()
    rng = random.Random(args.seed)
    games = [plan_game(rng) for _ in range(args.tables)]
    with (
        EmbeddedRedis(appendonly=False) as embedded,
        _referees(embedded.url, args.processes, args.finished_ttl, args.cached_tables) as referees,
    ):
        client = redis.Redis.from_url(embedded.url)
        pids = [referee.process.pid for referee in referees]
        redis_before = int(client.info("memory")["used_memory"]), _table_keys(client)
        rows: list[tuple[str, dict[int, int]]] = []
        with RssSampler(pids) as sampler:
            rows.append(("start", sampler.sample()))
            _probe(pids, args.tracemalloc)

            async def run() -> tuple[int, int, float]:
                quarters: asyncio.Queue[int] = asyncio.Queue()
                started = time.perf_counter()
                load = asyncio.create_task(
                    _serve_tables(
                        [r.target for r in referees],
                        games,
                        args.concurrency,
                        args.abandon_every,
                        quarters,
                        args.parts,
                        args.watch_every,
                    )
                )
                while not load.done() or not quarters.empty():
                    with contextlib.suppress(TimeoutError):
                        done = await asyncio.wait_for(quarters.get(), 0.5)
                        rows.append((f"after {done:,} tables", sampler.sample()))
                        _probe(pids, args.tracemalloc)
                moves, abandoned = await load
                return moves, abandoned, time.perf_counter() - started

            moves, abandoned, elapsed = asyncio.run(run())
            time.sleep(args.drain)
            rows.append((f"after a {args.drain:g} s drain", sampler.sample()))
            peak = dict(sampler.peak)
        redis_after = int(client.info("memory")["used_memory"]), _table_keys(client)

    print(
        f"{args.tables:,} tables ({abandoned:,} abandoned), {moves:,} moves in {elapsed:.0f} s "
        f"({moves / elapsed:,.0f} moves/s) over {args.processes} referee process(es), "
        f"{args.concurrency} tables at a time"
    )
    header = "".join(f"{f'process {n + 1} RSS':>18}" for n in range(len(pids)))
    print(f"{'':28}{header}")
    for label, sample in [*rows[:-1], ("peak", peak), rows[-1]]:
        print(f"{label:28}" + "".join(f"{sample[pid] / 1024:>15.1f} MiB" for pid in pids))
    parts = args.parts
    second, before_last, last = rows[parts // 2][1], rows[parts - 1][1], rows[parts][1]
    per_thousand = [(last[pid] - second[pid]) / 1024 / (args.tables / 2 / 1000) for pid in pids]
    print(f"{'growth over the 2nd half':28}" + "".join(f"{growth:>+11.2f} MiB/1k tables" for growth in per_thousand))
    last_part = [(last[pid] - before_last[pid]) / 1024 / (args.tables / parts / 1000) for pid in pids]
    print(f"{'growth over the last part':28}" + "".join(f"{growth:>+11.2f} MiB/1k tables" for growth in last_part))
    print(
        f"Redis: {redis_before[0] / 2**20:.1f} MiB, {redis_before[1]} keys before; "
        f"{redis_after[0] / 2**20:.1f} MiB, {redis_after[1]} keys after the drain"
    )


if __name__ == "__main__":
    sys.exit(main())
