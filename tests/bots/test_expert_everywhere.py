"""The expert bot wherever bundled bots are named: at a referee through gRPC (``BotRunner``, as
``dizhu bot`` and the web table's bots play), in a tournament (``bot = "expert"``), behind
``dizhu bot --bot``, the demo's and ``dizhu play``'s choice of bots, and as an environment opponent."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dizhu.client import HeuristicBot
from dizhu.client.bots import BOT_KINDS
from dizhu.client.command import load_bot
from dizhu.demo import bot_kinds
from dizhu.env import DouDizhuEnv
from dizhu.expert.bot import ExpertBot
from dizhu.tournament import load_config, run_tournament
from dizhu.tournament.config import BUNDLED_BOTS
from dizhu.v1 import table_pb2
from tests.support.bot_tables import bots_play_a_table
from tests.support.tournaments import write_tournament

#: Quick and untimed: a few sampled deals per decision, no clock (the tests never depend on timing).
QUICK = "expert:60s,4deals"


@pytest.mark.parametrize("variant", ["3p", "4p"])
async def test_experts_finish_a_table_at_a_referee_with_no_move_refused(target: str, variant: str) -> None:
    players = int(variant[0])
    bots = [BOT_KINDS[QUICK](seat) for seat in range(players - 1)] + [HeuristicBot()]
    final, runners = await bots_play_a_table(target, variant, bots)
    assert final.phase == table_pb2.PHASE_CLOSED
    assert final.close_reason == table_pb2.CLOSE_REASON_ROUND_LIMIT
    assert sum(seat.balance for seat in final.seats) == 0
    assert [runner.refused for runner in runners] == [0] * players
    assert all(runner.decisions > 0 for runner in runners)


async def test_a_tournament_entrant_named_expert_plays_its_games(tmp_path: Path, referee: str, redis_url: str) -> None:
    entrants = [
        {"name": "expert", "bot": QUICK},
        {"name": "heuristic", "bot": "heuristic"},
        {"name": "random", "bot": "random"},
    ]
    path = write_tournament(tmp_path, entrants, referee=referee, redis_url=redis_url, deal_sets=1)
    config = load_config(path)
    assert config.entrants[0].bot == QUICK
    summary = await run_tournament(config, live=False)
    assert summary.played == 3
    assert summary.results is not None
    expert = summary.results["entrants"]["expert"]
    assert expert["games"] == 3
    assert not any(expert["faults"].values())


def test_the_names_the_front_ends_accept_include_the_expert_and_its_budget() -> None:
    assert "expert" in BUNDLED_BOTS  # a tournament's bot = "expert"
    bot = load_bot("expert:150ms", seed=3)  # dizhu bot --bot expert:150ms --seed 3
    assert isinstance(bot, ExpertBot)
    assert bot.budget.seconds == pytest.approx(0.15)
    assert bot_kinds("3p", ["expert", "expert:1s", "heuristic"]) == ["expert", "expert:1s", "heuristic"]
    with pytest.raises(ValueError, match="expert, heuristic, learned, random"):
        bot_kinds("3p", ["expert:fast", "heuristic"])


@pytest.mark.parametrize("variant", ["3p", "4p"])
def test_the_expert_is_an_environment_opponent(variant: str) -> None:
    players = int(variant[0])
    env = DouDizhuEnv(variant=variant, opponents=[QUICK] * (players - 1), encoding="compact", reward="settlement")
    observed, _ = env.reset(seed=5)
    done, steps = False, 0
    while not done:
        observed, _, done, _, info = env.step(int(np.flatnonzero(observed["action_mask"])[0]))
        assert not info["illegal_action"]
        steps += 1
    assert steps > 0
    assert env.game.over
