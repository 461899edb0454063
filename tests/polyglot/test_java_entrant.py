"""The Java example bot as a persistent `dizhu tournament` entrant: one JVM for every game.

A JVM started for each game and seat spends a second or more of CPU starting and compiling
before its first decision; six of them at once on a busy machine ran past the default 5 s
clock. With ``--games`` (``per_game = false``, protocol ``dizhu.exec/v1``) the runner starts
the bot once and hands it each game on standard input, and the bot plays them all, several at
once, in that one process. The clock here is generous: what is checked is that every game is
played, without a fault (how fast is a benchmark's business, not a test's).
"""

from __future__ import annotations

from pathlib import Path

from dizhu.tournament import load_config, run_tournament
from tests.support.polyglot_tables import API_KEY
from tests.support.tournaments import write_tournament


async def test_the_persistent_java_entrant_plays_every_game_in_one_process(
    tmp_path: Path, referee: str, redis_url: str, java_bot: list[str]
) -> None:
    entrants = [
        {"name": "java", "command": [*java_bot, "--games"], "per_game": False},
        {"name": "heuristic", "bot": "heuristic"},
        {"name": "random", "bot": "random"},
    ]
    path = write_tournament(
        tmp_path,
        entrants,
        referee=referee,
        redis_url=redis_url,
        referee_keys={"api_key": API_KEY},
        clock={"decision_s": 30},
        deal_sets=2,
    )
    summary = await run_tournament(load_config(path), live=False)
    assert summary.results is not None
    assert summary.results["games"]["played"] == 6
    java = summary.results["entrants"]["java"]
    assert java["games"] == 6
    assert sum(java["faults"].values()) == 0, java["faults"]
