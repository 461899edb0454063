"""Tournament benchmark: games per second through the referee, and what the duplicate format buys.

1. **Throughput.** The bundled bots (heuristic, random, random) play a duplicate tournament
   against 1 and against 2 embedded referee processes (``dizhu serve`` children on one
   embedded Redis), every game through gRPC and Redis; games/s of the whole run (referee
   start-up excluded) and the ratio of the two. A duplicate tournament plays each deal in all
   6 seatings (the format's point, and what a referee then meets), so the same number of games
   in the random format, every game a new deal, is measured beside it: their ratio is what
   replaying a deal is worth. Every tournament has a seed of its own: no deal is played by
   two of them.
2. **Duplicate vs random seating.** The same number of games in the duplicate format (each
   deal played by all 6 seatings) and in the random format (a fresh deal per game, seating
   drawn at random), between ``heuristic``, ``random`` and ``greedy`` (a deterministic bot
   defined here: it bids 1 on a joker or two 2s, and always plays its smallest legal
   move); for each pair, the width of the 95% interval of its differential (points per
   game, over blocks: a deal set's games in duplicate, single games in random seating,
   where both entrants of a pair always share the game) and the ratio random / duplicate
   (how much narrower duplicate is), over ``--repeats`` tournament seeds.
3. **Confinement** (``[sandbox]``, docs/tournaments.md). The time to start a process and see
   it exit, plain and confined (bubblewrap, its control groups made and removed), for
   ``/bin/true`` and for this Python; then games/s of one tournament -- heuristic, random
   and a Python stdio bot (plays its first legal move) -- without and with ``[sandbox]``
   (a confined stdio bot is started for every game; an unconfined one serves them all), each
   tournament on deals of its own.

Run: ``python bench/bench_tournament.py [--deal-sets 20] [--concurrency 6] [--repeats 2]
[--only throughput|duplicate|confinement]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from dizhu.client import Bot
from dizhu.tournament import EntrantSpec, load_config, run_tournament
from dizhu.tournament.config import SandboxSpec
from dizhu.tournament.players import EntrantProcess
from dizhu.tournament.sandbox import opened
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


#: A stdio bot (dizhu.stdio/v1) of the confinement benchmark: it passes on bids and plays its first legal move.
STDIO_BOT = """
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    if request["type"] == "bid":
        reply = {"id": request["id"], "bid": 0}
    else:
        legal = request["legal"]
        reply = {"id": request["id"], "cards": "" if request["can_pass"] or not legal else legal[0]}
    print(json.dumps(reply), flush=True)
"""


async def start_and_exit_ms(command: list[str], folder: Path, spec: SandboxSpec, trials: int) -> tuple[float, float]:
    """Median ms from starting ``command`` until it has exited and been cleaned up: (plain, confined with
    ``spec``), the two measured alternately so that the machine's load drifts over both alike."""
    times: dict[bool, list[float]] = {False: [], True: []}
    with opened(spec) as sandbox:
        for trial in range(2 * trials):
            confine = trial % 2 == 1
            started = time.perf_counter()
            if confine:
                argv, env, confined = sandbox.confine(command, folder=folder, game={}, target=None)
                process = await EntrantProcess.start(argv, folder, env, 4096, stdout=False, confined=confined)
            else:
                process = await EntrantProcess.start(command, folder, {}, 4096, stdout=False)
            await process.exited()
            await process.stop()
            times[confine].append(1000 * (time.perf_counter() - started))
    return statistics.median(times[False]), statistics.median(times[True])


async def confinement(folder: Path, deal_sets: int, concurrency: int) -> None:
    bot = folder / "stdio-bot"
    bot.mkdir()
    (bot / "bot.py").write_text(STDIO_BOT)
    python = [sys.executable, "-c", "pass"]
    print("Confinement: start a process and see it exit (median of 30), plain and confined")
    for label, command in (("/bin/true", ["/bin/true"]), ("python -c pass", python)):
        plain, confined = await start_and_exit_ms(command, bot, SandboxSpec(ro_paths=_python_paths()), 30)
        print(f"  {label}: plain {plain:.1f} ms, confined {confined:.1f} ms (+{confined - plain:.1f} ms)")
    entrants = (
        EntrantSpec(name="heuristic", bot="heuristic"),
        EntrantSpec(name="random", bot="random"),
        EntrantSpec(name="stdio", stdio=(sys.executable, "bot.py"), folder=bot),
    )
    games = 6 * deal_sets
    print(f"  {games} games (3p, duplicate: heuristic, random, a Python stdio bot), concurrency {concurrency}")
    rates = {}
    for label, sandbox in (("without [sandbox]", None), ("with [sandbox]", SandboxSpec(ro_paths=_python_paths()))):
        rate, cpu_ms, _ = await tournament(
            folder,
            seed=f"bench-confinement-{sandbox is not None}",
            deal_sets=deal_sets,
            concurrency=concurrency,
            entrants=entrants,
            sandbox=sandbox,
        )
        rates[label] = rate
        print(f"  {label}: {rate:.2f} games/s; runner CPU {cpu_ms:.0f} ms per game")
    print(f"  with / without: {rates['with [sandbox]'] / rates['without [sandbox]']:.2f}x")


