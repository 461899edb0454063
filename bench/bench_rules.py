"""Rules-core benchmarks, side by side with peer engines in the same run.

(a) legal-move generation: leading with random 20-card 3p hands and 33-card 4p hands, and
    following a random play with random 17-card hands;
(b) complete random rounds per second through the public API (deal, auction, play with
    uniformly random legal actions), against RLCard's environment and bare game and
    OpenSpiel's C++ ``dou_dizhu`` driven from Python;
(c) batched random rounds played inside the native engine (``dizhu.engine.random_rounds``,
    many rounds per call), against OpenSpiel and the pure core's rounds of (b);
(d) complete random rounds through the environments' per-action API (``dizhu.env``'s game of
    a table: ``start``, ``legal``, ``step(action id)``, a redeal when all pass), on each engine
    (the native one plays the whole round in Rust), against OpenSpiel.

Every dizhu measurement of (a) and (b) is taken once per rules engine (``--engines``, both by
default: the native engine and the pure-Python core, docs/engine.md), each beside the peers.
Where both engines are built, (a) is first measured with the native engine against the pure
core in alternating turns (``--moves-only`` stops there).

Each comparison alternates dizhu and the peer in short turns (``--turns`` of ``--seconds``
each) and prints the median of the per-turn ratios and the middle half of them: on a shared
machine the ratio of one turn is steadier than either rate. Every rate is per CPU second of this process
(``peers.clock``), so time spent waiting for a core on a shared machine counts for nobody.

Run: ``python bench/bench_rules.py [--seconds S] [--turns N] [--engines native,python] [--moves-only]``.
Peers that are not installed are reported as such (``pip install -e '.[bench]'`` installs them; DouZero with
``pip install --no-deps douzero``). Figures go into ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers

from dizhu import engine
from dizhu.rules import FOUR_PLAYER, THREE_PLAYER, Variant, format_ranks, legal_moves, make_deck
from dizhu.rules.random_play import random_round


def _hands(variant: Variant, size: int, count: int, seed: int) -> list[list]:  # type: ignore[type-arg]
    rng = random.Random(seed)
    deck = list(make_deck(variant.decks))
    return [rng.sample(deck, size) for _ in range(count)]


def _rate(run: Callable[[], int], seconds: float) -> float:
    """Units per CPU second of ``run`` (which returns how many units it did), repeated for ``seconds``."""
    done = 0
    start = peers.clock()
    while (elapsed := peers.clock() - start) < seconds:
        done += run()
    return done / elapsed


def _ours_leads(variant: Variant, size: int, seconds: float) -> tuple[float, float]:
    hands = _hands(variant, size, 500, seed=1)
    plays = sum(len(legal_moves(hand, None, variant)) for hand in hands)

    def run() -> int:
        for hand in hands:
            legal_moves(hand, None, variant)
        return len(hands)

    return _rate(run, seconds), plays / len(hands)


def _ours_follows(variant: Variant, seconds: float) -> float:
    rng = random.Random(2)
    deck = list(make_deck(variant.decks))
    cases = []
    for _ in range(500):
        rng.shuffle(deck)
        hand, other = deck[: variant.hand_size], deck[variant.hand_size : 2 * variant.hand_size]
        cases.append((hand, rng.choice(legal_moves(other, None, variant))))

    def run() -> int:
        for hand, to_beat in cases:
            legal_moves(hand, to_beat, variant)
        return len(cases)

    return _rate(run, seconds)


def _ours_rounds(variant: Variant, seconds: float) -> float:
    rng = random.Random(3)

    def run() -> int:
        for _ in random_round(variant, rng):
            pass
        return 1

    return _rate(run, seconds)


def _openspiel_rounds(seconds: float) -> float:
    """OpenSpiel's random 3p rounds per CPU second, 100 per run."""
    return _peer_rate(lambda seed: peers.openspiel_random_rounds(100, seed), 100, seconds)


def _batched_rounds(variant: Variant, seconds: float) -> float:
    """Random rounds per CPU second played inside the native engine, 200 per call."""
    seed = 0

    def run() -> int:
        nonlocal seed
        seed += 1
        return engine.random_rounds(variant, seed, 200).rounds

    return _rate(run, seconds)


def _table_rounds(variant: Variant, engine_name: str, seconds: float) -> float:
    """Random rounds per CPU second through the environments' per-action API (section d)."""
    from dizhu.env.engine import rules
    from dizhu.env.native import make_game

    game = make_game(variant, rules(engine_name))
    rng = random.Random(5)

    def run() -> int:
        game.start(rng.randbytes(32), rng.randrange(variant.players))
        while not game.over:
            legal = game.legal
            game.step(legal[int(rng.random() * len(legal))])
        return 1

    return _rate(run, seconds)


