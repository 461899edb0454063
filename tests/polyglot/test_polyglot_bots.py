"""The example bots of clients/<language>, each built with its own toolchain, play against a real referee.

For each language, three bots create and join a 3p table, bid, play the moves RulesService
lists until the table closes by its round limit, reading the table only when a change may ask
something of their seat; and a refusal's google.rpc details are read and printed (status,
ErrorInfo reason without the ERROR_REASON_ prefix, metadata).
"""

from __future__ import annotations

import subprocess

import pytest

from dizhu.v1 import table_pb2
from tests.support.polyglot_tables import closed_view, create_table, play

LANGUAGES = ["go", "java", "rust", "cpp"]


@pytest.fixture(params=LANGUAGES)
def language_bot(request: pytest.FixtureRequest) -> tuple[str, list[str]]:
    """(language, the command of its bot), built."""
    language: str = request.param
    command: list[str] = request.getfixturevalue(f"{language}_bot")
    return language, command


def test_three_bots_of_a_language_play_a_3p_table_to_its_round_limit(
    language_bot: tuple[str, list[str]], referee: str
) -> None:
    language, bot = language_bot
    table_id = create_table(bot, referee, "3p", rounds=2)
    finished = play([(f"{language}-{n}", bot) for n in range(3)], referee, table_id)
    assert sorted(result["seat"] for result in finished.values()) == [0, 1, 2]
    assert all(result["decisions"] > 0 for result in finished.values())
    view = closed_view(referee, table_id)
    assert view.phase == table_pb2.PHASE_CLOSED
    assert view.close_reason == table_pb2.CLOSE_REASON_ROUND_LIMIT
    assert view.round == 2
    balances = [seat.balance for seat in view.seats]
    assert all(result["balances"] == balances for result in finished.values())
    assert sum(balances) == 0
    assert sorted(seat.player_name for seat in view.seats) == [f"{language}-{n}" for n in range(3)]
    # Each bot reads its view when a change may ask something of its seat (the events' next_seat),
    # not after every move of the others.
    decisions = sum(result["decisions"] for result in finished.values())
    for result in finished.values():
        assert 0 < result["reads"] < decisions - result["decisions"], finished


def test_a_refusal_is_read_from_its_error_info(language_bot: tuple[str, list[str]], referee: str) -> None:
    language, bot = language_bot
    result = subprocess.run(
        [*bot, "--target", referee, "--table", "no-such-table", "--name", language],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert "JoinTable: NOT_FOUND TABLE_NOT_FOUND: " in result.stderr
    assert "table_id=no-such-table" in result.stderr
