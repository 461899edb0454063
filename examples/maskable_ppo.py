"""sb3-contrib's MaskablePPO on one seat of dizhu's Gymnasium environment, unchanged.

    pip install 'dizhu[env]' 'sb3-contrib>=2.4,<3'        # brings Stable-Baselines3 and torch
    python examples/maskable_ppo.py --steps 2048           # then plays 20 rounds and prints the mean reward

The learner sits at seat 0 of a three-player table against the bundled heuristic and random
bots (``opponents=``); the compact encoding is the policy's input. MaskablePPO asks the
environment for ``action_masks()`` before each decision (sb3-contrib's ``get_action_masks``,
through Gymnasium's wrappers), so it never samples an illegal action. The observation's own
``action_mask`` entry is dropped: the mask reaches the policy through ``action_masks()``, and
the network's input stays the 154 entries of the encoding.

The suite does not install torch (several gigabytes); ``tests/env/test_examples.py`` checks the
environment this script builds against the calls MaskablePPO makes.
"""

from __future__ import annotations

import argparse
import sys

import gymnasium
import numpy as np
from gymnasium.wrappers import TransformObservation

#: Gymnasium 1.x loads no plugins: ``module:id`` imports dizhu.env, which registers the id.
ENV_ID = "dizhu.env:dizhu/DouDizhu-v0"


def make_env(seed: int = 0) -> gymnasium.Env[np.ndarray, int]:
    """Seat 0 of a 3p table, compact observations, the bundled bots as opponents."""
    env = gymnasium.make(ENV_ID, variant="3p", seat=0, encoding="compact", opponents=["heuristic", "random"])
    vector = env.observation_space["observation"]  # type: ignore[index]
    env = TransformObservation(env, lambda observed: observed["observation"], vector)
    env.reset(seed=seed)
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=2048, help="training steps (the learner's decisions)")
    parser.add_argument("--rounds", type=int, default=20, help="rounds played after training")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks

    env = make_env(args.seed)
    model = MaskablePPO("MlpPolicy", env, n_steps=256, batch_size=64, n_epochs=2, seed=args.seed, verbose=0)
    model.learn(total_timesteps=args.steps)

    vec_env = model.get_env()
    assert vec_env is not None
    total = 0.0
    for played in range(args.rounds):
        vec_env.seed(args.seed + 1 + played)
        observation = vec_env.reset()
        done = False
        while not done:
            action, _ = model.predict(observation, action_masks=get_action_masks(vec_env), deterministic=True)
            observation, reward, dones, _ = vec_env.step(action)
            done = bool(dones[0])
            total += float(reward[0])
    sys.stdout.write(f"trained {args.steps} steps; mean reward over {args.rounds} rounds: {total / args.rounds:+.2f}\n")


if __name__ == "__main__":
    main()
