"""The bundled bots as environment opponents decide as they do at a real referee: the same seeded
rounds, played both ways, give the learner the same observations and the same reward."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from dizhu.client import BotRunner, HeuristicBot, RandomBot, TableClient
from dizhu.client.bot import Bot
from dizhu.env import DouDizhuEnv
from dizhu.env.bot import PolicyBot
from dizhu.env.opponents import BotOpponent, bundled_bot
from dizhu.testing import local_referee
from tests.support.env_referee import create_seeded_table, hashed_policy


def bots_for(kinds: list[str], game: int) -> list[Bot]:
    return [HeuristicBot() if kind == "heuristic" else RandomBot(f"{game}-{seat}") for seat, kind in enumerate(kinds)]


def play_in_the_environment(
    variant: str, kinds: list[str], game: int, seed: bytes, dealer: int
) -> tuple[list[tuple[np.ndarray, np.ndarray]], float]:
    opponents = [BotOpponent(bot) for bot in bots_for(kinds, game)]
    env = DouDizhuEnv(variant=variant, seat=0, opponents=opponents, reward="settlement", spring=True)
    observed, _ = env.reset(options={"round_seed": seed, "dealer": dealer})
    seen = []
    done, reward = False, 0.0
    while not done:
        seen.append((observed["observation"], observed["action_mask"]))
        observed, paid, done, _, info = env.step(hashed_policy(observed["observation"], observed["action_mask"]))
        reward += float(paid)
        assert not info["illegal_action"]
    return seen, reward


@pytest.mark.parametrize(
    ("variant", "kinds"),
    [("3p", ["heuristic", "heuristic"]), ("3p", ["random", "heuristic"]), ("4p", ["heuristic", "random", "heuristic"])],
)
async def test_bot_opponents_play_as_they_do_at_a_referee(variant: str, kinds: list[str]) -> None:
    players = int(variant[0])
    for game in range(3):
        seed = bytes([game + 7]) * 32
        dealer = game % players
        async with local_referee(log_level=None) as target, TableClient(target) as creator:
            created = await create_seeded_table(creator, variant, seed, dealer)
            learner = PolicyBot(hashed_policy, encoding="douzero")
            learner.record = []
            bots: list[Bot] = [learner, *bots_for(kinds, game)]
            runners = [
                BotRunner(bot, creator.for_seat(seat.token))
                for bot, seat in zip(bots, created.seat_tokens, strict=True)
            ]
            await asyncio.gather(*(runner.run() for runner in runners))
            final = await creator.get()
        expected, reward = play_in_the_environment(variant, kinds, game, seed, dealer)
        assert float(final.seats[0].balance) == reward
        assert len(learner.record) == len(expected) > 0
        for (observation, mask), (want_observation, want_mask) in zip(learner.record, expected, strict=True):
            assert np.array_equal(observation, want_observation)
            assert np.array_equal(mask, want_mask)
        assert all(runner.refused == 0 for runner in runners)


def test_bundled_bots_are_named_as_opponents_and_seeded_by_the_reset(variant: str, engine: str) -> None:
    players = int(variant[0])
    kinds = (["random", "heuristic"] * 2)[: players - 1]

    def episode(seed: int) -> list[int]:
        env = DouDizhuEnv(variant=variant, opponents=kinds, encoding="compact", engine=engine)
        observed, _ = env.reset(seed=seed)
        actions, done = [], False
        while not done:
            actions.append(int(np.flatnonzero(observed["action_mask"])[0]))
            observed, _, done, _, info = env.step(actions[-1])
            assert not info["illegal_action"]
        return [*actions, *env.game.seen.hand_sizes[0].tolist()]

    assert episode(3) == episode(3)
    assert len({tuple(episode(seed)) for seed in range(4)}) > 1


def test_an_unknown_bot_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="unknown bot 'clever'"):
        DouDizhuEnv(opponents=["clever", "random"])
    with pytest.raises(ValueError, match="expected one of expert, heuristic, learned, random"):
        bundled_bot("clever")
