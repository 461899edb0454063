"""The bundled bots: how fast the expert decides, and how it fares against the heuristic bot, in one run.

    .venv/bin/python bench/bench_bots.py [--deals 30] [--budget 100ms] [--engines native,python]

* **Decisions per second**: the expert's decisions (bids and plays) on the positions of seeded
  rounds among heuristic bots, at the budget given, in this process's CPU time, on each rules
  engine; the heuristic bot's and the learned bot's on the same positions, as the baselines of the run. How many
  playouts a decision made, on average, says how far the budget went. The positions are new to
  each engine, as a bot meets them: a switch of engine empties what the engine keeps of the
  plays it listed (made anew, they are new to the expert's keys of plays too; the heuristic bot
  keeps nothing), and before the timed decisions each engine is warmed on the positions of
  another round, untimed, as in a bot that has played a while. Both engines get the same
  positions, so that without a time limit they make the same decisions.
* **A quick duplicate** (in this process, ``dizhu.expert.arena``: the views a referee would show):
  ``--deals`` deals, 3p and 4p, each played with the expert in every seat in turn among heuristic
  bots and once with heuristic bots alone (a deal is replayed on purpose: the format cancels
  the luck of the cards); the expert's points per game minus the heuristic's in
  the same seat of the same deal, with a 95 % interval; its share of the deals as landlord, its
  wins and points per game as landlord and as farmer. The tournaments through the referee
  (docs/bots.md) are the measure of record; this is the quick look while tuning.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from dizhu import engine
from dizhu.client import Bot
from dizhu.client.bots import HeuristicBot
from dizhu.env.learned import LearnedBot
from dizhu.expert import search
from dizhu.expert.arena import legal_moves_for, play_round, view_for_seat
from dizhu.expert.bot import ExpertBot, parse_budget
from dizhu.rules import VARIANTS, Bid, Phase, Play, apply, deal, start_round

#: CPU time of this process: other load on a shared machine does not count.
clock = time.process_time


#: Seeds of the rounds whose decisions are timed, and of those that warm an engine up before.
TIMED_SEED, WARM_UP_SEED = 11, 12


def positions(variant: str, rounds: int, seed: int) -> list[tuple[object, list[object], bool, int]]:
    """Every decision of ``rounds`` seeded rounds among heuristic bots: (view, legal moves, can pass, seat)."""
    chosen = VARIANTS[variant]
    bot = HeuristicBot()
    found: list[tuple[object, list[object], bool, int]] = []
    rng = random.Random(seed)
    for _ in range(rounds):
        state = start_round(deal(rng.randbytes(32), chosen, dealer=0))
        while not state.is_over:
            seat = state.turn
            view = view_for_seat(state, seat)
            if state.phase is Phase.AUCTION:
                found.append((view, [], False, seat))
                state = apply(state, Bid(seat, bot.choose_bid(view))).state
                continue
            moves, can_pass = legal_moves_for(state, seat)
            found.append((view, list(moves), can_pass, seat))
            picked = bot.choose_play(view, moves, can_pass)
            held = {(int(c.rank) + 1, int(c.suit) + 1, c.copy): c for c in state.hands[seat]}
            state = apply(state, Play(seat, tuple(held[c.rank, c.suit, c.copy] for c in picked))).state
    return found


def decisions_per_second(make: Callable[[], Bot], found: list[tuple[object, list[object], bool, int]]) -> float:
    bot = make()
    start = clock()
    for view, moves, can_pass, _ in found:
        if moves or can_pass:
            bot.choose_play(view, moves, can_pass)  # type: ignore[arg-type]
        else:
            bot.choose_bid(view)  # type: ignore[arg-type]
    return len(found) / (clock() - start)


@dataclass
class Tally:
    differences: list[float] = field(default_factory=list)
    games: int = 0
    landlord_games: int = 0
    landlord_wins: int = 0
    landlord_points: float = 0.0
    farmer_games: int = 0
    farmer_wins: int = 0
    farmer_points: float = 0.0

    def interval(self) -> tuple[float, float]:
        n = len(self.differences)
        mean = sum(self.differences) / n
        spread = math.sqrt(sum((x - mean) ** 2 for x in self.differences) / max(1, n - 1))
        return mean, 1.96 * spread / math.sqrt(n)


def duplicate(variant: str, deals: int, budget: str) -> Tally:
    chosen = VARIANTS[variant]
    players = chosen.players
    rng = random.Random(2026)
    tally = Tally()
    for number in range(deals):
        seed = rng.randbytes(32)
        alone = play_round(chosen, seed, [HeuristicBot() for _ in range(players)])
        for seat in range(players):
            bots: list[Bot] = [HeuristicBot() for _ in range(players)]
            expert = ExpertBot(number * players + seat, parse_budget(budget))
            bots[seat] = expert
            landlords: list[int] = []
            deltas = play_round(chosen, seed, bots, on_landlord=landlords.append)
            tally.games += 1
            tally.differences.append(deltas[seat] - alone[seat])
            if not landlords:
                continue
            if landlords[0] == seat:
                tally.landlord_games += 1
                tally.landlord_wins += deltas[seat] > 0
                tally.landlord_points += deltas[seat]
            else:
                tally.farmer_games += 1
                tally.farmer_wins += deltas[seat] > 0
                tally.farmer_points += deltas[seat]
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=30, help="deals of the quick duplicate, per variant")
    parser.add_argument("--budget", default="100ms", help="the expert's budget (default: %(default)s, its default)")
    parser.add_argument("--rounds", type=int, default=4, help="rounds whose decisions are timed, per variant")
    parser.add_argument("--engines", default=",".join(engine.available()), help="rules engines to time")
    args = parser.parse_args()
    print(
        f"expert budget {args.budget}; decisions timed on {args.rounds} rounds per variant, CPU time; "
        "the positions new to each engine, warmed on another round's first"
    )
    for variant in ("3p", "4p"):
        found = positions(variant, args.rounds, TIMED_SEED)
        warm_up = positions(variant, 1, WARM_UP_SEED)
        for name in args.engines.split(","):
            with engine.using(name):
                decisions_per_second(lambda: ExpertBot(0, parse_budget(args.budget)), warm_up)
                decisions_per_second(LearnedBot, warm_up)  # its weights loaded, its tables built
                heuristic = decisions_per_second(HeuristicBot, found)
                learned = decisions_per_second(LearnedBot, found)
                search.COUNTED.decisions = search.COUNTED.playouts = 0
                expert = decisions_per_second(lambda: ExpertBot(1, parse_budget(args.budget)), found)
                playouts = search.COUNTED.playouts / max(1, search.COUNTED.decisions)
            print(
                f"  {variant} {name:6}: expert {expert:8.1f} decisions/s ({1000 / expert:6.1f} ms each, "
                f"{playouts:5.1f} playouts a decision); heuristic {heuristic:8.0f}/s; ratio {heuristic / expert:6.0f}; "
                f"learned {learned:6.0f}/s ({1000 / learned:5.2f} ms each)"
            )
    for variant in ("3p", "4p") if args.deals > 0 else ():
        started = time.perf_counter()
        tally = duplicate(variant, args.deals, args.budget)
        mean, half = tally.interval()
        print(
            f"  {variant}: expert - heuristic {mean:+.2f} ± {half:.2f} points/game over {tally.games} games "
            f"({args.deals} deals, each replayed with the expert in every seat); "
            f"landlord in {tally.landlord_games} ({tally.landlord_games / tally.games:.0%}), "
            f"won {tally.landlord_wins}, {tally.landlord_points / max(1, tally.landlord_games):+.2f} points/game; "
            f"farmer in {tally.farmer_games}, won {tally.farmer_wins}, "
            f"{tally.farmer_points / max(1, tally.farmer_games):+.2f} points/game; "
            f"{time.perf_counter() - started:.0f} s"
        )


if __name__ == "__main__":
    main()
