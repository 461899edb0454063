"""Tianshou 2's multi-agent DQN on dizhu's PettingZoo environment, unchanged.

    pip install 'dizhu[env]' 'tianshou>=2.0,<3'           # brings torch
    python examples/tianshou_dqn.py --steps 600            # collects and learns, then prints what it saw

Seat 0 learns with DQN against two random seats (Tianshou's masked random algorithm), through
Tianshou's own PettingZoo wrapper, collector and replay buffer: the wrapper reads each
observation's ``action_mask`` (the legal actions) and the collector stacks every step's info
into the buffer, which needs the fixed-shape infos the environment gives (one
``illegal_action`` flag per agent). The policy's input is the compact encoding.

The suite does not install torch (several gigabytes); ``tests/env/test_examples.py`` runs the
environment this script builds through the calls Tianshou's wrapper makes.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from dizhu.env import dou_dizhu_v0

LEARNER = "seat_0"


def make_env() -> Any:
    """The AEC environment, as Tianshou's ``PettingZooEnv`` takes it (with PettingZoo's checks)."""
    return dou_dizhu_v0.env(variant="3p", encoding="compact")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=600, help="environment steps to collect (every seat's)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import numpy as np
    import torch
    from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.env.pettingzoo_env import PettingZooEnv
    from tianshou.utils.net.common import Net
    from tianshou.utils.torch_utils import policy_within_training_step, torch_train_mode

    torch.manual_seed(args.seed)
    np.random.seed(args.seed)  # Tianshou's random algorithm draws from numpy's global generator
    env = PettingZooEnv(make_env())
    observation_size = env.observation_space["observation"].shape[0]
    actions = env.action_space.n
    net = Net(state_shape=observation_size, action_shape=actions, hidden_sizes=[128, 128])
    learner = DQN(
        policy=DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.1),
        optim=AdamOptimizerFactory(lr=1e-3),
        gamma=0.99,
        target_update_freq=100,
    )
    randoms = [MARLRandomDiscreteMaskedOffPolicyAlgorithm(env.action_space) for _ in env.agents[1:]]
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[learner, *randoms], env=env)

    envs = DummyVectorEnv([lambda: PettingZooEnv(make_env()) for _ in range(2)])
    envs.seed(args.seed)
    collector = Collector(algorithm, envs, VectorReplayBuffer(args.steps, len(envs)), exploration_noise=True)
    collector.reset()
    losses = []
    with policy_within_training_step(algorithm.policy), torch_train_mode(algorithm):
        collected = collector.collect(n_step=args.steps)
        for _ in range(10):
            stats = algorithm.update(buffer=collector.buffer, sample_size=64)
            losses.append(stats.get_loss_stats_dict()[f"{LEARNER}/loss"])
    sys.stdout.write(
        f"collected {collected.n_collected_steps} steps, {collected.n_collected_episodes} rounds; "
        f"buffer infos: {sorted(collector.buffer.info.get_keys())}; DQN loss {losses[0]:.3f} -> {losses[-1]:.3f}\n"
    )


if __name__ == "__main__":
    main()
