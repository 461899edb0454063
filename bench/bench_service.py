"""Referee service benchmark: Play/Bid through gRPC + Redis with many concurrent tables.

The server runs in its own process(es) (``dizhu serve``, with a Redis of its own started
here), the load in this one. Each table is created with preset seeds and dealer, so this
process knows every deal and precomputes complete games with the rules core: the load
sends exactly those actions (no rule work on the client side) and measures each call.
The same actions are then applied in-process with the rules core, for the ratio, and Redis
round trips per move are counted from the server's command statistics.

Run: ``python bench/bench_service.py [--tables 64] [--games 256] [--workers 1]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import grpc
import redis

from dizhu.embedded_redis import EmbeddedRedis
from dizhu.rules import THREE_PLAYER, Action, Bid, Phase, RoundState, apply, deal, derive_seed, start_round
from dizhu.rules.random_play import random_action
from dizhu.testing import serve_process
from dizhu.v1 import cards_pb2, table_pb2, table_service_pb2, table_service_pb2_grpc

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Game:
    seed: bytes
    dealer: int
    #: Every action of every deal of the round, in order.
    actions: list[Action]
    #: The states the actions were applied to (for the in-process comparison).
    states: list[RoundState]


def plan_game(rng: random.Random) -> Game:
    """A complete random 3p round, redeals included, as the referee will deal it."""
    seed = rng.randbytes(32)
    dealer = rng.randrange(3)
    actions: list[Action] = []
    states: list[RoundState] = []
    redeal = 0
    state = start_round(deal(seed, THREE_PLAYER, dealer))
    while True:
        while not state.is_over:
            action = random_action(state, rng)
            actions.append(action)
            states.append(state)
            state = apply(state, action).state
        if state.phase is Phase.FINISHED:
            return Game(seed, dealer, actions, states)
        redeal += 1
        state = start_round(deal(derive_seed(seed, "redeal", redeal), THREE_PLAYER, dealer))


def _card(card: object) -> cards_pb2.Card:
    rank, suit, copy = card  # type: ignore[misc]
    return cards_pb2.Card(rank=rank + 1, suit=suit + 1, copy=copy)


async def play_game(stub: table_service_pb2_grpc.TableServiceStub, game: Game, latencies: list[float]) -> int:
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
    version = created.table.version
    for action in game.actions:
        start = time.perf_counter()
        if isinstance(action, Bid):
            await stub.Bid(
                table_service_pb2.BidRequest(
                    table_id=created.table_id,
                    request_id=uuid.uuid4().hex,
                    expected_version=version,
                    amount=action.amount,
                ),
                metadata=tokens[action.seat],
            )
        else:
            await stub.Play(
                table_service_pb2.PlayRequest(
                    table_id=created.table_id,
                    request_id=uuid.uuid4().hex,
                    expected_version=version,
                    cards=[_card(card) for card in action.cards],
                ),
                metadata=tokens[action.seat],
            )
        latencies.append(time.perf_counter() - start)
        version += 1
    return len(game.actions)


def _cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of these processes so far."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def _family(pid: int) -> list[int]:
    """The process and its children (the worker processes)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [pid, *map(int, children)]


async def _load(target: str, games: list[Game], tables: int) -> tuple[int, float, list[float]]:
    latencies: list[float] = []
    queue = list(games)
    async with grpc.aio.insecure_channel(target) as channel:
        stub = table_service_pb2_grpc.TableServiceStub(channel)
        await channel.channel_ready()

        async def worker() -> int:
            moves = 0
            while queue:
                moves += await play_game(stub, queue.pop(), latencies)
            return moves

        start = time.perf_counter()
        moves = sum(await asyncio.gather(*(worker() for _ in range(tables))))
        return moves, time.perf_counter() - start, latencies


def _round_trips(client: redis.Redis) -> int:
    """Scripts run so far: every request's load and compare-and-set is one script call.

    (Command statistics also count the commands a script runs inside Redis, which are not
    round trips; Bid and Play always carry a request id, so their load is a script too.)
    """
    stats = client.info("commandstats")
    return sum(int(stats.get(name, {}).get("calls", 0)) for name in ("cmdstat_evalsha", "cmdstat_eval"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=64, help="tables played concurrently (default 64)")
    parser.add_argument("--games", type=int, default=256, help="complete rounds to play (default 256)")
    parser.add_argument("--workers", type=int, default=1, help="referee processes sharing the port (default 1)")
    args = parser.parse_args()
    rng = random.Random(7)
    games = [plan_game(rng) for _ in range(args.games)]
    with tempfile.TemporaryDirectory() as data, EmbeddedRedis(Path(data), appendonly=True) as store:
        flags = ["--workers", str(args.workers), "--log-level", "warning"]
        with serve_process(store.url, args=flags) as referee:
            client = redis.Redis.from_url(store.url)
            time.sleep(args.workers)  # every worker is up, not only the first to answer
            pid = referee.process.pid
            before = _round_trips(client)
            cpu_before = _cpu_seconds(_family(pid))
            moves, elapsed, latencies = asyncio.run(_load(referee.target, games, args.tables))
            cpu = _cpu_seconds(_family(pid)) - cpu_before
            trips = _round_trips(client) - before
    start = time.perf_counter()
    for game in games:
        for state, action in zip(game.states, game.actions, strict=True):
            apply(state, action)
    core = time.perf_counter() - start
    latencies.sort()
    p50 = statistics.median(latencies) * 1000
    p99 = latencies[int(0.99 * (len(latencies) - 1))] * 1000
    creations = 2 * len(games)  # each CreateTable: a load and a create
    print(f"{args.games} complete 3p rounds on {args.tables} concurrent tables, {args.workers} referee process(es)")
    print(f"  through gRPC + Redis: {moves / elapsed:8,.0f} moves/s   p50 {p50:.2f} ms   p99 {p99:.2f} ms")
    print(
        f"  rules core in-process: {moves / core:8,.0f} moves/s   (same moves; service / core = {core / elapsed:.4f})"
    )
    print(f"  Redis round trips per move: {(trips - creations) / moves:.2f} (one load, one compare-and-set; AOF on)")
    print(
        f"  referee CPU per call: {cpu / (moves + len(games)) * 1000:.2f} ms (this load generator shares the 2 cores)"
    )


if __name__ == "__main__":
    main()
