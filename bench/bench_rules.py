"""Rules-core benchmarks, side by side with peer engines in the same run.

(a) legal-move generation: leading with random 20-card 3p hands and 33-card 4p hands, and
    following a random play with random 17-card hands;
(b) complete random rounds per second through the public API (deal, auction, play with
    uniformly random legal actions), against RLCard's environment and bare game and
    OpenSpiel's C++ ``dou_dizhu`` driven from Python.

Run: ``python bench/bench_rules.py [--seconds S]``. Peers that are not installed are
reported as such (``pip install -e '.[bench]'`` installs them; DouZero with
``pip install --no-deps douzero``). Figures go into ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers

from dizhu.rules import FOUR_PLAYER, THREE_PLAYER, Variant, format_ranks, legal_moves, make_deck
from dizhu.rules.random_play import random_round


def _hands(variant: Variant, size: int, count: int, seed: int) -> list[list]:  # type: ignore[type-arg]
    rng = random.Random(seed)
    deck = list(make_deck(variant.decks))
    return [rng.sample(deck, size) for _ in range(count)]


def _rate(run: Callable[[], int], seconds: float) -> float:
    """Units per second of ``run`` (which returns how many units it did), repeated for ``seconds``."""
    done = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
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


def _peer(label: str, measure: Callable[[], float]) -> float | None:
    try:
        return measure()
    except RuntimeError as missing:
        print(f"  {label:<44} not run: {missing}")
        return None


def _row(label: str, rate: float | None, ours: float, unit: str) -> None:
    if rate is None:
        return
    print(f"  {label:<44} {rate:>10,.0f} {unit}   dizhu / peer = {ours / rate:6.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement (default 3)")
    args = parser.parse_args()
    seconds = args.seconds
    print(f"python {platform.python_version()} on {platform.machine()}, {seconds:g} s per measurement\n")

    print("(a) legal-move generation")
    lead3, moves3 = _ours_leads(THREE_PLAYER, 20, seconds)
    print(f"  dizhu 3p lead, 20-card hands               {lead3:>10,.0f} hands/s   ({moves3:.0f} plays per hand)")
    lead4, moves4 = _ours_leads(FOUR_PLAYER, 33, seconds)
    print(f"  dizhu 4p lead, 33-card hands               {lead4:>10,.0f} hands/s   ({moves4:.0f} plays per hand)")
    print(f"  dizhu 3p follow, 17-card hands             {_ours_follows(THREE_PLAYER, seconds):>10,.0f} hands/s")
    print(f"  dizhu 4p follow, 25-card hands             {_ours_follows(FOUR_PLAYER, seconds):>10,.0f} hands/s")
    peer_hands = [format_ranks(card.rank for card in hand) for hand in _hands(THREE_PLAYER, 20, 500, seed=1)]
    rlcard = _peer("RLCard 3p lead", lambda: len(peer_hands) / peers.rlcard_legal_moves_timing(peer_hands))
    _row("RLCard 3p lead, 20-card hands", rlcard, lead3, "hands/s")
    douzero = _peer("DouZero 3p lead", lambda: len(peer_hands) / peers.douzero_legal_moves_timing(peer_hands))
    _row("DouZero 3p lead, 20-card hands", douzero, lead3, "hands/s")

    print("\n(b) complete random rounds")
    rounds3 = _ours_rounds(THREE_PLAYER, seconds)
    print(f"  dizhu 3p (deal, auction, play)             {rounds3:>10,.0f} rounds/s")
    rounds4 = _ours_rounds(FOUR_PLAYER, seconds)
    print(f"  dizhu 4p (deal, auction, play)             {rounds4:>10,.0f} rounds/s")
    env_n = max(20, int(40 * seconds))
    _row(
        "RLCard 3p env (no auction)",
        _peer("RLCard env", lambda: env_n / peers.rlcard_random_rounds(env_n, 1)),
        rounds3,
        "rounds/s",
    )
    raw_n = max(50, int(100 * seconds))
    _row(
        "RLCard 3p bare game (no auction)",
        _peer("RLCard game", lambda: raw_n / peers.rlcard_random_rounds(raw_n, 1, raw_game=True)),
        rounds3,
        "rounds/s",
    )
    os_n = max(500, int(2500 * seconds))
    _row(
        "OpenSpiel 3p (C++, from Python)",
        _peer("OpenSpiel", lambda: os_n / peers.openspiel_random_rounds(os_n, 1)),
        rounds3,
        "rounds/s",
    )


if __name__ == "__main__":
    main()
