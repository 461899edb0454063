"""A learning baseline: a linear action-value policy trained in ``dizhu.env`` with numpy only.

Train it (about five minutes on two cores), then enter it in a tournament at a real referee
without changing a line::

    .venv/bin/python examples/linear_baseline.py --seconds 300      # writes ./linear-baseline-weights.json
    DIZHU_BASELINE_WEIGHTS=linear-baseline-weights.json PYTHONPATH=examples \
        .venv/bin/dizhu tournament examples/baseline-tournament.toml --fresh

Training leaves the shipped weights (``linear_baseline_weights.json``, what the tournament plays
without ``DIZHU_BASELINE_WEIGHTS``) as they are unless ``--output`` names them. ``--fresh``
matters: a tournament resumes what Redis holds under its name, so without it a second run
replays the standings of the first whatever the weights.

The policy scores each legal action by ``w . features(observation, action)`` and plays the
best one. The features are computed from the compact observation and the published action
table only (the cards the action plays, what is left in hand, how fragmented the rest is,
the bid against the hand's strength). Training is Monte Carlo regression, DouZero's idea
made linear: the learner plays one seat against random opponents (epsilon-greedy), every
decision's features are regressed on the round's outcome for that seat (+1 won, -1 lost),
and the weights are refitted by ridge regression as the games come in.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

from dizhu.env import DouDizhuEnv, action_table
from dizhu.env.bot import PolicyBot
from dizhu.rules import VARIANTS

#: Where ``TrainedBot`` finds its weights (``DIZHU_BASELINE_WEIGHTS`` overrides it): the shipped ones.
WEIGHTS = Path(__file__).with_name("linear_baseline_weights.json")
#: Where a training writes its weights by default, in the working directory.
TRAINED = Path("linear-baseline-weights.json")
FEATURES = 12


class LinearPolicy:
    """``policy(observation, action_mask) -> action`` with weights ``w`` (compact encoding)."""

    def __init__(self, weights: npt.NDArray[np.float64], variant: str = "3p", epsilon: float = 0.0,
                 rng: np.random.Generator | None = None) -> None:  # fmt: skip
        self.weights = weights
        self.variant = VARIANTS[variant]
        self.counts = action_table(self.variant).counts.astype(np.int16)
        players = self.variant.players
        self.hand_at = 2 + players
        self.role_at = 2
        self.bid_at = 2 + players + 15 + 15 + players * 15 + players + 15 + 15 + players
        self.epsilon = epsilon
        self.rng = rng or np.random.default_rng(0)

    def features(self, observation: npt.NDArray[np.int8], legal: npt.NDArray[np.intp]) -> npt.NDArray[np.float64]:
        """One row of features per legal action."""
        hand = observation[self.hand_at : self.hand_at + 15].astype(np.int16)
        played = self.counts[legal]
        size = played.sum(axis=1)
        left = hand.sum() - size
        after = hand - played
        strength = (hand[12] + 2 * hand[13:].sum() + 3 * (hand[:13] == 4).sum()) / 10.0
        in_auction = observation[0] == 1
        bid = np.where(legal <= 3, legal, 0) * in_auction / 3.0
        bomb = ((played.max(axis=1) == 4) & (size == 4)) | ((played[:, 13:].sum(axis=1) == 2) & (size == 2))
        mean_rank = (played * np.arange(15)).sum(axis=1) / np.maximum(size, 1) / 14.0
        landlord = observation[self.role_at] == 1
        rows = np.stack(
            [
                np.ones(len(legal)),
                (size == 0) & ~in_auction,  # a pass in the play
                size / 20.0,
                left / 20.0,
                left == 0,  # goes out
                mean_rank,
                bomb,
                (after == 1).sum(axis=1) / 10.0,  # singles left
                (after >= 2).sum(axis=1) / 10.0,  # sets left
                bid,
                bid * strength,
                landlord * size / 20.0,
            ],
            axis=1,
        )
        return rows.astype(np.float64)

    def __call__(self, observation: npt.NDArray[np.int8], mask: npt.NDArray[np.int8]) -> int:
        legal = np.flatnonzero(mask)
        if self.epsilon and self.rng.random() < self.epsilon:
            return int(legal[self.rng.integers(len(legal))])
        return int(legal[int(np.argmax(self.features(observation, legal) @ self.weights))])


def train(seconds: float = 300.0, *, episodes: int | None = None, seed: int = 0) -> npt.NDArray[np.float64]:
    """Weights after ``seconds`` of training (or exactly ``episodes`` rounds, for tests)."""
    rng = np.random.default_rng(seed)
    policy = LinearPolicy(np.zeros(FEATURES), epsilon=0.2, rng=rng)
    gram = np.eye(FEATURES) * 1.0  # ridge prior
    moment = np.zeros(FEATURES)
    envs = [DouDizhuEnv(variant="3p", seat=seat, encoding="compact") for seat in range(3)]
    deadline = time.monotonic() + seconds
    played = 0
    while (played < episodes) if episodes is not None else (time.monotonic() < deadline):
        env = envs[played % 3]
        observation, _ = env.reset(seed=seed * 1_000_003 + played)
        chosen: list[npt.NDArray[np.float64]] = []
        done = False
        reward = 0.0
        while not done:
            action = policy(observation["observation"], observation["action_mask"])
            legal = np.array([action])
            chosen.append(policy.features(observation["observation"], legal)[0])
            observation, reward, done, _, _ = env.step(action)
        outcome = float(np.sign(reward))
        if outcome:
            rows = np.array(chosen)
            gram += rows.T @ rows
            moment += rows.T @ np.full(len(rows), outcome)
        played += 1
        if played % 100 == 0:
            policy.weights = np.linalg.solve(gram, moment)
    return np.linalg.solve(gram, moment)


class TrainedBot(PolicyBot):
    """The trained policy as a ``dizhu.client.Bot`` (for ``dizhu tournament``: ``linear_baseline:TrainedBot``)."""

    name = "linear-baseline"

    def __init__(self) -> None:
        path = Path(os.environ.get("DIZHU_BASELINE_WEIGHTS", str(WEIGHTS)))
        weights = np.array(json.loads(path.read_text())["weights"], dtype=np.float64)
        super().__init__(LinearPolicy(weights), encoding="compact")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--output", type=Path, default=TRAINED, help=f"default: ./{TRAINED}")
    arguments = parser.parse_args(argv)
    weights = train(arguments.seconds)
    output = arguments.output.resolve()
    output.write_text(json.dumps({"features": FEATURES, "weights": weights.tolist()}, indent=1) + "\n")
    print(f"weights written to {output}: {np.round(weights, 3).tolist()}")  # noqa: T201
    print(  # noqa: T201
        "to play them (--fresh: a tournament resumes what Redis holds under its name):\n"
        f"  DIZHU_BASELINE_WEIGHTS={output} PYTHONPATH=examples "
        "dizhu tournament examples/baseline-tournament.toml --fresh"
    )


if __name__ == "__main__":
    main()
