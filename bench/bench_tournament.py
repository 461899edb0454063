"""Tournament benchmark: games per second through the referee, and what the duplicate format buys.

1. **Throughput.** The bundled bots (heuristic, random, random) play the same duplicate
   tournament against 1 and against 2 embedded referee processes (``dizhu serve`` children
   on one embedded Redis), every game through gRPC and Redis; games/s of the whole run
   (referee start-up excluded) and the ratio of the two.
2. **Duplicate vs random seating.** The same number of games in the duplicate format (each
   deal played by all 6 seatings) and in the random format (a fresh deal per game, seating
   drawn at random), between ``heuristic``, ``random`` and ``greedy`` (a deterministic bot
   defined here: it bids 1 on a joker or two 2s, and always plays its smallest legal
   move); for each pair, the width of the 95% interval of its differential (points per
   game, over blocks: a deal set's games in duplicate, single games in random seating,
   where both entrants of a pair always share the game) and the ratio random / duplicate
   (how much narrower duplicate is), over ``--repeats`` tournament seeds.

Run: ``python bench/bench_tournament.py [--deal-sets 20] [--concurrency 6] [--repeats 2]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from dizhu.client import Bot
from dizhu.tournament import EntrantSpec, load_config, run_tournament
from dizhu.v1 import cards_pb2, rules_service_pb2, table_pb2

PAIRS = (("heuristic", "random"), ("heuristic", "greedy"), ("greedy", "random"))


class Greedy(Bot):
    """Deterministic and simple: bids 1 on a joker or two 2s when nobody has bid; plays its smallest legal move."""

    name = "greedy"

    def choose_bid(self, view: table_pb2.TableView) -> int:
        jokers = sum(card.rank >= cards_pb2.RANK_BLACK_JOKER for card in view.your_hand)
        twos = sum(card.rank == cards_pb2.RANK_TWO for card in view.your_hand)
        return 1 if view.highest_bid == 0 and (jokers or twos >= 2) else 0

    def choose_play(
        self, view: table_pb2.TableView, legal: list[rules_service_pb2.LegalMove], can_pass: bool
    ) -> list[cards_pb2.Card]:
        if not legal:
            return []
        smallest = min(legal, key=lambda m: (m.combination.main_rank, -m.combination.size, list(m.combination.ranks)))
        return list(smallest.cards)


COMPARED = (
    EntrantSpec(name="heuristic", bot="heuristic"),
    EntrantSpec(name="random", bot="random"),
    EntrantSpec(name="greedy", bot="__main__:Greedy"),
)


async def tournament(folder: Path, **overrides: Any) -> tuple[float, float, dict[str, Any]]:
    """Run a tournament (the bundled bots by default) in ``folder``; (games/s, runner CPU ms per game, results)."""
    name = f"bench-{uuid.uuid4().hex[:8]}"
    config = load_config(None, {"name": name, "output": folder / name, **overrides})
    cpu = time.process_time()
    summary = await run_tournament(config, live=False)
    cpu = time.process_time() - cpu
    if summary.results is None or not summary.results["games"]["complete"]:
        raise RuntimeError(f"tournament {name} did not complete")
    return summary.rate, 1000 * cpu / summary.played, summary.results


def width(result: dict[str, Any], a: str, b: str) -> tuple[float, float]:
    """(differential a - b, width of its 95% interval)."""
    pair = next(p for p in result["pairs"] if {p["a"], p["b"]} == {a, b})
    d = pair["differential"]
    sign = 1 if pair["a"] == a else -1
    return sign * d["mean"], d["high"] - d["low"]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deal-sets", type=int, default=20, help="duplicate deal sets (6 games each)")
    parser.add_argument("--concurrency", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=2, help="seeds for the duplicate-vs-random comparison")
    args = parser.parse_args()
    games = 6 * args.deal_sets
    with tempfile.TemporaryDirectory(prefix="bench-tournament-") as tmp:
        folder = Path(tmp)
        print(f"Throughput: {games} games (3p, duplicate, bundled bots), concurrency {args.concurrency}")
        rates = {}
        for referees in (1, 2):
            rate, cpu_ms, _ = await tournament(
                folder, deal_sets=args.deal_sets, concurrency=args.concurrency, embedded_referees=referees
            )
            rates[referees] = rate
            print(f"  {referees} referee process(es): {rate:.2f} games/s; runner CPU {cpu_ms:.0f} ms per game")
        print(f"  2 / 1 referees: {rates[2] / rates[1]:.2f}x")

        print(f"Duplicate vs random seating, {games} games each: differential (points/game) ± half its 95% CI")
        ratios: dict[tuple[str, str], list[float]] = {pair: [] for pair in PAIRS}
        for repeat in range(args.repeats):
            seed = f"bench-{repeat}"
            common = {"seed": seed, "concurrency": args.concurrency, "entrants": COMPARED}
            *_, duplicate = await tournament(folder, deal_sets=args.deal_sets, **common)
            *_, random_seating = await tournament(folder, deal_sets=games, format="random", **common)
            for a, b in PAIRS:
                (d_mean, d_width), (r_mean, r_width) = width(duplicate, a, b), width(random_seating, a, b)
                ratios[a, b].append(r_width / d_width)
                print(
                    f"  seed {seed}, {a} - {b}: duplicate {d_mean:+.2f} ± {d_width / 2:.2f}, "
                    f"random {r_mean:+.2f} ± {r_width / 2:.2f} -> duplicate {r_width / d_width:.2f}x narrower"
                )
        for (a, b), values in ratios.items():
            print(
                f"  {a} - {b}: duplicate narrower by {statistics.fmean(values):.2f}x on average (same number of games)"
            )


if __name__ == "__main__":
    asyncio.run(main())
