"""Referee service benchmark: Bid/Play through gRPC + Redis, against the bare skeleton in the same run.

Two servers run over one Redis (append-only file on, ``everysec``), each in a process of its
own: ``dizhu serve`` and ``bench/skeleton.py`` -- the same ``TableService.Bid/Play`` through
the same stubs, doing only one Redis read and one Lua compare-and-set per move and no game
logic. The load generator (this process, on the same cores) replays complete 3p games planned
before each phase (tables created with preset seeds and dealer, so no rule work here) on 1 and
on 64 tables at once, alternating skeleton and referee phases, and prints for each phase:

- throughput (moves/s) and the servers' CPU per move (user + system of the server
  process(es), table creation included: one per ~55 moves), each as a ratio of the skeleton's;
- ``--latency``: Bid/Play latency p50/p99/p99.9 at half the referee's highest throughput
  (an open-loop schedule: each move is timed from when it was due), the skeleton at the
  same rate beside it;
- ``--scaling``: ``--workers 2`` against 1 worker (throughput, CPU per move, efficiency, and
  how the CPU split between the worker processes: the load opens several connections, as
  several clients would, and the kernel spreads connections, not calls);
- Redis round trips per move (scripts run, from Redis' command statistics);
- ``--view-bytes N``: the skeleton once more, its responses padded to about N bytes (the
  referee's carry the caller's view, 670 bytes on average in these games), to tell the cost
  of the response's size from the cost of the referee's own work;
- ``--tls``: the referee once more, serving TLS (a certificate made up for the run), and
  its ratio to the plaintext referee.

Every table plays a game never played before, as a referee meets them: the games come from one
seeded stream (a run is reproducible) and none is given twice, to any server. A referee answers
the moves of a game it has seen faster (it remembers the encoded forms of the deals, plays and
views it last handled), so a few hundred games played again and again overstated its speed.

Every ratio is of two figures measured in the same run, repetition by repetition; the
median and the range over ``--repeats`` are printed. Run:
``python bench/bench_service.py [--tables 1,64] [--seconds 5] [--repeats 3] [--latency] [--scaling]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import redis

from dizhu.embedded_redis import EmbeddedRedis
from dizhu.rules import THREE_PLAYER, Action, Bid, Phase, apply, deal, derive_seed, start_round
from dizhu.rules.random_play import random_action
from dizhu.testing import free_port, serve_process
from dizhu.v1 import cards_pb2, table_pb2, table_service_pb2, table_service_pb2_grpc

HERE = Path(__file__).resolve().parent
#: Connections the load opens to a server (fewer with fewer tables in flight).
_CONNECTIONS = 8


@dataclass
class Game:
    seed: bytes
    dealer: int
    #: Every action of every deal of the round, in order.
    actions: list[Action]


def plan_game(rng: random.Random) -> Game:
    """A complete random 3p round, redeals included, as the referee will deal it."""
    seed = rng.randbytes(32)
    dealer = rng.randrange(3)
    actions: list[Action] = []
    redeal = 0
    state = start_round(deal(seed, THREE_PLAYER, dealer))
    while True:
        while not state.is_over:
            action = random_action(state, rng)
            actions.append(action)
            state = apply(state, action).state
        if state.phase is Phase.FINISHED:
            return Game(seed, dealer, actions)
        redeal += 1
        state = start_round(deal(derive_seed(seed, "redeal", redeal), THREE_PLAYER, dealer))


def new_games(seed: int) -> Iterator[Game]:
    """Complete random 3p rounds, one seeded stream: a game is never given twice."""
    rng = random.Random(seed)
    while True:
        yield plan_game(rng)


def _card(card: object) -> cards_pb2.Card:
    rank, suit, copy = card  # type: ignore[misc]
    return cards_pb2.Card(rank=rank + 1, suit=suit + 1, copy=copy)


@dataclass
class Timings:
    """What one phase measured: moves, seconds, and each move's latency by kind."""

    moves: int = 0
    seconds: float = 0.0
    latencies: dict[str, list[float]] = field(default_factory=lambda: {"Bid": [], "Play": []})


