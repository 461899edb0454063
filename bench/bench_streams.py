"""Event-stream benchmark: many open streams in one process, idle cost, bursts, fan-out.

``dizhu serve`` and the bare skeleton (``bench/skeleton.py``: a snapshot, events handed over
in-process, a heartbeat per stream after ``--heartbeat`` seconds of quiet, no Redis for
streams) run side by side over one Redis, each in its own process; the load (this process)
measures both in the same run and prints the referee's figures with the skeleton's beside:

1. a burst: ``--streams`` spectator ``WatchTable`` streams over ``--tables`` tables opened at
   once; whether every one got its snapshot, and how long that took;
2. memory: the server's resident memory per open stream;
3. idle: the server's CPU (% of one core) over ``--idle`` seconds with every stream open and
   nothing happening (heartbeats included: the streams received them);
4. fan-out: ``--fanout`` streams on one table, then ``--moves`` moves one at a time (a
   precomputed game, as ``bench_service.py`` plays it), each timed from sending the move to
   each subscriber receiving its event: p50 and p99 over all deliveries, p99 of the last
   subscriber of each move, and the CPU each delivered event cost the server (the moves
   included) and the receiving process (µs).

With ``--lagging N`` it measures one thing instead: a stream that falls behind again and again
in one call. The referee (and ``--before``'s) keeps one event waiting for a stream at most
(``--stream-backlog 1``); a second player joins a table and leaves it at once, ``N`` times,
while the first player's stream follows: when the feed reads both events together, the stream
is handed more than it may hold and starts again from a fresh snapshot (``LAGGING``). Printed
per referee: the restarts its stream made, how the call ended, the time per restart, and the
server's resident memory every 250 restarts (what hours of restarts would add, once the
process's bounded caches are full).

Run: ``python bench/bench_streams.py [--streams 10000] [--tables 100] [--idle 30] [--fanout 1000]``,
or ``python bench/bench_streams.py --lagging 2000 [--before <older checkout>]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_service import Server, _card, cpu_seconds, plan_game, process_family, referee_process, skeleton_process

from dizhu.embedded_redis import EmbeddedRedis
from dizhu.rules import Bid
from dizhu.v1 import cards_pb2, table_pb2, table_service_pb2, table_service_pb2_grpc

#: Streams per client connection (below the referee's per-connection cap, 100 by default).
_PER_CHANNEL = 90


def _rss_kib(pid: int) -> int:
    """The resident memory of ``pid`` and its children (the workers of ``dizhu serve --workers N``)."""
    total = 0
    for process in process_family(pid):
        for line in Path(f"/proc/{process}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total


def _channels(target: str, streams: int) -> list[grpc.aio.Channel]:
    return [
        grpc.aio.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)])
        for _ in range(max(1, math.ceil(streams / _PER_CHANNEL)))
    ]


class Watchers:
    """Streams opened at once, read in the background."""

    def __init__(self, target: str, table_ids: list[str], streams: int) -> None:
        self.channels = _channels(target, streams)
        stubs = [table_service_pb2_grpc.TableServiceStub(channel) for channel in self.channels]
        self.ready = 0
        self.heartbeats = 0
        self.all_ready = asyncio.Event()
        self.arrivals: dict[int, list[float]] = {}
        self._streams = streams
        self.tasks = [
            asyncio.create_task(self._watch(stubs[n % len(stubs)], table_ids[n % len(table_ids)]))
            for n in range(streams)
        ]

    async def _watch(self, stub: table_service_pb2_grpc.TableServiceStub, table_id: str) -> None:
        call = stub.WatchTable(table_service_pb2.WatchTableRequest(table_id=table_id))
        seen = 0
        async for message in call:
            event = message.event
            kind = event.WhichOneof("payload")
            if kind == "snapshot":
                self.ready += 1
                if self.ready == self._streams:
                    self.all_ready.set()
            elif kind == "heartbeat":
                self.heartbeats += 1
            elif event.version > seen:
                seen = event.version
                self.arrivals.setdefault(event.version, []).append(time.perf_counter())

    def failures(self) -> str:
        failed = [t.exception() for t in self.tasks if t.done() and not t.cancelled() and t.exception()]
        codes = sorted({e.code().name for e in failed if isinstance(e, grpc.aio.AioRpcError)})
        return f"{len(failed)} failed ({', '.join(codes) or '-'})"

    async def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        for channel in self.channels:
            await channel.close()


async def _create(stub: table_service_pb2_grpc.TableServiceStub, seed: bytes = b"", dealer: int = 0) -> tuple:
    created = await stub.CreateTable(
        table_service_pb2.CreateTableRequest(
            request_id=uuid.uuid4().hex,
            settings=table_pb2.TableSettings(variant=cards_pb2.VARIANT_THREE_PLAYER, first_dealer=dealer),
            seeds=[seed] if seed else [],
            player_names=["a", "b", "c"],
        )
    )
    tokens = {seat.seat: (("authorization", f"Bearer {seat.token}"),) for seat in created.seat_tokens}
    return created.table_id, created.table.version, tokens


async def burst_and_idle(server: Server, args: argparse.Namespace) -> dict[str, float]:
    async with grpc.aio.insecure_channel(server.target) as channel:
        stub = table_service_pb2_grpc.TableServiceStub(channel)
        table_ids = [(await _create(stub))[0] for _ in range(args.tables)]
    rss = _rss_kib(server.pid)
    start = time.perf_counter()
    watchers = Watchers(server.target, table_ids, args.streams)
    try:
        await asyncio.wait_for(watchers.all_ready.wait(), timeout=180)
    except TimeoutError:
        print(f"  {server.name}: only {watchers.ready} of {args.streams} got their snapshot; {watchers.failures()}")
        await watchers.close()
        return {}
    opened = time.perf_counter() - start
    await asyncio.sleep(2)
    per_stream = (_rss_kib(server.pid) - rss) / args.streams
    cpu, beats = cpu_seconds(process_family(server.pid)), watchers.heartbeats
    await asyncio.sleep(args.idle)
    idle = (cpu_seconds(process_family(server.pid)) - cpu) / args.idle * 100
    beats = (watchers.heartbeats - beats) / args.idle
    await watchers.close()
    return {"opened_s": opened, "kib": per_stream, "idle_pct": idle, "beats": beats}


async def fan_out(server: Server, args: argparse.Namespace, games: Iterator) -> dict[str, float]:
    game = next(games)
    async with grpc.aio.insecure_channel(server.target) as channel:
        stub = table_service_pb2_grpc.TableServiceStub(channel)
        table_id, version, tokens = await _create(stub, game.seed, game.dealer)
        watchers = Watchers(server.target, [table_id], args.fanout)
        await asyncio.wait_for(watchers.all_ready.wait(), timeout=120)
        await asyncio.sleep(1)
        sent: dict[int, float] = {}
        server_cpu, own_cpu = cpu_seconds(process_family(server.pid)), time.process_time()
        for action in game.actions[: args.moves]:
            sent[version + 1] = time.perf_counter()
            if isinstance(action, Bid):
                request = table_service_pb2.BidRequest(
                    table_id=table_id, request_id=uuid.uuid4().hex, expected_version=version, amount=action.amount
                )
                await stub.Bid(request, metadata=tokens[action.seat])
            else:
                cards = [_card(card) for card in action.cards]
                request = table_service_pb2.PlayRequest(
                    table_id=table_id, request_id=uuid.uuid4().hex, expected_version=version, cards=cards
                )
                await stub.Play(request, metadata=tokens[action.seat])
            version += 1
            await asyncio.sleep(0.1)
        await asyncio.sleep(1)
        server_cpu = cpu_seconds(process_family(server.pid)) - server_cpu
        own_cpu = time.process_time() - own_cpu
        await watchers.close()
    delays = sorted(t - sent[v] for v, times in watchers.arrivals.items() if v in sent for t in times)
    lasts = sorted(max(times) - sent[v] for v, times in watchers.arrivals.items() if v in sent)
    complete = sum(len(times) == args.fanout for v, times in watchers.arrivals.items() if v in sent)
    delivered = sum(len(times) for times in watchers.arrivals.values())
    return {
        # CPU per delivered event: the server's (the moves included) and this receiving process's.
        "server_us": server_cpu / delivered * 1e6,
        "receiver_us": own_cpu / delivered * 1e6,
        "p50": statistics.median(delays) * 1000,
        "p99": delays[int(0.99 * (len(delays) - 1))] * 1000,
        "last_p99": lasts[int(0.99 * (len(lasts) - 1))] * 1000,
        "complete": complete,
        "moves": len(sent),
    }


def _row(name: str, figures: dict[str, float], base: dict[str, float], keys: list[tuple[str, str]]) -> str:
    cells = []
    for key, fmt in keys:
        value = figures.get(key, float("nan"))
        ratio = f" ({value / base[key]:.2f}x)" if base.get(key) and base is not figures else ""
        cells.append(f"{key} {fmt.format(value)}{ratio}")
    return f"  {name:>12}: " + "   ".join(cells)


#: Restarts between two readings of the server's memory in ``--lagging``.
_LAGGING_SAMPLE = 250


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def lagging(server: Server, toggles: int) -> tuple[int, str, float, list[tuple[int, int]]]:
    """``toggles`` joins and leaves of seat 1 while seat 0's stream follows (see the docstring): the
    restarts it made, how the call ended, seconds per restart, and the server's RSS (KiB) every
    ``_LAGGING_SAMPLE`` restarts."""
    pb = table_service_pb2
    async with grpc.aio.insecure_channel(server.target) as channel:
        stub = table_service_pb2_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
        created = await stub.CreateTable(
            pb.CreateTableRequest(
                request_id=uuid.uuid4().hex,
                settings=table_pb2.TableSettings(variant=cards_pb2.VARIANT_THREE_PLAYER),
                player_names=["a"],
            )
        )
        seat0 = [("authorization", f"Bearer {created.seat_tokens[0].token}")]
        call = stub.WatchTable(pb.WatchTableRequest(table_id=created.table_id), metadata=seat0)
        await call.read()  # the first snapshot
        restarts, ended, started = 0, "still open", time.perf_counter()
        samples = [(0, _rss_kib(server.pid))]
        try:
            for _ in range(toggles):
                join = pb.JoinTableRequest(table_id=created.table_id, request_id=uuid.uuid4().hex, player_name="b")
                token = (await stub.JoinTable(join)).seat_token
                leave = pb.LeaveTableRequest(table_id=created.table_id, request_id=uuid.uuid4().hex)
                await stub.LeaveTable(leave, metadata=[("authorization", f"Bearer {token}")])
                while True:  # until the stream shows the seat left, in a fresh snapshot or as its event
                    event = (await asyncio.wait_for(call.read(), 30)).event
                    kind = event.WhichOneof("payload")
                    if kind == "snapshot":
                        restarts += 1
                        if restarts % _LAGGING_SAMPLE == 0:
                            samples.append((restarts, _rss_kib(server.pid)))
                        if not event.snapshot.seats[1].occupied:
                            break
                    elif kind == "seat_left":
                        break
        except (grpc.aio.AioRpcError, TimeoutError, AttributeError) as error:
            how = (await call.code()).name if call.done() else type(error).__name__
            ended = f"ended {how} after {restarts} restarts"
        call.cancel()
    return restarts, ended, (time.perf_counter() - started) / max(restarts, 1), samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streams", type=int, default=10_000)
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--idle", type=float, default=30.0, help="seconds of idle measurement (default 30)")
    parser.add_argument("--fanout", type=int, default=1000, help="streams on the one table of the fan-out")
    parser.add_argument("--moves", type=int, default=40, help="moves timed in the fan-out (default 40)")
    parser.add_argument("--heartbeat", type=float, default=20.0, help="both servers' heartbeat (default 20 s)")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--before", type=Path, help="also run the referee of another checkout (an older commit)")
    parser.add_argument("--serve-args", default="", help="further flags for dizhu serve (e.g. '--workers 2')")
    parser.add_argument("--lagging", type=int, default=0, help="only: a stream that restarts this many times")
    args = parser.parse_args()
    if args.lagging:
        _measure_lagging(args)
        return
    rng = random.Random(11)
    games = iter([plan_game(rng) for _ in range(4 * args.repeats)])
    most = str(max(args.streams, args.fanout) + 100)
    flags = ["--log-level", "warning", "--max-streams", most, "--max-watched-tables", most]
    flags += ["--heartbeat", str(args.heartbeat), *args.serve_args.split()]
    with (
        tempfile.TemporaryDirectory() as data,
        EmbeddedRedis(Path(data), appendonly=True) as store,
        contextlib.ExitStack() as stack,
    ):
        skeleton = stack.enter_context(skeleton_process(store.url, ["--heartbeat", str(args.heartbeat)]))
        referee = stack.enter_context(referee_process("dizhu serve", store.url, flags))
        print(f"{args.streams} spectator streams on {args.tables} tables; heartbeat {args.heartbeat:g} s")
        servers = [skeleton, referee]
        if args.before is not None:
            servers.append(stack.enter_context(referee_process("before", store.url, flags, args.before)))
        asyncio.run(_measure(servers, args, games))


def _measure_lagging(args: argparse.Namespace) -> None:
    flags = ["--log-level", "error", "--stream-backlog", "1", "--heartbeat", "3600", *args.serve_args.split()]
    with (
        tempfile.TemporaryDirectory() as data,
        EmbeddedRedis(Path(data), appendonly=False) as store,
        contextlib.ExitStack() as stack,
    ):
        servers = [stack.enter_context(referee_process("dizhu serve", store.url, flags))]
        if args.before is not None:
            servers.append(stack.enter_context(referee_process("before", store.url, flags, args.before)))
        print(f"a seat's stream while a player joins and leaves {args.lagging} times (--stream-backlog 1):")
        for server in servers:
            restarts, ended, seconds, samples = asyncio.run(lagging(server, args.lagging))
            print(f"  {server.name}: {restarts} restarts, the call {ended}; {seconds * 1000:.1f} ms a restart")
            print("    RSS by restarts: " + ", ".join(f"{count:,}: {kib / 1024:.1f} MiB" for count, kib in samples))


async def _measure(servers: list[Server], args: argparse.Namespace, games: Iterator) -> None:
    """Each measurement of every server, in alternating order, the skeleton first in each report."""
    burst = [("opened_s", "{:.1f} s"), ("kib", "{:.1f} KiB/stream"), ("idle_pct", "{:.1f} %"), ("beats", "{:.0f}/s")]
    spread = [("p50", "{:.1f}"), ("p99", "{:.1f}"), ("last_p99", "{:.1f}"), ("complete", "{:.0f}")]
    spread += [("server_us", "{:.0f}"), ("receiver_us", "{:.0f}")]
    for repeat in range(args.repeats):
        order = servers if repeat % 2 == 0 else servers[::-1]
        measured = {server.name: await burst_and_idle(server, args) for server in order}
        print(" burst, memory, idle:")
        for server in servers:
            print(_row(server.name, measured[server.name], measured[servers[0].name], burst))
        measured = {server.name: await fan_out(server, args, games) for server in order}
        print(f" fan-out to {args.fanout} subscribers of one table, {args.moves} moves, ms:")
        for server in servers:
            print(_row(server.name, measured[server.name], measured[servers[0].name], spread))


if __name__ == "__main__":
    main()
