"""The rules engine under the referee: ``RulesService`` calls served by the native and the pure engine.

Two ``dizhu serve`` processes over one embedded Redis, one with ``DIZHU_ENGINE=native`` and one
with ``DIZHU_ENGINE=python``, answer the same ``RulesService`` calls in alternating turns, one
call at a time from this process: ``ListLegalMoves`` of the 33-card four-player hand with about
1,800 legal leads (the largest answer the contract allows, from ``bench_hostile.py``), of random
33-card 4p and 20-card 3p hands, and ``Classify`` of random plays. For each it prints the median
latency of a call and the server's CPU per call (user + system of its process), and the ratio
between the engines, measured turn by turn.

Every random hand or play is asked once: each turn draws new ones (both engines answer the
same), and the servers are warmed on others first, as a referee that has served a while is.
The largest answer is one hand, asked again and again: the engine keeps each play's encoded
entry, so it shows a repeated answer, which random hands of the same size do not.

Run: ``python bench/bench_engine_service.py [--calls 300] [--turns 5]``; figures go into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_hostile import _worst_hand
from bench_service import cpu_seconds

from dizhu.embedded_redis import EmbeddedRedis
from dizhu.rules import FOUR_PLAYER, THREE_PLAYER, legal_moves, make_deck
from dizhu.testing import serve_process
from dizhu.v1 import cards_pb2, rules_service_pb2

ENGINES = ("native", "python")


def _card(card: object) -> cards_pb2.Card:
    rank, suit, copy = card  # type: ignore[misc]
    return cards_pb2.Card(rank=rank + 1, suit=suit + 1 if rank < 13 else cards_pb2.SUIT_JOKER, copy=copy)


def _requests(seed: int, count: int) -> dict[str, list[bytes]]:
    """``count`` requests of each kind, new hands and plays drawn from ``seed``."""
    rng = random.Random(seed)
    deck = list(make_deck(1))
    hands = [rng.sample(deck, 20) for _ in range(count)]
    four_player_deck = list(make_deck(FOUR_PLAYER.decks))
    big_hands = [rng.sample(four_player_deck, 33) for _ in range(count)]
    plays = [rng.choice(legal_moves(hand, None, THREE_PLAYER)) for hand in hands]
    three, four = cards_pb2.VARIANT_THREE_PLAYER, cards_pb2.VARIANT_FOUR_PLAYER
    return {
        "ListLegalMoves, 33-card 4p hand (~1,800 moves), repeated": [
            rules_service_pb2.ListLegalMovesRequest(
                variant=four, hand=cards_pb2.CardSet(cards=_worst_hand())
            ).SerializeToString()
        ],
        "ListLegalMoves, random 33-card 4p hands": [
            rules_service_pb2.ListLegalMovesRequest(
                variant=four, hand=cards_pb2.CardSet(cards=[_card(card) for card in hand])
            ).SerializeToString()
            for hand in big_hands
        ],
        "ListLegalMoves, random 20-card 3p hands": [
            rules_service_pb2.ListLegalMovesRequest(
                variant=three, hand=cards_pb2.CardSet(cards=[_card(card) for card in hand])
            ).SerializeToString()
            for hand in hands
        ],
        "Classify, random 3p plays": [
            rules_service_pb2.ClassifyRequest(
                variant=three,
                cards=cards_pb2.CardSet(cards=[_card(card) for card in hand if card.rank in play.ranks][: play.size]),
            ).SerializeToString()
            for hand, play in zip(hands, plays, strict=True)
        ],
    }


_METHODS = {"ListLegalMoves": "/dizhu.v1.RulesService/ListLegalMoves", "Classify": "/dizhu.v1.RulesService/Classify"}


@contextlib.contextmanager
def _referee(redis_url: str, engine: str) -> Iterator[tuple[grpc.Channel, int]]:
    before = os.environ.get("DIZHU_ENGINE")
    os.environ["DIZHU_ENGINE"] = engine
    try:
        with serve_process(redis_url) as served, grpc.insecure_channel(served.target) as channel:
            yield channel, served.process.pid
    finally:
        if before is None:
            del os.environ["DIZHU_ENGINE"]
        else:
            os.environ["DIZHU_ENGINE"] = before


def _measure(call: Callable[[bytes], bytes], pid: int, requests: list[bytes], calls: int) -> tuple[float, float]:
    """Median latency (ms) and server CPU per call (ms) of ``calls`` calls going through ``requests``
    (each once when there are as many)."""
    latencies = []
    cpu_before = cpu_seconds([pid])
    for i in range(calls):
        start = time.perf_counter()
        call(requests[i % len(requests)])
        latencies.append(time.perf_counter() - start)
    cpu = cpu_seconds([pid]) - cpu_before
    return 1000 * statistics.median(latencies), 1000 * cpu / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=300, help="calls per turn (default 300)")
    parser.add_argument("--turns", type=int, default=5, help="alternating turns per engine (default 5)")
    args = parser.parse_args()
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    labels = list(_requests(seed=0, count=1))
    with EmbeddedRedis(appendonly=False) as redis_server, contextlib.ExitStack() as stack:
        referees = {engine: stack.enter_context(_referee(redis_server.url, engine)) for engine in ENGINES}
        for label, batch in _requests(seed=0, count=200).items():  # warm: fill the rules' tables
            for channel, _ in referees.values():
                call = channel.unary_unary(
                    _METHODS[label.split(",")[0]], request_serializer=None, response_deserializer=None
                )
                for request in batch:
                    call(request)
        for turn in range(1, args.turns + 1):
            for label, batch in _requests(seed=turn, count=args.calls).items():
                for engine, (channel, pid) in referees.items():
                    method = _METHODS[label.split(",")[0]]
                    call = channel.unary_unary(method, request_serializer=None, response_deserializer=None)
                    results.setdefault((label, engine), []).append(_measure(call, pid, batch, args.calls))
    print(f"{args.turns} turns of {args.calls} calls per engine, one call at a time\n")
    print(f"  {'call':<58} {'engine':<7} {'latency p50':>12} {'server CPU/call':>16}")
    for label in labels:
        for engine in ENGINES:
            runs = results[label, engine]
            latency = statistics.median(run[0] for run in runs)
            cpu = statistics.median(run[1] for run in runs)
            print(f"  {label:<58} {engine:<7} {latency:>9.3f} ms {cpu:>13.3f} ms")
        ratios = [py[1] / na[1] for na, py in zip(results[label, "native"], results[label, "python"], strict=True)]
        print(f"  {'':<58} python / native CPU per call: {statistics.median(ratios):.2f}x")


if __name__ == "__main__":
    main()