class Pace:
    """Due times of an open-loop schedule at ``rate`` moves/s (None: as fast as answered)."""

    def __init__(self, rate: float | None) -> None:
        self._rate = rate
        self._next = time.perf_counter()

    async def due(self) -> float:
        """Wait until the next move is due; when it was due."""
        now = time.perf_counter()
        if self._rate is None:
            return now
        due = self._next = max(self._next + 1 / self._rate, now - 0.05)  # never bank more than 50 ms
        if due > now:
            await asyncio.sleep(due - now)
        return due


@dataclass
class Table:
    table_id: str
    version: int
    tokens: dict[int, tuple[tuple[str, str], ...]]
    game: Game


async def create_table(stub: table_service_pb2_grpc.TableServiceStub, game: Game) -> Table:
    created = await stub.CreateTable(
        table_service_pb2.CreateTableRequest(
            request_id=uuid.uuid4().hex,
            settings=table_pb2.TableSettings(
                variant=cards_pb2.VARIANT_THREE_PLAYER, round_limit=1, first_dealer=game.dealer
            ),
            seeds=[game.seed],
            player_names=["north", "east", "west"],
        )
    )
    tokens = {seat.seat: (("authorization", f"Bearer {seat.token}"),) for seat in created.seat_tokens}
    return Table(created.table_id, created.table.version, tokens, game)


async def play_game(stub: table_service_pb2_grpc.TableServiceStub, table: Table, pace: Pace, out: Timings) -> None:
    version = table.version
    for action in table.game.actions:
        due = await pace.due()
        if isinstance(action, Bid):
            await stub.Bid(
                table_service_pb2.BidRequest(
                    table_id=table.table_id,
                    request_id=uuid.uuid4().hex,
                    expected_version=version,
                    amount=action.amount,
                ),
                metadata=table.tokens[action.seat],
            )
            out.latencies["Bid"].append(time.perf_counter() - due)
        else:
            await stub.Play(
                table_service_pb2.PlayRequest(
                    table_id=table.table_id,
                    request_id=uuid.uuid4().hex,
                    expected_version=version,
                    cards=[_card(card) for card in action.cards],
                ),
                metadata=table.tokens[action.seat],
            )
            out.latencies["Play"].append(time.perf_counter() - due)
        version += 1
        out.moves += 1


async def create_and_play(stub: table_service_pb2_grpc.TableServiceStub, game: Game, latencies: list[float]) -> int:
    """Create ``game``'s table and play it out as fast as answered: the moves made (each move's
    latency appended to ``latencies``). Table creation is timed apart from the moves."""
    timings = Timings()
    await play_game(stub, await create_table(stub, game), Pace(None), timings)
    latencies += timings.latencies["Bid"] + timings.latencies["Play"]
    return timings.moves


@dataclass
class Counters:
    """The server's CPU, Redis' CPU and the scripts Redis ran, so far."""

    cpu: float
    redis_cpu: float
    scripts: int

    @classmethod
    def read(cls, pids: Sequence[int], redis_client: redis.Redis, redis_pid: int) -> Counters:
        return cls(cpu_seconds(pids), cpu_seconds([redis_pid]), _scripts_run(redis_client))

    def __sub__(self, other: Counters) -> Counters:
        return Counters(self.cpu - other.cpu, self.redis_cpu - other.redis_cpu, self.scripts - other.scripts)


