"""Hostile-client benchmark: an attacker sending the worst valid requests at full speed, and an
innocent client's GetTable latency meanwhile.

The referee runs as ``dizhu serve`` in its own process over a Redis started here (AOF on).
The innocent client, in this process, reads its table (``GetTable`` with its seat token) every
``--interval`` ms, first with nobody else calling (idle), then while attackers -- in a process
of their own, each on its own connection, one call at a time, as fast as the referee answers
-- send the most expensive requests the contract lets through:

- ``ListLegalMoves`` of a 33-card four-player hand with ~1,800 moves (the largest answer);
- ``GetReplay`` of a round of 33 deals (the most a round can have: 32 redeals);
- ``CreateTable`` with 1,024 preset seeds and every seat taken (the largest table state);
- ``Play`` of 33 cards at a table that does not exist, and of 10,000 cards (refused by length);
- bytes that are no valid request.

Two configurations, each run in turn: the local defaults (listening on loopback: no per-client
limits, only bounded inputs) and the exposed defaults (``--limits on``, per-client rate
limits; attacker and innocent each with an API key of their own). The innocent's p50/p99 under
attack are reported with their ratio to the idle ones.

Run: ``python bench/bench_hostile.py [--seconds 10] [--attackers 3]``.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import grpc

from dizhu.embedded_redis import EmbeddedRedis
from dizhu.testing import serve_process
from dizhu.v1 import cards_pb2, rules_service_pb2, table_pb2, table_service_pb2, table_service_pb2_grpc

pb = table_service_pb2
_INNOCENT_KEY = "innocent-key"
_ATTACKER_KEY = "attacker-key"
#: A four-player hand with about 1,800 legal leads (many trios in a row, and pairs).
_WORST_RANKS = [0, 0, 1, 1, 2, 2, *[rank for rank in range(3, 10) for _ in range(3)], 10, 10, 11, 11, 12, 12]


def _worst_hand() -> list[cards_pb2.Card]:
    seen: dict[int, int] = {}
    cards = []
    for rank in _WORST_RANKS:
        nth = seen[rank] = seen.get(rank, -1) + 1
        cards.append(cards_pb2.Card(rank=rank + 1, suit=nth % 4 + 1, copy=nth // 4))  # type: ignore[arg-type]
    return cards


def _rid() -> str:
    return uuid.uuid4().hex


async def _big_replay(stub: table_service_pb2_grpc.TableServiceStub, key: tuple[tuple[str, str], ...]) -> str:
    """A four-player table whose first round is 33 thrown-in deals (everybody passes): its id."""
    settings = table_pb2.TableSettings(variant=cards_pb2.VARIANT_FOUR_PLAYER, max_redeals=32, round_limit=1)
    created = await stub.CreateTable(
        pb.CreateTableRequest(request_id=_rid(), settings=settings, player_names=["a", "b", "c", "d"]), metadata=key
    )
    tokens = {seat.seat: (("authorization", f"Bearer {seat.token}"),) for seat in created.seat_tokens}
    view = created.table
    while view.phase != table_pb2.PHASE_CLOSED:
        view = (
            await stub.Bid(
                pb.BidRequest(table_id=view.table_id, request_id=_rid(), expected_version=view.version, amount=0),
                metadata=tokens[view.turn_seat],
            )
        ).table
    return str(created.table_id)


def _attacks(replay_table: str) -> list[tuple[str, str, bytes]]:
    """``(name, method path, request bytes)`` of every attack."""
    four = cards_pb2.VARIANT_FOUR_PLAYER
    ace = cards_pb2.Card(rank=cards_pb2.RANK_ACE, suit=cards_pb2.SUIT_SPADES)
    seeds = [os.urandom(32) for _ in range(1024)]
    table_settings = table_pb2.TableSettings(variant=cards_pb2.VARIANT_THREE_PLAYER)
    return [
        (
            "ListLegalMoves 33 cards",
            "/dizhu.v1.RulesService/ListLegalMoves",
            rules_service_pb2.ListLegalMovesRequest(
                variant=four, hand=cards_pb2.CardSet(cards=_worst_hand())
            ).SerializeToString(),
        ),
        (
            "GetReplay of 33 deals",
            "/dizhu.v1.TableService/GetReplay",
            pb.GetReplayRequest(table_id=replay_table, round=1).SerializeToString(),
        ),
        (
            "CreateTable 1,024 seeds",
            "/dizhu.v1.TableService/CreateTable",
            b"",  # made fresh per call (a new request id each time)
        ),
        (
            "Play 33 cards, no table",
            "/dizhu.v1.TableService/Play",
            pb.PlayRequest(
                table_id="nope", request_id=_rid(), expected_version=1, cards=[ace] * 33
            ).SerializeToString(),
        ),
        (
            "Play 10,000 cards",
            "/dizhu.v1.TableService/Play",
            pb.PlayRequest(
                table_id="nope", request_id=_rid(), expected_version=1, cards=[ace] * 10_000
            ).SerializeToString(),
        ),
        ("undecodable bytes", "/dizhu.v1.TableService/GetTable", b"\x0a\x80" + b"\x13" * 300),
        (
            "_create_template",
            "",
            pb.CreateTableRequest(
                settings=table_settings, seeds=seeds, player_names=["a", "b", "c"]
            ).SerializeToString(),
        ),
    ]


def _attacker(target: str, replay_table: str, seconds: float, callers: int, queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    """The attackers' process: ``callers`` connections, each one call at a time, for ``seconds``."""
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    attacks = _attacks(replay_table)
    template = pb.CreateTableRequest.FromString(attacks.pop()[2])

    async def caller(index: int, counts: Counter[str]) -> None:
        options = [("grpc.use_local_subchannel_pool", 1), ("grpc.max_receive_message_length", 16 << 20)]
        async with grpc.aio.insecure_channel(target, options=options) as channel:
            methods: dict[str, Any] = {}
            until = time.monotonic() + seconds
            turn = index
            while time.monotonic() < until:
                name, path, payload = attacks[turn % len(attacks)]
                turn += 1
                if name.startswith("CreateTable"):
                    template.request_id = _rid()
                    payload = template.SerializeToString()
                method = methods.setdefault(path, channel.unary_unary(path))
                try:
                    await method(payload, metadata=(("x-api-key", _ATTACKER_KEY),), timeout=30)
                    counts[f"{name}: OK"] += 1
                except grpc.aio.AioRpcError as error:
                    counts[f"{name}: {error.code().name}"] += 1

    async def main() -> Counter[str]:
        counts: Counter[str] = Counter()
        await asyncio.gather(*(caller(index, counts) for index in range(callers)))
        return counts

    queue.put(dict(asyncio.run(main())))


