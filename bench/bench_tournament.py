"""Tournament benchmark: games per second through the referee, and what the duplicate format buys.

1. **Throughput.** The bundled bots (heuristic, random, random) play the same duplicate
   tournament against 1 and against 2 embedded referee processes (``dizhu serve`` children
   on one embedded Redis), every game through gRPC and Redis; games/s of the whole run
   (referee start-up excluded) and the ratio of the two.
2. **Duplicate vs random seating.** The same number of games in the duplicate format (each
   deal played by all 6 seatings) and in the random format (a fresh deal per game, seating
   drawn at random); the width of the 95% interval of the heuristic-minus-random
   differential in each, and their ratio (random / duplicate: how much narrower duplicate
   is), repeated over ``--repeats`` tournament seeds.

Run: ``python bench/bench_tournament.py [--deal-sets 20] [--concurrency 6] [--repeats 2]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import uuid
from pathlib import Path
from typing import Any

from dizhu.tournament import load_config, run_tournament


async def tournament(folder: Path, **overrides: Any) -> tuple[float, dict[str, Any]]:
    """Run a tournament of the bundled bots in ``folder``; (games/s while playing, results)."""
    name = f"bench-{uuid.uuid4().hex[:8]}"
    config = load_config(None, {"name": name, "output": folder / name, **overrides})
    summary = await run_tournament(config, live=False)
    if summary.results is None or not summary.results["games"]["complete"]:
        raise RuntimeError(f"tournament {name} did not complete")
    return summary.rate, summary.results


def width(result: dict[str, Any], a: str = "heuristic", b: str = "random") -> tuple[float, float]:
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
            rate, _ = await tournament(
                folder, deal_sets=args.deal_sets, concurrency=args.concurrency, embedded_referees=referees
            )
            rates[referees] = rate
            print(f"  {referees} referee process(es): {rate:.2f} games/s")
        print(f"  2 / 1 referees: {rates[2] / rates[1]:.2f}x")

        print(f"Duplicate vs random seating, {games} games each, heuristic - random (points/game, 95% CI width):")
        ratios = []
        for repeat in range(args.repeats):
            seed = f"bench-{repeat}"
            common = {"seed": seed, "concurrency": args.concurrency}
            _, duplicate = await tournament(folder, deal_sets=args.deal_sets, **common)
            _, random_seating = await tournament(folder, deal_sets=games, format="random", **common)
            (d_mean, d_width), (r_mean, r_width) = width(duplicate), width(random_seating)
            ratios.append(r_width / d_width)
            print(
                f"  seed {seed}: duplicate {d_mean:+.2f} ± {d_width / 2:.2f}, random {r_mean:+.2f} ± {r_width / 2:.2f}"
                f" -> duplicate is {r_width / d_width:.2f}x narrower"
            )
        print(f"  mean narrowing: {statistics.fmean(ratios):.2f}x (same number of games)")


if __name__ == "__main__":
    asyncio.run(main())