async def _phase(
    server: Server,
    games: Iterator[Game],
    tables: int,
    seconds: float,
    rate: float | None,
    counters: Callable[[], Counters],
) -> Measured:
    """Play games on ``tables`` tables at once until ``seconds`` passed (games under way finish).

    Tables are created beforehand (that creation measured on its own); the few created during
    the timed window are subtracted at that cost, so the figures are of Bid and Play alone.
    Their games are planned before the window too, as many again in reserve; a game held in
    reserve and not played is dropped, never played by another phase.
    """
    out = Timings()
    stocked = max(4 * tables, int(seconds * 40))  # about every game the phase will play
    reserve = [next(games) for _ in range(stocked)]
    async with contextlib.AsyncExitStack() as channels:
        # Several connections, as several clients would open: the kernel spreads connections,
        # not calls, over the processes of `dizhu serve --workers N` (each channel its own
        # subchannel pool, else gRPC shares one connection between them).
        stubs = []
        for _ in range(min(tables, _CONNECTIONS)):
            options = [("grpc.use_local_subchannel_pool", 1)]
            channel = await channels.enter_async_context(
                grpc.aio.insecure_channel(server.target, options=options)
                if server.credentials is None
                else grpc.aio.secure_channel(server.target, server.credentials, options=options)
            )
            await channel.channel_ready()
            stubs.append(table_service_pb2_grpc.TableServiceStub(channel))
        before = counters()
        stock = [await create_table(stubs[0], next(games)) for _ in range(stocked)]
        creation = counters() - before
        created_late = 0
        deadline = 0.0

        async def worker(stub: table_service_pb2_grpc.TableServiceStub) -> None:
            nonlocal created_late
            while time.perf_counter() < deadline:
                if not stock:
                    created_late += 1
                table = stock.pop() if stock else await create_table(stub, reserve.pop() if reserve else next(games))
                await play_game(stub, table, pace, out)

        pace = Pace(rate)  # the schedule starts with the timed window
        before = counters()
        start = time.perf_counter()
        deadline = start + seconds
        await asyncio.gather(*(worker(stubs[index % len(stubs)]) for index in range(tables)))
        out.seconds = time.perf_counter() - start
        used = counters() - before
    late = created_late / stocked
    moves = max(1, out.moves)
    return Measured(
        out.moves / out.seconds,
        (used.cpu - late * creation.cpu) / moves * 1000,
        (used.redis_cpu - late * creation.redis_cpu) / moves * 1000,
        (used.scripts - late * creation.scripts) / moves,
        out,
        creation.cpu / stocked * 1000,
    )


def cpu_seconds(pids: Sequence[int]) -> float:
    """User + system CPU time of these processes so far."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def process_family(pid: int) -> list[int]:
    """The process and its children (the worker processes)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [pid, *map(int, children)]


def _scripts_run(client: redis.Redis) -> int:
    """Scripts run so far: every move's load and compare-and-set is one script call each."""
    stats = client.info("commandstats")
    return sum(int(stats.get(name, {}).get("calls", 0)) for name in ("cmdstat_evalsha", "cmdstat_eval"))


@dataclass
class Server:
    name: str
    target: str
    pid: int
    #: How the load reaches it: over TLS with these, else in plaintext.
    credentials: grpc.ChannelCredentials | None = None


@dataclass
class Measured:
    """One phase's figures for one server."""

    moves_per_s: float
    cpu_ms_per_move: float
    redis_cpu_ms_per_move: float
    trips_per_move: float
    timings: Timings
    #: Server CPU per CreateTable (measured apart, never counted in the moves' figures).
    cpu_ms_per_create: float = 0.0


def run_phase(
    server: Server,
    games: Iterator[Game],
    tables: int,
    seconds: float,
    redis_client: redis.Redis,
    redis_pid: int,
    rate: float | None = None,
) -> Measured:
    pids = process_family(server.pid)
    return asyncio.run(
        _phase(server, games, tables, seconds, rate, lambda: Counters.read(pids, redis_client, redis_pid))
    )


@contextlib.contextmanager
def skeleton_process(redis_url: str, flags: Sequence[str] = (), name: str = "skeleton") -> Iterator[Server]:
    target = f"127.0.0.1:{free_port()}"
    command = [sys.executable, str(HERE / "skeleton.py"), "--address", target, "--redis-url", redis_url, *flags]
    process = subprocess.Popen(command, env={**os.environ, "GRPC_VERBOSITY": "ERROR"}, stdin=subprocess.DEVNULL)
    try:
        with grpc.insecure_channel(target) as channel:
            grpc.channel_ready_future(channel).result(timeout=30)
        yield Server(name, target, process.pid)
    finally:
        process.terminate()
        process.wait(timeout=30)


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000


def _spread(values: list[float], fmt: str = "{:.2f}") -> str:
    """Median [min-max] of one figure over the repetitions."""
    median = fmt.format(statistics.median(values))
    if len(values) == 1:
        return median
    return f"{median} [{fmt.format(min(values))}-{fmt.format(max(values))}]"