async def innocent_reads(
    target: str, table_id: str, token: str, seconds: float, interval_s: float, api_key: str | None = _INNOCENT_KEY
) -> list[float]:
    """GetTable every ``interval_s`` for ``seconds``: each call's latency (s)."""
    latencies: list[float] = []
    metadata = (("authorization", f"Bearer {token}"),) + ((("x-api-key", api_key),) if api_key else ())
    async with grpc.aio.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)]) as channel:
        stub = table_service_pb2_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
        request = pb.GetTableRequest(table_id=table_id)
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            start = time.perf_counter()
            await stub.GetTable(request, metadata=metadata, timeout=30)
            latencies.append(time.perf_counter() - start)
            await asyncio.sleep(interval_s)
    return latencies


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentiles(latencies: list[float]) -> tuple[float, float]:
    """p50 and p99 of ``latencies`` (s), in ms."""
    ordered = sorted(latencies)
    return statistics.median(ordered) * 1000, ordered[int(0.99 * (len(ordered) - 1))] * 1000


async def _prepare(target: str) -> tuple[str, str, str]:
    """The innocent's table and seat token, and the table with the big replay."""
    async with grpc.aio.insecure_channel(target) as channel:
        stub = table_service_pb2_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
        key = (("x-api-key", _INNOCENT_KEY),)
        created = await stub.CreateTable(
            pb.CreateTableRequest(
                request_id=_rid(),
                settings=table_pb2.TableSettings(variant=cards_pb2.VARIANT_THREE_PLAYER),
                player_names=["i", "j", "k"],
            ),
            metadata=key,
        )
        return created.table_id, created.seat_tokens[0].token, await _big_replay(stub, key)


def _run(label: str, redis_url: str, flags: list[str], args: argparse.Namespace) -> None:
    flags = [*flags, "--log-level", "warning", "--api-key", _INNOCENT_KEY, "--api-key", _ATTACKER_KEY]
    with serve_process(redis_url, args=flags) as referee:
        table_id, token, replay_table = asyncio.run(_prepare(referee.target))
        interval = args.interval / 1000
        idle = asyncio.run(innocent_reads(referee.target, table_id, token, args.seconds, interval))
        queue: multiprocessing.Queue = multiprocessing.get_context("spawn").Queue()  # type: ignore[type-arg]
        attackers = multiprocessing.get_context("spawn").Process(
            target=_attacker, args=(referee.target, replay_table, args.seconds + 2, args.attackers, queue)
        )
        attackers.start()
        time.sleep(1.5)  # the attackers are connected and at full speed
        cpu_before = _cpu_seconds(referee.process.pid)
        attacked = asyncio.run(innocent_reads(referee.target, table_id, token, args.seconds, interval))
        cpu = _cpu_seconds(referee.process.pid) - cpu_before
        counts: dict[str, int] = queue.get(timeout=120)
        attackers.join()
    idle_p50, idle_p99 = percentiles(idle)
    p50, p99 = percentiles(attacked)
    print(f"{label}: {args.attackers} attackers, one call at a time each, for {args.seconds:g} s")
    print(f"  innocent GetTable idle:         p50 {idle_p50:7.2f} ms   p99 {idle_p99:7.2f} ms   ({len(idle)} calls)")
    print(f"  innocent GetTable under attack: p50 {p50:7.2f} ms   p99 {p99:7.2f} ms   ({len(attacked)} calls)")
    print(f"  p99 under attack / idle: {p99 / idle_p99:.1f}x   p50: {p50 / idle_p50:.1f}x")
    total = sum(counts.values())
    rate = total / (args.seconds + 2)
    print(f"  attackers' calls: {total} ({rate:,.0f}/s); referee CPU under attack: {cpu / args.seconds:.0%} of a core")
    for outcome, count in sorted(counts.items()):
        print(f"    {outcome:45s} {count:7d}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10, help="length of each phase (default 10)")
    parser.add_argument("--attackers", type=int, default=3, help="attacking connections (default 3)")
    parser.add_argument("--interval", type=float, default=20, help="ms between the innocent's calls (default 20)")
    parser.add_argument(
        "--configs",
        default="local,exposed",
        help="which configurations to run, comma-separated (default local,exposed; local alone also runs an "
        "older referee, for a comparison)",
    )
    args = parser.parse_args()
    configs = {
        "local": ("local defaults (loopback: bounded inputs, no per-client limits)", []),
        "exposed": ("exposed defaults (--limits on: per-client rate limits and quotas)", ["--limits", "on"]),
    }
    with tempfile.TemporaryDirectory() as data, EmbeddedRedis(Path(data), appendonly=True) as store:
        for name in args.configs.split(","):
            label, flags = configs[name]
            _run(label, store.url, flags, args)


if __name__ == "__main__":
    main()
