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

Every measurement is of positions never given before, as a caller meets them: each one draws
its hands, deals and seeds from a stream of its own that goes on from turn to turn (a hand,
a round or a seed is never taken twice; hands are drawn before their batch is timed). A
repeated hand is answered faster than a new one (the native engine keeps what it read of
each card and each play it listed), so where such a cache helps it is measured apart: the
same 500 hands again and again, beside the new ones (``repeated`` in the output). A switch
of engine builds the native engine's rules anew, so each turn first lists the plays of 2,000
hands no measurement draws from, untimed, as a process that has served a while has.

Run: ``python bench/bench_rules.py [--seconds S] [--turns N] [--engines native,python] [--moves-only]``.
Peers that are not installed are reported as such (``pip install -e '.[bench]'`` installs them; DouZero with
``pip install --no-deps douzero``). Figures go into ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import itertools
import platform
import random
import statistics
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers

from dizhu import engine
from dizhu.rules import FOUR_PLAYER, THREE_PLAYER, Variant, legal_moves, make_deck
from dizhu.rules.random_play import random_round

#: A measurement: units per CPU second over about the seconds it is given.
Measure = Callable[[float], float]
_Item = TypeVar("_Item")
#: Positions drawn, untimed, before each timed batch.
_BATCH = 500


def _new_hands(variant: Variant, size: int, seed: int) -> Iterator[list[list[Any]]]:
    """Batches of random hands of ``size`` cards, one stream: a hand is never given twice.

    Drawn with numpy, a batch at a time: drawn one by one in Python a new hand would cost
    several times what the native engine takes to answer it, and the benchmark would spend
    its time making positions."""
    rng = np.random.default_rng(seed)
    deck = list(make_deck(variant.decks))
    while True:
        draws = np.argsort(rng.random((_BATCH, len(deck))), axis=1)[:, :size].tolist()
        yield [[deck[index] for index in draw] for draw in draws]


def _new_follows(variant: Variant, seed: int) -> Iterator[list[tuple[list[Any], Any]]]:
    """Batches of (new hand, a play to beat): the plays to beat are drawn from every lead of 500
    random hands (plays recur in any game; the hands following them are what is new)."""
    hands = _new_hands(variant, variant.hand_size, seed)
    plays = [play for hand in next(hands) for play in legal_moves(hand, None, variant)]
    rng = np.random.default_rng(seed)
    for batch in hands:
        yield [(hand, plays[index]) for hand, index in zip(batch, rng.integers(len(plays), size=_BATCH), strict=True)]


def _rate_on(batches: Iterator[list[_Item]], work: Callable[[list[_Item]], object], seconds: float) -> float:
    """Items per CPU second of ``work(batch)`` over the next batches, for ``seconds``; making a batch is not timed."""
    done = 0
    spent = 0.0
    while spent < seconds:
        batch = next(batches)
        start = peers.clock()
        work(batch)
        spent += peers.clock() - start
        done += len(batch)
    return done / spent


def _rate(run: Callable[[], int], seconds: float) -> float:
    """Units per CPU second of ``run`` (which returns how many units it did), repeated for ``seconds``."""
    done = 0
    start = peers.clock()
    while (elapsed := peers.clock() - start) < seconds:
        done += run()
    return done / elapsed


def _ours_leads(variant: Variant, size: int, *, repeated: bool = False) -> Measure:
    """Hands led per CPU second: new hands, or (``repeated``) the same 500 again and again."""
    batches = _new_hands(variant, size, seed=1)
    if repeated:
        batches = itertools.repeat(next(batches))

    def leads(hands: list[list[Any]]) -> None:
        for hand in hands:
            legal_moves(hand, None, variant)

    return lambda seconds: _rate_on(batches, leads, seconds)


def _warm_up(variant: Variant) -> None:
    """The engine in use made ready as in a process that has served a while: a switch of engine
    builds the native engine's rules anew, with nothing kept of the plays it listed. Hands of a
    stream no measurement draws from, so that what follows measures new positions, not a first use."""
    size = variant.hand_size + variant.kitty_size  # the landlord's hand
    for hands in itertools.islice(_new_hands(variant, size, seed=99), 4):
        for hand in hands:
            legal_moves(hand, None, variant)
    for cases in itertools.islice(_new_follows(variant, seed=98), 1):
        for hand, to_beat in cases:
            legal_moves(hand, to_beat, variant)