def _python_paths() -> tuple[Path, ...]:
    """What this interpreter needs inside a sandbox (its installation and virtualenv), read-only."""
    return tuple(sorted({Path(sys.base_prefix), Path(sys.prefix)}))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deal-sets", type=int, default=20, help="duplicate deal sets (6 games each)")
    parser.add_argument("--concurrency", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=2, help="seeds for the duplicate-vs-random comparison")
    parser.add_argument("--only", choices=["throughput", "duplicate", "confinement"], help="one part only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-tournament-") as tmp:
        folder = Path(tmp)
        if args.only in (None, "throughput"):
            await throughput(folder, args.deal_sets, args.concurrency)
        if args.only in (None, "duplicate"):
            await duplicate_vs_random(folder, args.deal_sets, args.concurrency, args.repeats)
        if args.only in (None, "confinement"):
            await confinement(folder, args.deal_sets, args.concurrency)


#: The throughput's formats: (format, deal sets per 6 games, what the label says of its deals).
THROUGHPUT_FORMATS = (
    ("duplicate", 1, "each deal replayed in all 6 seatings"),
    ("random", 6, "every game a new deal"),
)


async def throughput(folder: Path, deal_sets: int, concurrency: int) -> None:
    print(f"Throughput: {6 * deal_sets} games (3p, bundled bots) per tournament, concurrency {concurrency}")
    rates = {}
    for game_format, sets_per_6_games, deals in THROUGHPUT_FORMATS:
        for referees in (1, 2):
            rate, cpu_ms, _ = await tournament(
                folder,
                seed=f"bench-throughput-{game_format}-{referees}",
                format=game_format,
                deal_sets=deal_sets * sets_per_6_games,
                concurrency=concurrency,
                embedded_referees=referees,
            )
            rates[game_format, referees] = rate
            print(
                f"  {game_format} ({deals}), {referees} referee process(es): {rate:.2f} games/s; "
                f"runner CPU {cpu_ms:.0f} ms per game"
            )
        print(f"  {game_format}: 2 / 1 referees: {rates[game_format, 2] / rates[game_format, 1]:.2f}x")
    for referees in (1, 2):
        replayed = rates["duplicate", referees] / rates["random", referees]
        print(f"  duplicate / random (replayed deals / new deals), {referees} referee process(es): {replayed:.2f}x")


async def duplicate_vs_random(folder: Path, deal_sets: int, concurrency: int, repeats: int) -> None:
    games = 6 * deal_sets
    print(f"Duplicate vs random seating, {games} games each: differential (points/game) ± half its 95% CI")
    ratios: dict[tuple[str, str], list[float]] = {pair: [] for pair in PAIRS}
    for repeat in range(repeats):
        seed = f"bench-{repeat}"
        common = {"seed": seed, "concurrency": concurrency, "entrants": COMPARED}
        *_, duplicate = await tournament(folder, deal_sets=deal_sets, **common)
        *_, random_seating = await tournament(folder, deal_sets=games, format="random", **common)
        for a, b in PAIRS:
            (d_mean, d_width), (r_mean, r_width) = width(duplicate, a, b), width(random_seating, a, b)
            ratios[a, b].append(r_width / d_width)
            print(
                f"  seed {seed}, {a} - {b}: duplicate {d_mean:+.2f} ± {d_width / 2:.2f}, "
                f"random {r_mean:+.2f} ± {r_width / 2:.2f} -> duplicate {r_width / d_width:.2f}x narrower"
            )
    for (a, b), values in ratios.items():
        print(f"  {a} - {b}: duplicate narrower by {statistics.fmean(values):.2f}x on average (same number of games)")


if __name__ == "__main__":
    asyncio.run(main())