def _measure_tables(seconds: float, turns: int) -> None:
    """Section (d): random rounds through the environments' per-action API, on each engine."""
    print("\n(d) complete random rounds through the per-action API (dizhu.env: start, legal, step)")
    for name in engine.available():
        for variant in (THREE_PLAYER, FOUR_PLAYER):
            rate = _table_rounds(variant, name, seconds * turns / 2)
            print(f"  dizhu {variant.name} per action, {name:<6} engine     {rate:>9,.0f} rounds/s")
    for name in engine.available():

        def tables(name: str = name) -> float:
            return _table_rounds(THREE_PLAYER, name, seconds)

        _compare(f"OpenSpiel 3p vs {name} per action", tables, lambda: _openspiel_rounds(seconds), "rounds/s", turns)


def _peer_rate(run: Callable[[int], float], per_run: int, seconds: float) -> float:
    """Units per CPU second of a peer's ``run(seed)``, which times its own ``per_run`` units, for ``seconds``.

    Peers time themselves so that converting our notation to theirs is not counted.
    """
    done = 0
    spent = 0.0
    seed = 0
    while spent < seconds:
        spent += run(seed)
        done += per_run
        seed += 1
    return done / spent


def _side_by_side(ours: Callable[[], float], peer: Callable[[], float], turns: int) -> tuple[float, float, list[float]]:
    """Rates of ``ours`` and ``peer`` measured in alternation, ``turns`` times each: median rates and each turn's ratio.

        Alternating short turns exposes both to the same load on a shared machine; the ratio of
        one turn is steadier than either rate. Every rate is per CPU second of this process
    (``peers.clock``), so time spent waiting for a core on a shared machine counts for nobody.
    """
    ours_rates: list[float] = []
    peer_rates: list[float] = []
    for _ in range(turns):
        ours_rates.append(ours())
        peer_rates.append(peer())
    ratios = [mine / theirs for mine, theirs in zip(ours_rates, peer_rates, strict=True)]
    return statistics.median(ours_rates), statistics.median(peer_rates), ratios


def _compare(label: str, ours: Callable[[], float], peer: Callable[[], float], unit: str, turns: int) -> None:
    """Print the peer's rate and dizhu's ratio to it, measured side by side; or why the peer did not run."""
    try:
        mine, theirs, ratios = _side_by_side(ours, peer, turns)
    except RuntimeError as missing:  # the peer is not installed
        print(f"  {label:<36} not run: {missing}")
        return
    quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
    print(
        f"  {label:<36} {theirs:>9,.0f} {unit}  dizhu {mine:>9,.0f}   dizhu / peer = {quartiles[1]:5.2f}x"
        f"  (middle half of turns {quartiles[0]:.2f}-{quartiles[2]:.2f})"
    )


def _measure_engine(name: str, seconds: float, turns: int) -> None:
    """Sections (a) and (b) with the rules engine ``name``."""
    alone = seconds * turns / 2  # dizhu-only measurements take as long as half a comparison
    print(f"(a) legal-move generation, {name} engine")
    lead3, moves3 = _ours_leads(THREE_PLAYER, 20, alone)
    print(f"  dizhu 3p lead, 20-card hands          {lead3:>9,.0f} hands/s   ({moves3:.0f} plays per hand)")
    lead4, moves4 = _ours_leads(FOUR_PLAYER, 33, alone)
    print(f"  dizhu 4p lead, 33-card hands          {lead4:>9,.0f} hands/s   ({moves4:.0f} plays per hand)")
    print(f"  dizhu 3p follow, 17-card hands        {_ours_follows(THREE_PLAYER, alone):>9,.0f} hands/s")
    print(f"  dizhu 4p follow, 25-card hands        {_ours_follows(FOUR_PLAYER, alone):>9,.0f} hands/s")
    hands = [format_ranks(card.rank for card in hand) for hand in _hands(THREE_PLAYER, 20, 500, seed=1)]

    def ours_leads() -> float:
        return _ours_leads(THREE_PLAYER, 20, seconds)[0]

    def rlcard_leads() -> float:
        return _peer_rate(lambda _: peers.rlcard_legal_moves_timing(hands), len(hands), seconds)

    def douzero_leads() -> float:
        return _peer_rate(lambda _: peers.douzero_legal_moves_timing(hands), len(hands), seconds)

    _compare("RLCard 3p lead, 20-card hands", ours_leads, rlcard_leads, "hands/s", turns)
    _compare("DouZero 3p lead, 20-card hands", ours_leads, douzero_leads, "hands/s", turns)

    print(f"\n(b) complete random rounds, {name} engine")
    print(f"  dizhu 3p (deal, auction, play)        {_ours_rounds(THREE_PLAYER, alone):>9,.0f} rounds/s")
    print(f"  dizhu 4p (deal, auction, play)        {_ours_rounds(FOUR_PLAYER, alone):>9,.0f} rounds/s")

    def ours_rounds() -> float:
        return _ours_rounds(THREE_PLAYER, seconds)

    def rlcard_env() -> float:
        return _peer_rate(lambda seed: peers.rlcard_random_rounds(5, seed), 5, seconds)

    def rlcard_game() -> float:
        return _peer_rate(lambda seed: peers.rlcard_random_rounds(10, seed, raw_game=True), 10, seconds)

    def openspiel() -> float:
        return _openspiel_rounds(seconds)

    _compare("RLCard 3p env (no auction)", ours_rounds, rlcard_env, "rounds/s", turns)
    _compare("RLCard 3p bare game (no auction)", ours_rounds, rlcard_game, "rounds/s", turns)
    _compare("OpenSpiel 3p (C++, from Python)", ours_rounds, openspiel, "rounds/s", turns)
    print()