def _plays_per_lead(variant: Variant, size: int) -> float:
    hands = next(_new_hands(variant, size, seed=1))
    return sum(len(legal_moves(hand, None, variant)) for hand in hands) / len(hands)


def _ours_follows(variant: Variant) -> Measure:
    """Hands that followed a play per CPU second, on new hands and plays."""
    batches = _new_follows(variant, seed=2)

    def follows(cases: list[tuple[list[Any], Any]]) -> None:
        for hand, to_beat in cases:
            legal_moves(hand, to_beat, variant)

    return lambda seconds: _rate_on(batches, follows, seconds)


def _ours_rounds(variant: Variant) -> Measure:
    """Random rounds per CPU second, every one a new deal."""
    rng = random.Random(3)

    def run() -> int:
        for _ in random_round(variant, rng):
            pass
        return 1

    return lambda seconds: _rate(run, seconds)


def _openspiel_rounds() -> Measure:
    """OpenSpiel's random 3p rounds per CPU second, 100 per run, every one a new deal."""
    return _peer(lambda seed: peers.openspiel_random_rounds(100, seed), 100)


def _batched_rounds(variant: Variant) -> Measure:
    """Random rounds per CPU second played inside the native engine, 200 per call, every call a new seed."""
    seeds = itertools.count(1)
    return lambda seconds: _rate(lambda: engine.random_rounds(variant, next(seeds), 200).rounds, seconds)


def _table_rounds(variant: Variant, engine_name: str) -> Measure:
    """Random rounds per CPU second through the environments' per-action API (section d), every one a new deal."""
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

    return lambda seconds: _rate(run, seconds)


def _measure_tables(seconds: float, turns: int) -> None:
    """Section (d): random rounds through the environments' per-action API, on each engine."""
    print("\n(d) complete random rounds through the per-action API (dizhu.env: start, legal, step)")
    for name in engine.available():
        for variant in (THREE_PLAYER, FOUR_PLAYER):
            rate = _table_rounds(variant, name)(seconds * turns / 2)
            print(f"  dizhu {variant.name} per action, {name:<6} engine     {rate:>9,.0f} rounds/s")
    openspiel = _openspiel_rounds()
    for name in engine.available():
        tables = _table_rounds(THREE_PLAYER, name)
        _compare(
            f"OpenSpiel 3p vs {name} per action",
            lambda tables=tables: tables(seconds),
            lambda: openspiel(seconds),
            "rounds/s",
            turns,
        )


def _peer(run: Callable[[int], float], per_run: int) -> Measure:
    """Units per CPU second of a peer's ``run(seed)``, which times its own ``per_run`` units.

    Peers time themselves so that converting our notation to theirs is not counted. The seeds
    go on from one measurement to the next: a peer is never given the same positions twice.
    """
    seeds = itertools.count()

    def measure(seconds: float) -> float:
        done = 0
        spent = 0.0
        while spent < seconds:
            spent += run(next(seeds))
            done += per_run
        return done / spent

    return measure


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
    _warm_up(THREE_PLAYER)
    _warm_up(FOUR_PLAYER)
    print(f"(a) legal-move generation, {name} engine, new hands")
    lead3, moves3 = _ours_leads(THREE_PLAYER, 20)(alone), _plays_per_lead(THREE_PLAYER, 20)
    print(f"  dizhu 3p lead, 20-card hands          {lead3:>9,.0f} hands/s   ({moves3:.0f} plays per hand)")
    again = _ours_leads(THREE_PLAYER, 20, repeated=True)(alone)
    print(f"  dizhu 3p lead, the same 500 repeated  {again:>9,.0f} hands/s   ({again / lead3:.2f}x the new hands)")
    lead4, moves4 = _ours_leads(FOUR_PLAYER, 33)(alone), _plays_per_lead(FOUR_PLAYER, 33)
    print(f"  dizhu 4p lead, 33-card hands          {lead4:>9,.0f} hands/s   ({moves4:.0f} plays per hand)")
    print(f"  dizhu 3p follow, 17-card hands        {_ours_follows(THREE_PLAYER)(alone):>9,.0f} hands/s")
    print(f"  dizhu 4p follow, 25-card hands        {_ours_follows(FOUR_PLAYER)(alone):>9,.0f} hands/s")
    ours_leads = _ours_leads(THREE_PLAYER, 20)

    def rank_hands(seed: int) -> list[str]:
        return peers.random_hands(_BATCH, seed, 20)

    rlcard_leads = _peer(lambda seed: peers.rlcard_legal_moves_timing(rank_hands(seed)), _BATCH)
    douzero_leads = _peer(lambda seed: peers.douzero_legal_moves_timing(rank_hands(seed)), _BATCH)
    _compare(
        "RLCard 3p lead, 20-card hands", lambda: ours_leads(seconds), lambda: rlcard_leads(seconds), "hands/s", turns
    )
    _compare(
        "DouZero 3p lead, 20-card hands", lambda: ours_leads(seconds), lambda: douzero_leads(seconds), "hands/s", turns
    )

    print(f"\n(b) complete random rounds, {name} engine")
    print(f"  dizhu 3p (deal, auction, play)        {_ours_rounds(THREE_PLAYER)(alone):>9,.0f} rounds/s")
    print(f"  dizhu 4p (deal, auction, play)        {_ours_rounds(FOUR_PLAYER)(alone):>9,.0f} rounds/s")
    ours_rounds = _ours_rounds(THREE_PLAYER)
    rlcard_env = _peer(lambda seed: peers.rlcard_random_rounds(5, seed), 5)
    rlcard_game = _peer(lambda seed: peers.rlcard_random_rounds(10, seed, raw_game=True), 10)
    openspiel = _openspiel_rounds()
    for label, peer in (
        ("RLCard 3p env (no auction)", rlcard_env),
        ("RLCard 3p bare game (no auction)", rlcard_game),
        ("OpenSpiel 3p (C++, from Python)", openspiel),
    ):
        _compare(label, lambda: ours_rounds(seconds), lambda peer=peer: peer(seconds), "rounds/s", turns)
    print()


