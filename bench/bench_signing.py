"""Signing cost: what signing a round's record adds to the move that ends the round.

Complete random rounds (3p and 4p, redeals included) are played through the rules core and
written as the referee writes them (``replay_json``: the record the move that ends a round
already builds); then, in the same run, on the same records:

- ``record``: writing the record (``replay_json``), the work that move did before signing;
- ``sign``: what the unit of work now adds before storing it (``SigningKeys.sign``: parse the
  record, its canonical form, the Ed25519 signature, the signed record written again), and
  its parts: ``parse``, ``canonical`` (orjson's sorted compact form), ``ed25519`` (the
  signature alone, over the canonical bytes) and ``dump``;
- ``rfc8785``: the pure-Python RFC 8785 serialiser on the same record (what the referee does
  not run on the move: the verifier does);
- ``verify`` and ``verify --key``: ``dizhu verify``'s check without and with the key.

Printed: the CPU microseconds per record (process time, so that other processes on a shared
machine do not count), as the median and range over ``--repeats``, and the ratio of ``sign``
to ``record`` per repetition; then the signing cost spread over a round's moves.
Run: ``python bench/bench_signing.py [--rounds 40] [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import orjson
import rfc8785

from dizhu.referee.replay import DealRecord, Timing, replay_json, verify
from dizhu.referee.signing import SigningKeys, _referee_canonical_form
from dizhu.rules import (
    FOUR_PLAYER,
    THREE_PLAYER,
    HouseRules,
    Phase,
    RoundState,
    Variant,
    apply,
    deal,
    derive_seed,
    settle,
    start_round,
)
from dizhu.rules.random_play import random_action


def _deal_record(number: int, state: RoundState, clock_ms: int) -> DealRecord:
    timings = tuple(Timing(clock_ms + 700 * index, 700) for index in range(len(state.history)))
    return DealRecord(number, state, timings)


def play_round(variant: Variant, rng: random.Random) -> tuple[Callable[[], str], int]:
    """A complete random round: what writes its record as the referee does, and its number of actions."""
    seed = rng.randbytes(32)
    records: list[DealRecord] = []
    clock_ms = 1_764_547_200_000
    for redeal in range(33):
        dealt = deal(seed if redeal == 0 else derive_seed(seed, "redeal", redeal), variant, 0)
        state = start_round(dealt)
        while not state.is_over:
            state = apply(state, random_action(state, rng)).state
        records.append(_deal_record(redeal + 1, state, clock_ms))
        if state.phase is Phase.FINISHED:
            break
    settlement = settle(state)
    result = {
        "outcome": "landlord_won" if settlement.landlord_won else "farmers_won",
        "landlord": settlement.landlord,
        "winner": state.winner,
        "forfeited_by": None,
        "forfeit_cause": None,
        "bid": state.bid,
        "doublings": settlement.doublings,
        "spring": settlement.spring,
        "stake": settlement.stake,
        "changes": list(settlement.deltas),
    }

    def write() -> str:
        return replay_json(
            table_id="bench-table-0001",
            variant=variant,
            house_rules=HouseRules(),
            round_number=1,
            deals=tuple(records),
            result=result,
            balances=settlement.deltas,
            timeout_policy="auto_play",
        )

    return write, sum(len(record.state.history) for record in records)


def _per_record_us(function: Callable[[Any], object], items: Sequence[Any]) -> float:
    # CPU time, not wall time: on a shared machine other processes' turns do not count.
    started = time.process_time()
    for item in items:
        function(item)
    return (time.process_time() - started) / len(items) * 1e6


def _spread(values: Sequence[float], fmt: str = "{:.1f}") -> str:
    return f"{fmt.format(statistics.median(values))} [{fmt.format(min(values))}-{fmt.format(max(values))}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=40, help="random rounds per variant (default 40)")
    parser.add_argument("--repeats", type=int, default=5, help="repetitions (default 5)")
    args = parser.parse_args()
    keys = SigningKeys.ephemeral()
    rng = random.Random(2026)
    for variant in (THREE_PLAYER, FOUR_PLAYER):
        rounds = [play_round(variant, rng) for _ in range(args.rounds)]
        writers = [write for write, _ in rounds]
        texts = [write() for write in writers]
        documents = [orjson.loads(text) for text in texts]
        canonical = [_referee_canonical_form(document) for document in documents]
        signed = [keys.sign(text) for text in texts]
        assert all(_referee_canonical_form(d) == rfc8785.dumps(d) for d in documents)
        assert all(verify(text, keys.public_keys).ok for text in signed)
        parts: dict[str, list[float]] = {}
        ratios: list[float] = []
        for _ in range(args.repeats):
            figures = {
                "record": _per_record_us(lambda write: write(), writers),
                "sign": _per_record_us(keys.sign, texts),
                "  parse": _per_record_us(orjson.loads, texts),
                "  canonical": _per_record_us(_referee_canonical_form, documents),
                "  ed25519": _per_record_us(keys._private.sign, canonical),
                "  dump": _per_record_us(lambda d: orjson.dumps(d, option=orjson.OPT_INDENT_2), documents),
                "rfc8785": _per_record_us(rfc8785.dumps, documents),
                "verify": _per_record_us(verify, signed),
                "verify --key": _per_record_us(lambda text: verify(text, keys.public_keys), signed),
            }
            for name, value in figures.items():
                parts.setdefault(name, []).append(value)
            ratios.append(figures["sign"] / figures["record"])
        size = statistics.mean(len(text) for text in signed)
        actions = statistics.mean(count for _, count in rounds)
        print(f"{variant.name}: {args.rounds} rounds, {size / 1024:.1f} KiB a signed record, {actions:.0f} actions")
        for name, values in parts.items():
            print(f"  {name:<13} {_spread(values):>22} us per record")
        print(f"  sign / record {_spread(ratios, '{:.2f}'):>22} x")
        print(f"  sign per move {statistics.median(parts['sign']) / actions:>19.1f} us (spread over the round)")


if __name__ == "__main__":
    main()