def _measure_engines_side_by_side(seconds: float, turns: int) -> None:
    """Legal-move generation by the native engine against the pure core, in alternating turns."""
    print("(a) legal-move generation, native engine against the pure core, side by side")
    cases: list[tuple[str, Callable[[], float]]] = [
        ("3p lead, 20-card hands", lambda: _ours_leads(THREE_PLAYER, 20, seconds)[0]),
        ("4p lead, 33-card hands", lambda: _ours_leads(FOUR_PLAYER, 33, seconds)[0]),
        ("3p follow, 17-card hands", lambda: _ours_follows(THREE_PLAYER, seconds)),
        ("4p follow, 25-card hands", lambda: _ours_follows(FOUR_PLAYER, seconds)),
    ]
    for label, measure in cases:

        def native(measure: Callable[[], float] = measure) -> float:
            with engine.using("native"):
                return measure()

        def pure(measure: Callable[[], float] = measure) -> float:
            with engine.using("python"):
                return measure()

        _compare(f"pure core {label}", native, pure, "hands/s", turns)
    print()


def _measure_batched(seconds: float, turns: int) -> None:
    """Section (c): rounds played inside the native engine, beside OpenSpiel and the pure core."""
    print("(c) batched random rounds inside the native engine (200 rounds a call, one core)")
    for variant in (THREE_PLAYER, FOUR_PLAYER):
        rate = _batched_rounds(variant, seconds * turns / 2)
        print(f"  dizhu {variant.name} batched                       {rate:>9,.0f} rounds/s")

    def batched() -> float:
        return _batched_rounds(THREE_PLAYER, seconds)

    def openspiel() -> float:
        return _openspiel_rounds(seconds)

    def pure_core() -> float:
        with engine.using("python"):
            return _ours_rounds(THREE_PLAYER, seconds)

    _compare("OpenSpiel 3p (C++, from Python)", batched, openspiel, "rounds/s", turns)
    _compare("pure-Python core 3p, per action", batched, pure_core, "rounds/s", turns)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=0.5, help="time per turn of a measurement (default 0.5)")
    parser.add_argument("--turns", type=int, default=10, help="turns taken by dizhu and each peer (default 10)")
    parser.add_argument(
        "--engines", default=",".join(engine.available()), help="rules engines to measure (default: every one built)"
    )
    parser.add_argument(
        "--moves-only", action="store_true", help="only the native engine's legal moves against the pure core's"
    )
    args = parser.parse_args()
    seconds, turns = args.seconds, args.turns
    print(f"python {platform.python_version()} on {platform.machine()}, {turns} turns of {seconds:g} s\n")
    if set(engine.available()) >= {"native", "python"}:
        _measure_engines_side_by_side(seconds, turns)
    if args.moves_only:
        return
    for name in args.engines.split(","):
        with engine.using(name):
            _measure_engine(name, seconds, turns)
    if "native" in engine.available():
        _measure_batched(seconds, turns)
    else:
        print(f"(c) batched random rounds: not run: {engine.native_error()}")
    _measure_tables(seconds, turns)


if __name__ == "__main__":
    main()
