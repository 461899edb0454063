"""The native tables against the reference ``Game``: seeded random games give the same arrays.

Every step compares every array of the ``Seen`` row (every seat's hand too), every seat's
``douzero`` observation (the engine's encoder against numpy's), the legal actions, the seat to
act, whether the action was legal, the redeals, the settlement and the rewards; some actions
are illegal on purpose, and some deals are passed out to the redeal cap.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from typing import Any

import numpy as np
import pytest

from dizhu.env import VectorDouDizhuEnv
from dizhu.env.encodings import encoding
from dizhu.env.engine import rules
from dizhu.env.game import Game
from dizhu.env.info import SEEN_ARRAYS, Seen
from dizhu.env.native import NativeGame, make_game
from dizhu.rules import VARIANTS, HouseRules


def _same_seen(pure: Seen, native: Seen) -> None:
    for name in SEEN_ARRAYS:
        assert np.array_equal(getattr(pure, name), getattr(native, name)), name


def _choose(rng: np.random.Generator, legal: list[int], table_size: int, passing: float) -> int:
    draw = rng.random()
    if draw < 0.05:
        return int(rng.choice([-3, table_size, table_size + 7, int(rng.integers(table_size))]))
    if legal[0] == 0 and len(legal) <= 4 and draw < passing:
        return 0
    return legal[int(rng.integers(len(legal)))]


@pytest.mark.parametrize("spring", [False, True])
@pytest.mark.parametrize("reward", ["win", "settlement", "log"])
def test_native_games_match_the_reference_step_by_step(variant: str, spring: bool, reward: str) -> None:
    house = HouseRules(spring=spring)
    pure = Game(variant, rules("python"), house_rules=house, reward=reward)
    native = make_game(variant, rules("native"), house_rules=house, reward=reward)
    assert isinstance(native, NativeGame)
    rng = np.random.default_rng([len(variant), spring, len(reward)])
    coder = encoding("douzero", pure.variant)
    voids = 0
    for episode in range(8):
        seed, dealer = rng.bytes(32), int(rng.integers(pure.variant.players))
        pure.start(seed, dealer)
        native.start(seed, dealer)
        passing = 1.0 if episode % 4 == 3 else 0.3
        while True:
            _same_seen(pure.seen, native.seen)
            for seat in {pure.turn, (pure.turn + 1) % pure.variant.players}:  # the engine's encoder against numpy's
                assert np.array_equal(pure.observe(coder, seat), native.observe(coder, seat)), seat
            assert (pure.legal, pure.over, pure.redeals) == (native.legal, native.over, native.redeals)
            if pure.over:
                break
            assert pure.turn == native.turn
            action = _choose(rng, pure.legal, pure.table.size, passing)
            assert pure.step(action) == native.step(action)
        assert pure.settlement == native.settlement
        assert pure.rewards() == native.rewards()
        assert pure.state == native.state
        voids += pure.settlement is not None and pure.settlement.landlord is None
    assert voids >= 2


def _random_actions(rng: np.random.Generator, mask: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    actions = np.array([rng.choice(np.flatnonzero(row)) for row in mask], dtype=np.int32)
    wrong = rng.random(len(actions)) < 0.05
    actions[wrong] = rng.integers(-2, mask.shape[1] + 2, int(wrong.sum()))
    return actions


def _step_by_shards(env: VectorDouDizhuEnv, actions: np.ndarray[Any, Any]) -> dict[str, Any]:
    """One step of every table through ``send(actions, shard)`` and ``recv_shard``."""
    for shard, rows in enumerate(env.shards):
        env.send(actions[rows], shard)
    done = sorted(env.recv_shard() for _ in env.shards)
    assert done == list(range(len(env.shards)))
    return env.buffers


@pytest.mark.parametrize(("spring", "workers"), [(False, 0), (True, 0), (True, 2)])
def test_the_native_vector_environment_matches_the_reference(variant: str, spring: bool, workers: int) -> None:
    kwargs: dict[str, Any] = {"variant": variant, "encoding": "douzero", "reward": "settlement", "spring": spring,
                              "seed": 9}  # fmt: skip
    with VectorDouDizhuEnv(8, engine="python", **kwargs) as pure, \
            VectorDouDizhuEnv(8, engine="native", workers=workers, **kwargs) as native:  # fmt: skip
        assert len(native.shards) == max(1, workers)
        rng = np.random.default_rng(4)
        ended = 0
        for turn in range(250):
            actions = _random_actions(rng, pure.action_mask)
            pure.send(actions)
            one = pure.recv()
            if turn % 2:
                two = _step_by_shards(native, actions)
            else:
                native.send(actions)
                two = native.recv()
            for name in ("observation", "action_mask", "legal_actions", "legal_count", "seat", "rewards", "terminated"):
                assert np.array_equal(one[name], two[name]), name
            ended += int(one["terminated"].sum())
            listed = [one["legal_actions"][i, : one["legal_count"][i]] for i in range(8)]
            assert all(
                np.array_equal(np.flatnonzero(mask), ids) for mask, ids in zip(one["action_mask"], listed, strict=True)
            )
        assert ended >= 4


_LEFT_STEPPING = """
import numpy as np
from dizhu.env import VectorDouDizhuEnv
env = VectorDouDizhuEnv(256, engine="native", workers=2, seed=3)
for shard, rows in enumerate(env.shards):
    env.send(np.zeros(rows.stop - rows.start, dtype=np.int32), shard)
