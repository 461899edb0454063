"""clients/go: the Go example bot, built with ``go`` from proto/ by ``buf generate``, plays against a real referee.

Three of them create and join a 3p table, bid, play the moves RulesService lists until the
table closes by its round limit; a refusal's google.rpc details are read and printed.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from polyglot_builds import BUF, BUILD, ROOT
from polyglot_tables import closed_view, create_table, play

from dizhu.v1 import table_pb2


def test_three_go_bots_play_a_3p_table_to_its_round_limit(go_bot: list[str], referee: str) -> None:
    table_id = create_table(go_bot, referee, "3p", rounds=2)
    finished = play([(f"go-{n}", go_bot) for n in range(3)], referee, table_id)
    assert sorted(result["seat"] for result in finished.values()) == [0, 1, 2]
    assert all(result["decisions"] > 0 for result in finished.values())
    view = closed_view(referee, table_id)
    assert view.phase == table_pb2.PHASE_CLOSED
    assert view.close_reason == table_pb2.CLOSE_REASON_ROUND_LIMIT
    assert view.round == 2
    balances = [seat.balance for seat in view.seats]
    assert all(result["balances"] == balances for result in finished.values())
    assert sum(balances) == 0
    assert sorted(seat.player_name for seat in view.seats) == ["go-0", "go-1", "go-2"]


def test_a_refusal_is_read_from_its_error_info(go_bot: list[str], referee: str) -> None:
    result = subprocess.run(
        [*go_bot, "--target", referee, "--table", "no-such-table", "--name", "go"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert "JoinTable: NOT_FOUND TABLE_NOT_FOUND: " in result.stderr
    assert "table_id=no-such-table" in result.stderr


def test_go_stubs_generate_without_managed_mode_or_import_path_flags(go_bot: list[str], tmp_path: Path) -> None:
    """go_package in the files is enough: a plain template, as with ``protoc --go_out``, needs no M flags."""
    template = json.dumps(
        {
            "version": "v2",
            "plugins": [
                {"local": "protoc-gen-go", "out": str(tmp_path), "opt": "paths=source_relative"},
                {"local": "protoc-gen-go-grpc", "out": str(tmp_path), "opt": "paths=source_relative"},
            ],
        }
    )
    path = f"{BUILD / 'go' / 'bin'}{os.pathsep}{os.environ['PATH']}"
    result = subprocess.run(
        [str(BUF), "generate", "--template", template],
        cwd=ROOT / "proto",
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "package dizhuv1\n" in (tmp_path / "dizhu" / "v1" / "table_service_grpc.pb.go").read_text()