def compare(
    label: str,
    servers: Sequence[Server],
    games: Iterator[Game],
    tables: int,
    args: argparse.Namespace,
    redis_client: redis.Redis,
    redis_pid: int,
) -> dict[str, list[Measured]]:
    """Alternate phases of ``servers`` (order reversed every repetition); print each one's ratio to the first."""
    results: dict[str, list[Measured]] = {server.name: [] for server in servers}
    for repeat in range(args.repeats):
        for server in servers if repeat % 2 == 0 else reversed(servers):
            results[server.name].append(run_phase(server, games, tables, args.seconds, redis_client, redis_pid))
    base = servers[0].name
    print(f"\n{label}, {tables} table(s) in flight, {args.repeats} x {args.seconds:g} s each, median [range]:")
    for name, phases in results.items():
        print(
            f"  {name:>14}: {_spread([p.moves_per_s for p in phases], '{:,.0f}')} moves/s   "
            f"CPU {_spread([p.cpu_ms_per_move for p in phases], '{:.3f}')} ms/move   "
            f"Redis CPU {_spread([p.redis_cpu_ms_per_move for p in phases], '{:.3f}')} ms/move   "
            f"scripts/move {statistics.median(p.trips_per_move for p in phases):.2f}   "
            f"CPU per CreateTable {statistics.median(p.cpu_ms_per_create for p in phases):.2f} ms"
        )
    for name, phases in list(results.items())[1:]:
        _print_ratio(phases, results[base], f"{name} / {base}")
    return results


def latency(
    servers: Sequence[Server],
    rate: float,
    games: Iterator[Game],
    args: argparse.Namespace,
    redis_client: redis.Redis,
    redis_pid: int,
) -> None:
    print(f"\nlatency at {rate:,.0f} moves/s (half the referee's highest), 64 tables, open loop, ms:")
    results: dict[str, list[Measured]] = {s.name: [] for s in servers}
    for repeat in range(args.repeats):
        for server in servers if repeat % 2 == 0 else reversed(servers):
            results[server.name].append(run_phase(server, games, 64, args.seconds, redis_client, redis_pid, rate=rate))
    for name, phases in results.items():
        for kind in ("Bid", "Play"):
            cells = [_spread([_percentile(p.timings.latencies[kind], q) for p in phases]) for q in (0.5, 0.99, 0.999)]
            print(f"  {name:>12} {kind:>4}: p50 {cells[0]}   p99 {cells[1]}   p99.9 {cells[2]}")
        print(f"  {name:>12} achieved {_spread([p.moves_per_s for p in phases], '{:,.0f}')} moves/s")


@contextlib.contextmanager
def referee_process(
    name: str,
    redis_url: str,
    flags: Sequence[str],
    tree: Path | None = None,
    credentials: grpc.ChannelCredentials | None = None,
) -> Iterator[Server]:
    """``dizhu serve`` from this checkout, or from the ``server/`` and ``clients/python/`` of ``tree``
    (``credentials``: the flags turn TLS on)."""
    if tree is None:
        with serve_process(redis_url, args=flags, credentials=credentials) as started:
            yield Server(name, started.target, started.process.pid, credentials)
        return
    target = f"127.0.0.1:{free_port()}"
    path = os.pathsep.join([str(tree / "server"), str(tree / "clients" / "python")])
    command = [sys.executable, "-m", "dizhu.cli", "serve", "--address", target, "--redis-url", redis_url, *flags]
    env = {**os.environ, "PYTHONPATH": path, "GRPC_VERBOSITY": "ERROR"}
    process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        with grpc.insecure_channel(target) as channel:
            grpc.channel_ready_future(channel).result(timeout=30)
        time.sleep(1)
        yield Server(name, target, process.pid)
    finally:
        process.terminate()
        process.wait(timeout=30)


_TLS = "serve --tls"


@contextlib.contextmanager
def _tls_referee(redis_url: str, flags: Sequence[str], folder: Path) -> Iterator[Server]:
    """``dizhu serve`` with a certificate of an authority made up for the run, and the load trusting it."""
    try:
        import trustme
    except ImportError:
        raise SystemExit("--tls needs trustme to make a certificate: pip install -e '.[test]'") from None
    authority = trustme.CA()
    issued = authority.issue_cert("127.0.0.1")
    cert, key = folder / "bench-cert.pem", folder / "bench-key.pem"
    issued.cert_chain_pems[0].write_to_path(str(cert))
    issued.private_key_pem.write_to_path(str(key))
    credentials = grpc.ssl_channel_credentials(authority.cert_pem.bytes())
    tls_flags = [*flags, "--tls-cert", str(cert), "--tls-key", str(key)]
    with referee_process(_TLS, redis_url, tls_flags, credentials=credentials) as server:
        yield server