def _measure_engines_side_by_side(seconds: float, turns: int) -> None:
    """Legal-move generation by the native engine against the pure core, in alternating turns.

    Each engine draws from a stream of its own (the same hands, in the same order, for both);
    the repeated case measures what answering the same 500 hands again is worth apart.
    """
    print("(a) legal-move generation, native engine against the pure core, side by side")
    cases: list[tuple[str, Variant, Callable[[], Measure]]] = [
        ("3p lead, 20-card hands", THREE_PLAYER, lambda: _ours_leads(THREE_PLAYER, 20)),
        ("4p lead, 33-card hands", FOUR_PLAYER, lambda: _ours_leads(FOUR_PLAYER, 33)),
        ("3p follow, 17-card hands", THREE_PLAYER, lambda: _ours_follows(THREE_PLAYER)),
        ("4p follow, 25-card hands", FOUR_PLAYER, lambda: _ours_follows(FOUR_PLAYER)),
        ("3p lead, the same 500 repeated", THREE_PLAYER, lambda: _ours_leads(THREE_PLAYER, 20, repeated=True)),
    ]
    for label, variant, make in cases:
        on_native, on_pure = make(), make()

        def native(measure: Measure = on_native, variant: Variant = variant) -> float:
            with engine.using("native"):
                _warm_up(variant)
                return measure(seconds)

        def pure(measure: Measure = on_pure, variant: Variant = variant) -> float:
            with engine.using("python"):
                _warm_up(variant)
                return measure(seconds)

        _compare(f"pure core {label}", native, pure, "hands/s", turns)
    print()


def _measure_batched(seconds: float, turns: int) -> None:
    """Section (c): rounds played inside the native engine, beside OpenSpiel and the pure core."""
    print("(c) batched random rounds inside the native engine (200 rounds a call, one core)")
    for variant in (THREE_PLAYER, FOUR_PLAYER):
        rate = _batched_rounds(variant)(seconds * turns / 2)
        print(f"  dizhu {variant.name} batched                       {rate:>9,.0f} rounds/s")
    batched, openspiel, pure_rounds = _batched_rounds(THREE_PLAYER), _openspiel_rounds(), _ours_rounds(THREE_PLAYER)

    def pure_core() -> float:
        with engine.using("python"):
            return pure_rounds(seconds)

    _compare("OpenSpiel 3p (C++, from Python)", lambda: batched(seconds), lambda: openspiel(seconds), "rounds/s", turns)
    _compare("pure-Python core 3p, per action", lambda: batched(seconds), pure_core, "rounds/s", turns)


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