print("left stepping")
"""


def test_an_environment_left_stepping_on_threads_lets_the_interpreter_exit_cleanly() -> None:
    """The shards' threads are daemons: at exit they are stopped (each finishing the step it has
    begun) before the interpreter finalises, so a step is never cut short inside the engine."""
    for _ in range(3):
        done = subprocess.run(
            [sys.executable, "-c", _LEFT_STEPPING], capture_output=True, text=True, timeout=120, check=False
        )
        assert (done.returncode, done.stdout, done.stderr) == (0, "left stepping\n", "")


def test_shards_on_threads_are_collected_one_by_one_and_each_step_is_sent_once() -> None:
    with VectorDouDizhuEnv(64, engine="native", workers=4, seed=5) as env:
        assert len(env.shards) == 4
        for shard, rows in enumerate(env.shards):
            env.send(np.zeros(rows.stop - rows.start, dtype=np.int32), shard)
        with pytest.raises(RuntimeError, match="recv"):
            env.send(np.zeros(16, dtype=np.int32), 2)
        assert sorted(env.recv_shard() for _ in range(4)) == [0, 1, 2, 3]
        with pytest.raises(RuntimeError, match="send"):
            env.recv_shard()


def _arrays(variant: str, rows: int = 2) -> tuple[Seen, list[Any], tuple[Any, ...], list[list[int]]]:
    from dizhu.env.actions import action_table

    resolved = VARIANTS[variant]
    seen = Seen.zeros(resolved, rows)
    table = action_table(resolved)
    outputs = (
        np.zeros((rows, table.size), dtype=np.int8),
        np.zeros((rows, table.size), dtype=np.int32),
        np.zeros(rows, dtype=np.int32),
        np.zeros(rows, dtype=np.int8),
        np.zeros((rows, resolved.players), dtype=np.float32),
        np.zeros(rows, dtype=np.uint8),
    )
    return seen, [getattr(seen, name) for name in SEEN_ARRAYS], outputs, [list(ranks) for ranks in table.plays]


def _native_rules(variant: str) -> Any:
    from dizhu.rules.engines import offered_native_rules

    return offered_native_rules(VARIANTS[variant])


def test_wrong_arrays_and_arguments_are_python_errors() -> None:
    from dizhu._engine import NativeTables  # type: ignore[attr-defined]

    native = _native_rules("3p")
    _, arrays, outputs, plays = _arrays("3p")

    def make(arrays: list[Any] = arrays, outputs: Any = outputs, plays: list[list[int]] = plays, **changes: Any) -> Any:
        arguments = {"spring": False, "redeal_cap": 10, "reward": "win"} | changes
        return NativeTables(native, plays, arrays, arguments["spring"], arguments["redeal_cap"], arguments["reward"],
                            outputs)  # fmt: skip

    tables = make()
    for index, wrong in [(2, arrays[2].astype(np.int16)), (2, arrays[2][:, :2]), (3, np.zeros((3, 2), np.int16).T),
                         (14, arrays[13]), (0, np.zeros(2, np.int8)[::-1])]:  # fmt: skip
        changed = list(arrays)
        changed[index] = wrong
        with pytest.raises((ValueError, BufferError, TypeError)):
            make(changed)
    readonly = arrays[4].copy()
    readonly.flags.writeable = False
    with pytest.raises((ValueError, BufferError)):
        make([*arrays[:4], readonly, *arrays[5:]])
    with pytest.raises(ValueError, match="share memory"):
        make(outputs=(*outputs[:3], arrays[0], *outputs[4:]))
    with pytest.raises(ValueError, match="action_mask has shape"):
        make(outputs=(np.zeros((2, outputs[0].shape[1] - 1), np.int8), *outputs[1:]))
    with pytest.raises(ValueError, match="reward"):
        make(reward="gold")
    with pytest.raises(ValueError, match="twice"):
        make(plays=[*plays, plays[-1]])
    with pytest.raises(ValueError, match="no rank 99"):
        make(plays=[*plays[:-1], [99]])
    with pytest.raises(ValueError, match="not been started"):
        tables.step(0, 0)
    with pytest.raises(ValueError, match="no table"):
        tables.start(2, bytes(32), 0)
    with pytest.raises(ValueError, match="32 bytes"):
        tables.start(0, bytes(31), 0)
    with pytest.raises(ValueError, match="no seat"):
        tables.start(0, bytes(32), 3)
    with pytest.raises(ValueError, match="not been started"):
        tables.write_outputs()
    with pytest.raises(ValueError, match="not been started"):
        tables.encode_douzero(0, np.zeros(1378, np.int8))
    with pytest.raises(ValueError, match="shape"):
        tables.encode_douzero(0, np.zeros(1377, np.int8))
    with pytest.raises(ValueError, match="observation"):
        NativeTables(native, plays, arrays, False, 10, "win", outputs, np.zeros((2, 1378), np.int16))
    tables.start(0, bytes(32), 0)
    tables.start(1, bytes(32), 1)
    seeds, dealers = np.zeros((2, 32), np.uint8), np.zeros(2, np.int32)
    with pytest.raises(ValueError, match="2 tables"):
        tables.step_all(np.zeros(3, np.int32), seeds, dealers)
    with pytest.raises(ValueError, match="no seat"):
        tables.step_all(np.zeros(2, np.int32), seeds, dealers + 5)
    with pytest.raises((ValueError, BufferError, TypeError)):
        tables.step_all(np.zeros(2, np.float64), seeds, dealers)
    assert tables.step(0, 10**12) is False  # an illegal id is replaced, as in every environment
    without_outputs = make(outputs=None)
    with pytest.raises(ValueError, match="without outputs"):
        without_outputs.step_all(np.zeros(2, np.int32), seeds, dealers)


def test_a_served_shard_reports_its_steps_faults_to_the_collector() -> None:
    """``NativeTables.serve`` on a thread: a step refused by the engine comes back from
    ``ShardSignals.collect`` as the Python error ``step_all`` would raise, the thread keeps
    serving, and closing the signals ends it."""
    from dizhu._engine import NativeTables, ShardSignals  # type: ignore[attr-defined]

    _, arrays, outputs, plays = _arrays("3p")
    tables = NativeTables(_native_rules("3p"), plays, arrays, False, 10, "win", outputs)
    tables.start(0, bytes(32), 0)
    tables.start(1, bytes(32), 1)
    actions, seeds, dealers = np.zeros(2, np.int32), np.zeros((2, 32), np.uint8), np.zeros(2, np.int32)
    signals = ShardSignals(1)
    with pytest.raises(ValueError, match="no shard 1"):
        tables.serve(signals, 1, actions, seeds, dealers)
    with pytest.raises(ValueError, match="C-ordered"):
        tables.serve(signals, 0, np.zeros(4, np.int32)[::2], seeds, dealers)
    thread = threading.Thread(target=tables.serve, args=(signals, 0, actions, seeds, dealers))
    thread.start()
    dealers[:] = 7
    signals.ask(0)
    index, error = signals.collect()
    assert index == 0
    assert isinstance(error, ValueError)
    assert "no seat 7" in str(error)
    dealers[:] = 0
    signals.ask(0)
    with pytest.raises(ValueError, match="not collected yet"):
        signals.ask(0)
    assert signals.collect() == (0, None)
    assert outputs[2].min() > 0  # every table lists its legal actions after the step
    with pytest.raises(ValueError, match="no shard"):
        signals.ask(3)
    signals.close()
    thread.join(timeout=60)
    assert not thread.is_alive()
