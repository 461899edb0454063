"""One bot of each language at one table: a 4p table played to the end, and a ``dizhu tournament`` of them.

The Go, Java, Rust and C++ example bots share a 4p table they join themselves, and then play
a duplicate 4p tournament as gRPC executables (``command`` entrants, the seat handed to them in
``DIZHU_TARGET``, ``DIZHU_TABLE_ID``, ``DIZHU_SEAT_TOKEN``), every game to its end with no
fault: no crash, no decision left to the clock.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from dizhu.tournament import cli
from dizhu.v1 import table_pb2
from tests.support.polyglot_tables import API_KEY, closed_view, create_table, play


def test_a_4p_table_with_one_bot_of_each_language_is_played_to_the_end(
    go_bot: list[str], java_bot: list[str], rust_bot: list[str], cpp_bot: list[str], referee: str
) -> None:
    bots = {"go": go_bot, "java": java_bot, "rust": rust_bot, "cpp": cpp_bot}
    table_id = create_table(rust_bot, referee, "4p", rounds=1)
    finished = play(list(bots.items()), referee, table_id)
    assert sorted(result["seat"] for result in finished.values()) == [0, 1, 2, 3]
    view = closed_view(referee, table_id)
    assert view.phase == table_pb2.PHASE_CLOSED
    assert view.close_reason == table_pb2.CLOSE_REASON_ROUND_LIMIT
    assert view.last_settlement.outcome in (table_pb2.ROUND_OUTCOME_LANDLORD_WON, table_pb2.ROUND_OUTCOME_FARMERS_WON)
    balances = [seat.balance for seat in view.seats]
    assert sum(balances) == 0
    assert any(balances)
    assert all(result["balances"] == balances for result in finished.values())
    assert sorted(seat.player_name for seat in view.seats) == sorted(bots)


def _toml(value: object) -> str:
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    return str(value)


def test_each_bot_is_a_tournament_entrant(
    go_bot: list[str],
    java_bot: list[str],
    rust_bot: list[str],
    cpp_bot: list[str],
    referee: str,
    redis_url: str,
    tmp_path: Path,
) -> None:
    entrants = {"go": go_bot, "java": java_bot, "rust": rust_bot, "cpp": cpp_bot}
    lines = [
        f'name = "poly-{uuid.uuid4().hex[:10]}"',
        'variant = "4p"',
        "deal_sets = 1",
        'seatings = "rotations"',
        "concurrency = 2",
        'output = "out"',
        "[referee]",
        f"targets = {_toml([referee])}",
        f"api_key = {_toml(API_KEY)}",
        f"redis_url = {_toml(redis_url)}",
        f'key_prefix = "pt-{uuid.uuid4().hex[:8]}"',
        "lease_s = 5",
        # Generous: only a stalled bot meets the clock, and a JVM's first call can take seconds.
        "[clock]",
        "decision_s = 30",
        "first_decision_s = 60",
    ]
    for name, command in entrants.items():
        lines += ["[[entrants]]", f"name = {_toml(name)}", f"command = {_toml(command)}"]
    path = tmp_path / "tournament.toml"
    path.write_text("\n".join(lines) + "\n")
    assert cli.main([str(path), "--quiet"]) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["games"]["played"] == 4
    for name in entrants:
        entrant = results["entrants"][name]
        assert entrant["games"] == 4
        assert sum(entrant["faults"].values()) == 0, (name, entrant["faults"])
