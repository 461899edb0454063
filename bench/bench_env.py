"""Training environments: decisions per second, ours against RLCard's and OpenSpiel's, in one run.

    .venv/bin/pip install -e '.[bench,env]' && .venv/bin/python bench/bench_env.py [--seconds 3]

Measured for ``--seconds`` each: the single-process figures in this process's CPU time (a
shared machine's other load does not count), the batched ones in wall-clock time (their
workers run in parallel; other load counts there), so compare the ratios of one run:

* single environment, random legal decisions: ``dou_dizhu_v0`` (3p, both encodings, and 4p)
  on each rules engine built (the native one plays its tables in Rust),
  RLCard's ``doudizhu`` environment (which encodes an observation every step), OpenSpiel's
  ``dou_dizhu`` (C++; chance nodes not counted as decisions), and PettingZoo's own
  ``performance_benchmark`` on ``dou_dizhu_v0``;
* batched decisions with the DouZero encoding: ``VectorDouDizhuEnv`` stepped synchronously
  in this process, and asynchronously (``send``/``recv_shard``) over two shards (threads for
  the native tables, worker processes for the pure ones), on each engine, a random policy
  choosing from the legal-action lists (``legal_actions``) in both, and once from the masks
  (its cost counts: it is the learner's).

No two measurements play the same deals: each takes the next seed of one sequence (the
environments' own and its random policy's), so that none meets positions an earlier one
left in a cache of this process (the native engine's, the encodings').
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import random
import re
import time
from collections.abc import Callable

import numpy as np

from dizhu.env import VectorDouDizhuEnv, available_engines, dou_dizhu_v0

#: The clock of the single-process figures: this process's CPU time, so that on a shared machine
#: the time spent waiting for a core counts against nobody (as bench/peers.py measures).
clock = time.process_time
#: One seed per measurement (see the module docstring).
_SEEDS = itertools.count(1)


def timed(run: Callable[[float], int], seconds: float) -> float:
    """Decisions per CPU second of ``run(deadline) -> decisions`` (the deadline on ``clock``)."""
    start = clock()
    decisions = run(start + seconds)
    return decisions / (clock() - start)


def ours(
    variant: str, encoding: str, engine: str, masks: bool = False, checked: bool = False
) -> Callable[[float], int]:
    """Random legal decisions of ``dou_dizhu_v0``, chosen from ``legal_actions()`` as the peers'
    from their legal lists (``masks``: from the observation's mask; ``checked``: ``env()``, with
    PettingZoo's order and bounds checks, rather than ``raw_env``)."""

    def run(deadline: float) -> int:
        make = dou_dizhu_v0.env if checked else dou_dizhu_v0.raw_env
        env = make(variant=variant, encoding=encoding, engine=engine)
        seed = next(_SEEDS)
        env.reset(seed=seed)
        rng = random.Random(seed)
        decisions = 0
        while clock() < deadline:
            if all(env.terminations.values()):
                env.reset()
            observed, _, _, _, _ = env.last()
            legal = np.flatnonzero(observed["action_mask"]).tolist() if masks else env.unwrapped.legal_actions()
            env.step(rng.choice(legal))
            decisions += 1
        return decisions

    return run


def rlcard_env(deadline: float) -> int:
    import rlcard  # type: ignore[import-untyped]

    seed = next(_SEEDS)
    env = rlcard.make("doudizhu", config={"seed": seed})
    rng = random.Random(seed)
    state, _ = env.reset()
    decisions = 0
    while clock() < deadline:
        state, _ = env.step(rng.choice(list(state["legal_actions"])))
        decisions += 1
        if env.is_over():
            state, _ = env.reset()
    return decisions


def openspiel_env(deadline: float) -> int:
    import pyspiel  # type: ignore[import-not-found]

    game = pyspiel.load_game("dou_dizhu")
    rng = random.Random(next(_SEEDS))
    decisions = 0
    state = game.new_initial_state()
    while clock() < deadline:
        if state.is_terminal():
            state = game.new_initial_state()
        if state.is_chance_node():
            state.apply_action(rng.choice(state.chance_outcomes())[0])
            continue
        state.apply_action(rng.choice(state.legal_actions()))
        decisions += 1
    return decisions


def pettingzoo_benchmark() -> float:
    from pettingzoo.test import performance_benchmark

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        performance_benchmark(dou_dizhu_v0.env(variant="3p", encoding="douzero"))
    found = re.search(r"([0-9.]+) turns per second", printed.getvalue())
    return float(found.group(1)) if found else float("nan")


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row of ``masks``, for all rows at once."""
    rows, actions = np.nonzero(masks)
    counts = np.bincount(rows, minlength=len(masks))
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    return actions[starts + (rng.random(len(masks)) * counts).astype(np.intp)]


def random_listed(listed: np.ndarray, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row, from the legal-action lists (no pass over the masks)."""
    return listed[np.arange(len(counts)), (rng.random(len(counts)) * counts).astype(np.intp)]


def batched(workers: int, tables: int, seconds: float, engine: str, masks: bool = False) -> float:
    """Decisions per second of a vector environment and a random policy choosing from its legal
    lists (``masks``: from its masks); the environment's start, worker processes included, is
    not counted.

    Without workers: ``step`` every table, then choose. With workers: the asynchronous loop,
    choosing for the shard just received while the other shards step.
    """
    seed = next(_SEEDS)
    with VectorDouDizhuEnv(tables, variant="3p", encoding="douzero", workers=workers, seed=seed, engine=engine) as env:
        rng = np.random.default_rng(seed)
        buffers = env.buffers

        def choose(rows: slice) -> np.ndarray:
            if masks:
                return random_legal(buffers["action_mask"][rows], rng)
            return random_listed(buffers["legal_actions"][rows], buffers["legal_count"][rows], rng)

        decisions = 0
        start = time.perf_counter()
        if not workers:
            while time.perf_counter() < start + seconds:
                env.send(choose(slice(None)))
                env.recv()
                decisions += tables
            return decisions / (time.perf_counter() - start)
        for shard, rows in enumerate(env.shards):
            env.send(choose(rows), shard)
        while time.perf_counter() < start + seconds:
            shard = env.recv_shard()
            rows = env.shards[shard]
            env.send(choose(rows), shard)
            decisions += rows.stop - rows.start
        env.recv()
        return decisions / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--tables", type=int, nargs="+", default=[128, 1024],
                        help="the batched environments' table counts (default: 128 1024)")  # fmt: skip
    seconds = parser.parse_args().seconds
    table_counts = parser.parse_args().tables
    engines = available_engines()[::-1]  # the native engine first where it is built
    figures: dict[str, float] = {}
    for engine in engines:
        for variant, encoding in (("3p", "douzero"), ("3p", "compact"), ("4p", "douzero")):
            figures[f"dou_dizhu_v0 {variant} {encoding}, {engine}"] = timed(ours(variant, encoding, engine), seconds)
    figures[f"dou_dizhu_v0 3p douzero, {engines[0]}, policy on masks"] = timed(
        ours("3p", "douzero", engines[0], True), seconds
    )
    figures[f"dou_dizhu_v0.env() (checked) 3p douzero, {engines[0]}"] = timed(
        ours("3p", "douzero", engines[0], checked=True), seconds
    )
    for name, run in (("RLCard doudizhu env", rlcard_env), ("OpenSpiel dou_dizhu", openspiel_env)):
        try:
            figures[name] = timed(run, seconds)
        except ImportError as missing:
            print(f"{name}: not installed ({missing}); pip install -e '.[bench]'")
    figures[f"PettingZoo performance_benchmark (dou_dizhu_v0 3p douzero, {engines[0]})"] = pettingzoo_benchmark()
    for tables in table_counts:
        for engine in engines:
            figures[f"batched sync, {tables} tables, douzero, {engine}"] = batched(0, tables, seconds, engine)
            figures[f"batched async, 2 workers, {tables} tables, douzero, {engine}"] = batched(
                2, tables, seconds, engine
            )
    figures[f"batched sync, {table_counts[0]} tables, douzero, {engines[0]}, policy on masks"] = batched(
        0, table_counts[0], seconds, engines[0], masks=True
    )
    rlcard = figures.get("RLCard doudizhu env")
    print(f"{'environment':<72} {'decisions/s':>12} {'vs RLCard':>10}")
    for name, rate in figures.items():
        ratio = f"{rate / rlcard:.2f}x" if rlcard else "-"
        print(f"{name:<72} {rate:>12,.0f} {ratio:>10}")
    for tables in table_counts:
        for engine in engines:
            sync = figures[f"batched sync, {tables} tables, douzero, {engine}"]
            asynchronous = figures[f"batched async, 2 workers, {tables} tables, douzero, {engine}"]
            print(f"async / sync, {tables} tables, {engine}: {asynchronous / sync:.2f}x")


if __name__ == "__main__":
    main()
