"""The bundled ``learned`` bot (``dizhu.env.learned``: the policy ``examples/imitation.py`` trains,
shipped weights): a ``PolicyBot`` wherever bundled bots are named -- at a referee through gRPC, in a
tournament, behind ``dizhu bot --bot``, the demo's and ``dizhu play``'s choice, the web table's bots
and as an environment opponent -- and it decides from its seat's view only."""

from __future__ import annotations

import json
from importlib.metadata import EntryPoint
from pathlib import Path

import numpy as np
import pytest

from dizhu.client import HeuristicBot
from dizhu.client.bots import BOT_ENTRY_POINTS, BOT_KINDS, BotCatalogue
from dizhu.client.command import load_bot
from dizhu.demo import bot_kinds
from dizhu.env import DouDizhuEnv, action_table, encoding
from dizhu.env.bot import PolicyBot
from dizhu.env.learned import FEATURES_VERSION, LearnedBot, MlpPolicy, shipped_weights
from dizhu.rules import VARIANTS
from dizhu.tournament import load_config, run_tournament
from dizhu.tournament.config import BUNDLED_BOTS
from dizhu.v1 import table_pb2
from tests.support.bot_tables import bots_play_a_table
from tests.support.tournaments import write_tournament
from tests.support.web import start_web_referee, view_once_the_bots_play


@pytest.mark.parametrize("variant", ["3p", "4p"])
def test_the_package_ships_weights_for_each_variant_of_the_current_features(variant: str) -> None:
    policy = MlpPolicy.load(shipped_weights(variant))
    assert policy.variant.name == variant
    assert shipped_weights(variant).stat().st_size < 1_000_000  # small enough to ship in the wheel
    coder = encoding("compact", VARIANTS[variant])
    mask = np.zeros(action_table(variant).size, dtype=np.int8)
    mask[[0, 1, 2, 3]] = 1  # an auction: pass or bid 1 to 3
    assert policy(np.zeros(coder.size, dtype=np.int8), mask) in {0, 1, 2, 3}


def test_weights_of_other_features_are_refused(tmp_path: Path) -> None:
    policy = MlpPolicy.load(shipped_weights("3p"))
    stale = tmp_path / "stale.npz"
    np.savez(stale, features_version=np.int64(FEATURES_VERSION + 1), variant=np.str_("3p"), **policy.weights)
    with pytest.raises(ValueError, match="features version"):
        MlpPolicy.load(stale)


@pytest.mark.parametrize("variant", ["3p", "4p"])
async def test_learned_bots_finish_a_table_at_a_referee_with_no_move_refused(target: str, variant: str) -> None:
    players = int(variant[0])
    bots = [BOT_KINDS["learned"](seat) for seat in range(players - 1)] + [HeuristicBot()]
    assert all(isinstance(bot, PolicyBot) for bot in bots[:-1])
    final, runners = await bots_play_a_table(target, variant, bots)
    assert final.phase == table_pb2.PHASE_CLOSED
    assert sum(seat.balance for seat in final.seats) == 0
    assert [runner.refused for runner in runners] == [0] * players
    assert all(runner.decisions > 0 for runner in runners)


async def test_a_tournament_entrant_named_learned_plays_its_games(tmp_path: Path, referee: str, redis_url: str) -> None:
    entrants = [
        {"name": "learned", "bot": "learned"},
        {"name": "heuristic", "bot": "heuristic"},
        {"name": "random", "bot": "random"},
    ]
    path = write_tournament(tmp_path, entrants, referee=referee, redis_url=redis_url, deal_sets=1)
    summary = await run_tournament(load_config(path), live=False)
    assert summary.played == 3
    assert summary.results is not None
    learned = summary.results["entrants"]["learned"]
    assert learned["games"] == 3
    assert not any(learned["faults"].values())


def test_the_names_the_front_ends_accept_include_learned() -> None:
    assert "learned" in BUNDLED_BOTS  # a tournament's bot = "learned"
    assert isinstance(load_bot("learned", seed=3), LearnedBot)  # dizhu bot --bot learned
    assert bot_kinds("4p", ["learned", "expert", "heuristic", "random"]) == ["learned", "expert", "heuristic", "random"]


async def test_the_web_tables_bots_api_seats_learned_bots(redis_url: str) -> None:
    async with start_web_referee(redis_url) as web_referee, web_referee.native() as person:
        created = await person.create_table(round_limit=1, next_round=table_pb2.NEXT_ROUND_WHEN_ALL_SETTLED)
        await person.join("person")
        status, _, body = await web_referee.http(
            "POST",
            "/api/bots",
            json.dumps({"table_id": created.table_id, "bots": ["learned", "learned"]}).encode(),
            {"content-type": "application/json"},
        )
        view = await view_once_the_bots_play(person)
    assert (status, json.loads(body)) == (200, {"seats": [1, 2]})
    assert [seat.player_name for seat in view.seats] == ["person", "Bob (learned bot)", "Cyd (learned bot)"]


@pytest.mark.parametrize("variant", ["3p", "4p"])
def test_learned_is_an_environment_opponent(variant: str) -> None:
    players = int(variant[0])
    env = DouDizhuEnv(variant=variant, opponents=["learned"] * (players - 1), encoding="compact", reward="settlement")
    observed, _ = env.reset(seed=5)
    done = False
    while not done:
        observed, _, done, _, info = env.step(int(np.flatnonzero(observed["action_mask"])[0]))
        assert not info["illegal_action"]
    assert env.game.over


def test_a_declared_bot_that_cannot_be_imported_here_is_no_key_of_the_catalogue() -> None:
    """As ``learned`` where the [env] extra (numpy) is not installed: every front end then refuses
    the name with the list of names, rather than failing when the bot is made."""
    catalogue = BotCatalogue({"heuristic": HeuristicBot}, BOT_ENTRY_POINTS)
    catalogue._installed()["broken"] = EntryPoint("broken", "no_such_module_here:Bot", BOT_ENTRY_POINTS)
    assert "broken" not in catalogue
    with pytest.raises(KeyError, match="cannot be loaded here"):
        catalogue["broken"]
    assert "heuristic" in catalogue
