"""Where a move's CPU goes inside the referee: Bid/Play through the servicer, Redis included, gRPC excluded.

Games like those of ``bench/bench_service.py`` (complete precomputed 3p rounds) are replayed in
this one process, table after table, through ``TableServicer`` over a real Redis (AOF on), without
gRPC: each call gets a stand-in context carrying the seat's token. Beside it, in the same run,
the bare skeleton's ``Bid``/``Play`` (``bench/skeleton.py``: one read, one compare-and-set)
replay the same moves the same way. Printed: the CPU per move of both (median [range] over
the passes), then the CPU per move of the referee's parts, each timed around the function
that does it (sync code only: what is left is the Redis client, asyncio and the glue).
Every pass plays games of its own (new deals, new moves): a pass never meets a move an
earlier one left in a cache of this process (a view's encoded history entries, a play read
once), as a referee meets new games.

Run: ``python bench/bench_move_parts.py [--games 60] [--passes 5]``. For an older checkout
``<tree>``: ``PYTHONPATH=<tree>/server:<tree>/clients/python python bench/bench_move_parts.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import functools
import gc
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_service import Game, _card, plan_game
from redis.asyncio import Redis
from skeleton import Skeleton

import dizhu.referee.commands
import dizhu.service.table_servicer
import dizhu.service.unit_of_work
from dizhu.embedded_redis import EmbeddedRedis
from dizhu.rules import Bid
from dizhu.service import convert
from dizhu.service.answers import Answers
from dizhu.service.decoded_tables import DecodedTables
from dizhu.service.feeds import TableFeeds
from dizhu.service.metadata import Credentials
from dizhu.service.presence import Presence
from dizhu.service.table_servicer import TableServicer
from dizhu.service.tables import TableWork
from dizhu.service.unit_of_work import UnitOfWork
from dizhu.store import TableStore
from dizhu.store.connection import connect
from dizhu.v1 import cards_pb2, table_pb2
from dizhu.v1 import table_service_pb2 as pb

#: (part, owner of the function, its name): the sync functions timed, by the part they do.
_PARTS = [
    ("the caller's view", convert, "table_view"),
    ("the referee command (rules, flow)", dizhu.referee.commands, "play"),
    ("the referee command (rules, flow)", dizhu.referee.commands, "bid"),
    ("state encoding (and decoding)", dizhu.service.unit_of_work, "encode"),
    ("state encoding (and decoding)", DecodedTables, "decode"),
    ("events", UnitOfWork, "_events"),
    ("answer fingerprint and seal", dizhu.service.unit_of_work, "fingerprint"),
    ("answer fingerprint and seal", Answers, "seal"),
    ("presence bookkeeping (its Redis calls excluded)", Presence, "predicted"),
    ("presence bookkeeping (its Redis calls excluded)", dizhu.service.unit_of_work, "mark_presence"),
    ("credentials, seat resolution", dizhu.service.unit_of_work, "resolve"),
    ("credentials, seat resolution", dizhu.service.table_servicer, "credentials"),
    ("credentials, seat resolution", Credentials, "token"),
]


class _Context:
    """What the servicer reads of a gRPC context: the call's metadata."""

    def __init__(self, metadata: tuple[tuple[str, str], ...] = ()) -> None:
        self._metadata = metadata

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata

    def peer(self) -> str:
        return "ipv4:127.0.0.1:1"

    async def abort_with_status(self, status: object) -> None:
        raise RuntimeError(f"the benchmark's move was refused: {status}")


Move = tuple[str, Any, _Context]


async def _referee_moves(servicer: TableServicer, games: list[Game]) -> list[Move]:
    moves: list[Move] = []
    for game in games:
        settings = table_pb2.TableSettings(
            variant=cards_pb2.VARIANT_THREE_PLAYER, round_limit=1, first_dealer=game.dealer
        )
        created = await servicer.CreateTable(
            pb.CreateTableRequest(
                request_id=uuid.uuid4().hex, settings=settings, seeds=[game.seed], player_names=["n", "e", "w"]
            ),
            _Context(),  # type: ignore[arg-type]  # what the servicer reads of a context
        )
        seats = {s.seat: _Context((("authorization", f"Bearer {s.token}"),)) for s in created.seat_tokens}
        version = created.table.version
        for action in game.actions:
            moves.append(_move(created.table_id, version, action, seats[action.seat]))
            version += 1
    return moves


