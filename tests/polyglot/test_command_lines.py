"""The example bots' command lines, as their READMEs tell them.

A stranded seat is taken back: ``--create`` prints the creator token beside the table id,
joining prints the seat's token at once, and ``--token`` plays that seat again after its bot
died (joining anew finds the table full). Bad arguments exit with status 2 and the usage line,
in every language alike.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from dizhu.v1 import table_pb2
from tests.support.polyglot_tables import (
    PLAY_TIMEOUT_S,
    closed_view,
    created_table,
    finish,
    start_seats,
    wait_until_full,
)

LANGUAGES = ["go", "java", "rust", "cpp", "node"]
EXAMPLE_BOTS = ["go", "java", "rust", "cpp"]


@pytest.fixture(params=LANGUAGES)
def language_bot(request: pytest.FixtureRequest) -> tuple[str, list[str]]:
    """(language, the command of its bot), built."""
    language: str = request.param
    command: list[str] = request.getfixturevalue(f"{language}_bot")
    return language, command


def seat_token_of_a_bot_that_died(bot: list[str], referee: str, table_id: str, name: str) -> str:
    """Starts a bot joining ``table_id``; kills it once it printed its seat token; the token."""
    with subprocess.Popen(
        [*bot, "--target", referee, "--table", table_id, "--name", name],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as process:
        assert process.stdout is not None
        first_line = process.stdout.readline()
        process.kill()
    joined = json.loads(first_line)
    assert joined["table_id"] == table_id
    assert joined["seat"] in (0, 1, 2)
    token: str = joined["seat_token"]
    return token


def test_a_seat_whose_bot_died_is_played_again_with_the_token_it_printed(
    language_bot: tuple[str, list[str]], go_bot: list[str], referee: str
) -> None:
    language, bot = language_bot
    created = created_table(go_bot if language == "node" else bot, referee, "3p", rounds=1)
    assert created["creator_token"], created
    table_id = created["table_id"]
    token = seat_token_of_a_bot_that_died(bot, referee, table_id, f"{language}-0")
    others = start_seats([(f"{language}-{n}", bot) for n in (1, 2)], referee, table_id)
    wait_until_full(referee, table_id)

    joining_anew = subprocess.run(
        [*bot, "--target", referee, "--table", table_id, "--name", f"{language}-3"],
        capture_output=True,
        text=True,
        timeout=PLAY_TIMEOUT_S,
        check=False,
    )
    assert joining_anew.returncode == 1
    assert "TABLE_FULL" in joining_anew.stderr

    again = subprocess.Popen([*bot, "--target", referee, "--table", table_id, "--token", token])
    finished = finish(others)
    assert again.wait(timeout=PLAY_TIMEOUT_S) == 0
    assert len(finished) == 2
    view = closed_view(referee, table_id)
    assert view.phase == table_pb2.PHASE_CLOSED
    assert sorted(seat.player_name for seat in view.seats) == [f"{language}-{n}" for n in range(3)]


@pytest.mark.parametrize("language", EXAMPLE_BOTS)
@pytest.mark.parametrize(
    "arguments",
    [
        ["--create", "--rounds", "many"],
        ["--create", "--variant", "5p"],
        ["--table", "t", "--seed", "x"],
        ["--table", "t", "--variant", "5p"],
        ["--name", "ann"],
    ],
    ids=["rounds-not-a-number", "unknown-variant", "seed-not-a-number", "unknown-variant-joining", "no-table"],
)
def test_bad_arguments_exit_2_with_the_usage_line(
    language: str, arguments: list[str], request: pytest.FixtureRequest
) -> None:
    bot: list[str] = request.getfixturevalue(f"{language}_bot")
    # A target nothing listens on: a bot that went past its arguments would fail (status 1) there.
    result = subprocess.run(
        [*bot, "--target", "127.0.0.1:9", *arguments], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 2, result.stderr
    assert "usage: " in result.stderr.lower()
