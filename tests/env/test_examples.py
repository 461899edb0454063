"""The training-library examples' environments, driven through the calls the libraries make.

The suite does not install torch (sb3-contrib and Tianshou need it: several gigabytes of
wheels), so it does not run MaskablePPO or Tianshou themselves: it builds each example's
environment with the example's own ``make_env`` and plays a few hundred steps through what
each library calls -- ``get_wrapper_attr("action_masks")()`` before each decision and a flat
observation (sb3-contrib's ``get_action_masks`` through a ``DummyVecEnv``), and ``last()``'s
``observation``/``action_mask`` entries, equal spaces for every agent and infos stacked step
after step into arrays (Tianshou's ``PettingZooEnv``, collector and buffer). docs/env.md
says how to run the examples themselves.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from gymnasium.utils.env_checker import check_env

from tests.support.examples import load_example


def test_the_maskable_ppo_example_env_gives_masks_and_flat_observations_for_a_few_hundred_steps() -> None:
    env = load_example("maskable_ppo").make_env(seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    observation, _ = env.reset(seed=1)
    rng = np.random.default_rng(1)
    steps = rounds = 0
    while steps < 300:
        assert env.observation_space.contains(observation)
        masks = env.get_wrapper_attr("action_masks")()  # what DummyVecEnv.env_method("action_masks") calls
        assert masks.dtype == np.bool_
        assert masks.shape == (env.action_space.n,)
        action = int(rng.choice(np.flatnonzero(masks)))
        observation, reward, terminated, truncated, info = env.step(action)
        assert not info["illegal_action"]
        steps += 1
        if terminated or truncated:
            assert reward != 0 or env.unwrapped.game.settlement.landlord is None
            observation, _ = env.reset()
            rounds += 1
    assert rounds > 3


def test_the_tianshou_example_env_is_what_tianshous_pettingzoo_wrapper_and_collector_read() -> None:
    env = load_example("tianshou_dqn").make_env()
    agents = env.possible_agents
    assert all(env.observation_space(agent) == env.observation_space(agents[0]) for agent in agents)
    assert all(env.action_space(agent) == env.action_space(agents[0]) for agent in agents)
    env.reset(seed=2)
    rng = np.random.default_rng(2)
    infos: list[dict[str, Any]] = []
    rewards: list[list[float]] = []
    for _ in range(300):
        observation, _, terminated, truncated, info = env.last()
        assert set(observation) == {"observation", "action_mask"}
        mask = [entry == 1 for entry in observation["action_mask"]]  # as PettingZooEnv builds it
        infos.append(info)
        paid = [0.0] * len(agents)  # PettingZooEnv.step's reward vector
        for agent, reward in env.rewards.items():
            paid[agents.index(agent)] = reward
        rewards.append(paid)
        if terminated or truncated:
            env.step(None)
            if not env.agents:
                env.reset()
            continue
        env.step(int(rng.choice(np.flatnonzero(mask))))
    for key in infos[0]:
        stacked = np.array([info[key] for info in infos])  # the buffer's column of that key
        assert stacked.shape == (len(infos),), key
    assert {frozenset(info) for info in infos} == {frozenset(infos[0])}
    assert np.array(rewards).shape == (300, len(agents))