def _print_ratio(phases: Sequence[Measured], bases: Sequence[Measured], label: str) -> None:
    pairs = list(zip(bases, phases, strict=True))
    through = [o.moves_per_s / b.moves_per_s for b, o in pairs]
    cpu = [o.cpu_ms_per_move / b.cpu_ms_per_move for b, o in pairs]
    print(f"  {label}: throughput {_spread(through)}x   CPU per move {_spread(cpu)}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", default="1,64", help="tables in flight, comma-separated (default 1,64)")
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each phase (default 5)")
    parser.add_argument("--repeats", type=int, default=3, help="phases per server and load (default 3)")
    parser.add_argument("--latency", action="store_true", help="latency at half the referee's highest throughput")
    parser.add_argument("--scaling", action="store_true", help="--workers 2 against 1 worker, 64 tables")
    parser.add_argument("--serve-args", default="", help="further flags for dizhu serve (e.g. '--limits on')")
    parser.add_argument(
        "--before", type=Path, help="also run the referee of another checkout (e.g. a git worktree of an older commit)"
    )
    parser.add_argument(
        "--view-bytes",
        type=int,
        default=0,
        help="also run the skeleton answering responses of about this size (670: the referee's mean in these games)",
    )
    parser.add_argument(
        "--tls", action="store_true", help="also run the referee serving TLS (--tls-cert; needs trustme, a test extra)"
    )
    args = parser.parse_args()
    games = new_games(seed=7)
    flags = ["--log-level", "warning", *args.serve_args.split()]
    levels = [int(level) for level in args.tables.split(",")]
    with (
        tempfile.TemporaryDirectory() as data,
        EmbeddedRedis(Path(data), appendonly=True) as store,
        contextlib.ExitStack() as stack,
    ):
        redis_client = redis.Redis.from_url(store.url)
        redis_pid = store.pid
        assert redis_pid is not None
        skeleton = stack.enter_context(skeleton_process(store.url))
        referee = stack.enter_context(referee_process("dizhu serve", store.url, flags))
        servers = [skeleton, referee]
        if args.before is not None:
            servers.append(stack.enter_context(referee_process("before", store.url, flags, args.before)))
        if args.view_bytes:
            sized = skeleton_process(store.url, ["--view-bytes", str(args.view_bytes)], "skeleton+view")
            servers.append(stack.enter_context(sized))
        if args.tls:
            servers.append(stack.enter_context(_tls_referee(store.url, flags, Path(data))))
        print("3p games planned before each phase, none played twice; one Redis (AOF everysec); load on the same cores")
        highest = 0.0
        for tables in levels:
            results = compare("skeleton vs referee", servers, games, tables, args, redis_client, redis_pid)
            highest = max(highest, statistics.median(p.moves_per_s for p in results[referee.name]))
            if args.tls:
                _print_ratio(results[_TLS], results[referee.name], f"{_TLS} / {referee.name}")
        if args.latency:
            latency(servers[:2], highest / 2, games, args, redis_client, redis_pid)
        if args.scaling:
            two = stack.enter_context(referee_process("2 workers", store.url, [*flags, "--workers", "2"]))
            time.sleep(2)  # every worker is up, not only the first to answer
            processes = process_family(two.pid)
            cpu_before = [cpu_seconds([pid]) for pid in processes]
            results = compare("1 worker vs 2", [referee, two], games, 64, args, redis_client, redis_pid)
            pairs = zip(results[referee.name], results[two.name], strict=True)
            speedup = statistics.median(o.moves_per_s / b.moves_per_s for b, o in pairs)
            print(f"  efficiency on 2 cores: {speedup / 2:.2f} (speedup {speedup:.2f} with 2 workers)")
            spent = [cpu_seconds([pid]) - before for pid, before in zip(processes, cpu_before, strict=True)]
            shares = sorted((100 * cpu / sum(spent) for cpu in spent if cpu > 0.05 * sum(spent)), reverse=True)
            print(f"  CPU of the 2 workers' processes: {' / '.join(f'{share:.0f} %' for share in shares)}")


if __name__ == "__main__":
    main()