async def _skeleton_moves(skeleton: Skeleton, games: list[Game]) -> list[Move]:
    moves: list[Move] = []
    for game in games:
        created = await skeleton.CreateTable(pb.CreateTableRequest(request_id=uuid.uuid4().hex), None)
        for version, action in enumerate(game.actions, start=created.table.version):
            moves.append(_move(created.table_id, version, action, _Context()))
    return moves


def _move(table_id: str, version: int, action: Any, context: _Context) -> Move:
    request_id = uuid.uuid4().hex
    if isinstance(action, Bid):
        return (
            "Bid",
            pb.BidRequest(table_id=table_id, request_id=request_id, expected_version=version, amount=action.amount),
            context,
        )
    cards = [_card(card) for card in action.cards]
    return (
        "Play",
        pb.PlayRequest(table_id=table_id, request_id=request_id, expected_version=version, cards=cards),
        context,
    )


async def _replay(target: Any, moves: list[Move]) -> float:
    """CPU µs per move of making ``moves``, one after the other."""
    started = time.process_time()
    for method, request, context in moves:
        await getattr(target, method)(request, context)
    return (time.process_time() - started) / len(moves) * 1e6


async def _pass(url: str, games: list[Game]) -> tuple[float, float]:
    """One pass: the referee's and the skeleton's CPU µs per move."""
    client = connect(url, cluster=False, max_connections=256, wait_for_connection=True)
    plain = Redis.from_url(url)
    try:
        store = TableStore(client)
        await store.load_scripts()
        tables = TableWork.build(store)
        servicer = TableServicer(tables.changes, tables.reads, store, TableFeeds(store))
        skeleton = Skeleton(plain, 2000, 120)
        referee_moves = await _referee_moves(servicer, games)
        skeleton_moves = await _skeleton_moves(skeleton, games)
        return await _replay(servicer, referee_moves), await _replay(skeleton, skeleton_moves)
    finally:
        await client.aclose()
        await plain.aclose()


def _timed(spent: collections.Counter[str], part: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent[part] += time.perf_counter() - started

    return timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=60, help="games per pass (default 60, about 3,900 moves)")
    parser.add_argument("--passes", type=int, default=5, help="passes (default 5)")
    args = parser.parse_args()
    rng = random.Random(7)  # the games of bench_service.py first, then new ones for every pass

    def new_games() -> list[Game]:
        return [plan_game(rng) for _ in range(args.games)]

    # As dizhu serve runs: start-up objects frozen, young objects collected every 10,000 allocations.
    gc.freeze()
    gc.set_threshold(10_000, *gc.get_threshold()[1:])
    with tempfile.TemporaryDirectory() as data, EmbeddedRedis(Path(data), appendonly=True) as redis_server:
        url = redis_server.url
        totals = [asyncio.run(_pass(url, new_games())) for _ in range(args.passes)]
        spent: collections.Counter[str] = collections.Counter()
        for part, owner, name in _PARTS:
            setattr(owner, name, _timed(spent, part, getattr(owner, name)))
        games = new_games()
        moves = sum(len(game.actions) for game in games)
        timed_referee, _ = asyncio.run(_pass(url, games))
    referee = [pair[0] for pair in totals]
    skeleton = [pair[1] for pair in totals]
    print(
        f"{args.games} new games a pass (the timed one: {moves} moves), {args.passes} passes; "
        "CPU µs per move, median [range]:"
    )
    print(f"  referee:  {statistics.median(referee):.0f} [{min(referee):.0f}-{max(referee):.0f}]")
    print(f"  skeleton: {statistics.median(skeleton):.0f} [{min(skeleton):.0f}-{max(skeleton):.0f}]")
    print(f"parts of the referee's move (one more pass, timed: {timed_referee:.0f} µs per move):")
    for part, seconds in spent.most_common():
        print(f"  {part:<50} {seconds / moves * 1e6:6.1f}")
    print(f"  {'the rest (Redis client, asyncio, glue)':<50} {timed_referee - sum(spent.values()) / moves * 1e6:6.1f}")


if __name__ == "__main__":
    main()
