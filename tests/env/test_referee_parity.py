"""A policy plays the same seeded rounds in the environment and at a real referee: same
observations, same masks, same rewards."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from dizhu.client import BotRunner, TableClient
from dizhu.env import dou_dizhu_v0
from dizhu.env.bot import PolicyBot
from dizhu.testing import local_referee
from tests.support.env_referee import create_seeded_table, hashed_policy


def play_in_the_environment(
    variant: str, encoding: str, seed: bytes, dealer: int
) -> tuple[dict[int, list[tuple[np.ndarray, np.ndarray]]], list[float]]:
    env = dou_dizhu_v0.raw_env(variant=variant, encoding=encoding, reward="settlement", spring=True)
    env.reset(options={"round_seed": seed, "dealer": dealer})
    seen: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {seat: [] for seat in range(len(env.possible_agents))}
    paid = dict.fromkeys(env.possible_agents, 0.0)
    while not all(env.terminations.values()):
        agent = env.agent_selection
        observed = env.observe(agent)
        seen[env.possible_agents.index(agent)].append((observed["observation"], observed["action_mask"]))
        env.step(hashed_policy(observed["observation"], observed["action_mask"]))
        for name, reward in env.rewards.items():
            paid[name] += reward
    return seen, [paid[name] for name in env.possible_agents]


@pytest.mark.parametrize(("variant", "encoding"), [("3p", "douzero"), ("4p", "douzero"), ("3p", "compact")])
async def test_a_policy_sees_and_earns_the_same_at_the_referee_as_in_the_environment(
    variant: str, encoding: str
) -> None:
    players = int(variant[0])
    for game in range(2):
        seed = bytes([game + 1]) * 32
        dealer = game % players
        async with local_referee(log_level=None) as target, TableClient(target) as creator:
            created = await create_seeded_table(creator, variant, seed, dealer)
            bots = [PolicyBot(hashed_policy, encoding=encoding) for _ in range(players)]
            for bot in bots:
                bot.record = []
            runners = [
                BotRunner(bot, creator.for_seat(seat.token))
                for bot, seat in zip(bots, created.seat_tokens, strict=False)
            ]
            await asyncio.gather(*(runner.run() for runner in runners))
            final = await creator.get()
        expected, paid = play_in_the_environment(variant, encoding, seed, dealer)
        assert [float(seat.balance) for seat in final.seats] == paid
        for seat, bot in enumerate(bots):
            assert bot.record is not None
            assert len(bot.record) == len(expected[seat]) > 0
            for (observation, mask), (want_observation, want_mask) in zip(bot.record, expected[seat], strict=True):
                assert np.array_equal(observation, want_observation)
                assert np.array_equal(mask, want_mask)
        assert all(runner.refused == 0 for runner in runners)
