"""The learning baseline of examples/ learns: a few hundred rounds of training beat random play."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from dizhu.client import Bot
from dizhu.env import DouDizhuEnv
from tests.support.examples import EXAMPLES, load_example

EXAMPLE = EXAMPLES / "linear_baseline.py"


@pytest.fixture(scope="module")
def baseline() -> ModuleType:
    return load_example("linear_baseline")


def win_rate(policy: object, games: int) -> float:
    """The policy's share of rounds won against random opponents, every seat in turn, fixed deals."""
    won = 0
    for game in range(games):
        env = DouDizhuEnv(variant="3p", seat=game % 3, encoding="compact")
        observation, _ = env.reset(seed=50_000 + game)
        done, reward = False, 0.0
        while not done:
            action = policy(observation["observation"], observation["action_mask"])  # type: ignore[operator]
            observation, reward, done, _, _ = env.step(action)
        won += float(reward) > 0
    return won / games


def test_a_short_training_beats_random_play_and_the_untrained_policy(baseline: ModuleType) -> None:
    weights = baseline.train(episodes=150, seed=0)
    assert weights.shape == (baseline.FEATURES,)
    assert np.isfinite(weights).all()
    trained = win_rate(baseline.LinearPolicy(weights), 90)
    untrained = win_rate(baseline.LinearPolicy(np.zeros(baseline.FEATURES)), 90)
    assert trained > 0.65
    assert trained > untrained + 0.15


def test_the_trained_bot_is_a_bot_the_tournament_can_make(
    baseline: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    saved = tmp_path / "weights.json"
    saved.write_text(json.dumps({"features": baseline.FEATURES, "weights": [0.5] * baseline.FEATURES}))
    monkeypatch.setenv("DIZHU_BASELINE_WEIGHTS", str(saved))
    bot = baseline.TrainedBot()
    assert isinstance(bot, Bot)
    assert bot.policy.weights.tolist() == [0.5] * baseline.FEATURES


def test_training_leaves_the_shipped_weights_alone_and_says_how_to_replay_the_tournament(
    baseline: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A new training writes its own file; the tournament, which resumes what Redis holds for its
    name, is replayed with ``--fresh`` and those weights, not the shipped ones."""
    shipped = baseline.WEIGHTS.read_bytes()
    monkeypatch.chdir(tmp_path)
    try:
        baseline.main(["--seconds", "0.2"])
    finally:
        changed = baseline.WEIGHTS.read_bytes() != shipped
        baseline.WEIGHTS.write_bytes(shipped)
    assert not changed, "training overwrote the shipped weights"
    written = tmp_path / baseline.TRAINED.name
    assert len(json.loads(written.read_text())["weights"]) == baseline.FEATURES
    out = capsys.readouterr().out
    assert f"DIZHU_BASELINE_WEIGHTS={written} " in out
    assert "dizhu tournament examples/baseline-tournament.toml --fresh" in out


def test_the_shipped_weights_never_bid_as_the_docs_say(baseline: ModuleType) -> None:
    """docs/env.md: the shipped baseline passes every auction (it is never the landlord by a bid of its own)."""
    policy = baseline.TrainedBot().policy
    calls = []
    for game in range(60):
        env = DouDizhuEnv(variant="3p", seat=game % 3, encoding="compact")
        observation, _ = env.reset(seed=70_000 + game)
        while observation["observation"][0] == 1 and observation["action_mask"].any():  # the auction, its turn
            calls.append(policy(observation["observation"], observation["action_mask"]))
            observation, _, _, _, _ = env.step(calls[-1])
    assert len(calls) >= 50
    assert set(calls) == {0}
    assert "never bids" in (EXAMPLE.parents[1] / "docs" / "env.md").read_text()
