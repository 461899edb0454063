"""Tournaments played through a real referee (a ``dizhu serve`` process on the tests' Redis).

Determinism of the duplicate format, outputs recomputed from the saved replays, entrants that
crash, hang, print garbage or play illegal moves, Node.js entrants of both kinds, API keys.
"""

from __future__ import annotations

import csv
import itertools
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import trustme

from dizhu.referee.replay import verify
from dizhu.referee.signing import parse_public_keys
from dizhu.tournament import cli, load_config, run_tournament, write_results
from dizhu.tournament.runner import summary_lines
from tests.support.referees import served_referee
from tests.support.tls import issue
from tests.support.tournaments import API_KEY, NODE_CLIENT, faulty_bot, write_tournament

BUNDLED = [
    {"name": "heuristic", "bot": "heuristic"},
    {"name": "random", "bot": "random"},
    {"name": "random-b", "bot": "random"},
]


def replays(output: Path) -> dict[str, dict[str, Any]]:
    return {
        folder.name: json.loads((folder / "replay.json").read_text()) for folder in sorted((output / "games").iterdir())
    }


def games_json(output: Path) -> dict[str, dict[str, Any]]:
    return {
        folder.name: json.loads((folder / "game.json").read_text()) for folder in sorted((output / "games").iterdir())
    }


class TestDuplicate:
    async def test_same_seed_same_deals_same_results_and_reports_recompute(
        self, tmp_path: Path, referee: str, redis_url: str
    ) -> None:
        runs = []
        for name in ("first", "second"):
            folder = tmp_path / name
            folder.mkdir()
            path = write_tournament(folder, BUNDLED, referee=referee, redis_url=redis_url, deal_sets=2, seed="same")
            summary = await run_tournament(load_config(path), live=False)
            assert (summary.played, summary.progress.done, summary.progress.games) == (6, 6, 6)
            runs.append(summary)
        one, two = (replays(summary.output) for summary in runs)
        assert one.keys() == two.keys() == {f"g{i:05d}" for i in range(6)}
        for game in one:
            # Different tables, the same deal and, with deterministic bots, the same play.
            assert one[game]["table_id"] != two[game]["table_id"]
            assert one[game]["deals"][0]["hands"] == two[game]["deals"][0]["hands"]
            assert one[game]["result"] == two[game]["result"]
        first, second = (summary.results for summary in runs)
        assert first is not None
        assert second is not None
        assert first["entrants"] == second["entrants"]
        assert first["pairs"] == second["pairs"]

    async def test_every_game_of_a_deal_set_deals_the_same_hands_to_the_same_seats(
        self, tmp_path: Path, referee: str, redis_url: str
    ) -> None:
        path = write_tournament(tmp_path, BUNDLED, referee=referee, redis_url=redis_url, deal_sets=1, seatings="all")
        summary = await run_tournament(load_config(path), live=False)
        saved = replays(summary.output)
        assert len(saved) == 6
        first_deals = {json.dumps(replay["deals"][0]["hands"]) for replay in saved.values()}
        assert len(first_deals) == 1
        seatings = {
            tuple(game["entrant"] for game in record["seats"]) for record in games_json(summary.output).values()
        }
        assert len(seatings) == 6  # every permutation of the three entrants
        keys = parse_public_keys((summary.output / "referee-keys.pem").read_bytes())
        for text in (summary.output / "games" / game / "replay.json" for game in saved):
            assert verify(text.read_text(), keys).ok
        # The outputs recompute identically from the saved games alone.
        written = {
            name: (summary.output / name).read_text()
            for name in ("results.json", "games.csv", "standings.csv", "leaderboard.md")
        }
        for name in written:
            (summary.output / name).unlink()
        recomputed = write_results(summary.output)
        assert {name: (summary.output / name).read_text() for name in written} == written
        assert recomputed == summary.results
        assert (summary.output / "ratings.png").read_bytes().startswith(b"\x89PNG")

    async def test_the_results_link_every_game_to_its_replay_and_the_referees_replay_viewer(
        self, tmp_path: Path, referee: str, redis_url: str
    ) -> None:
        path = write_tournament(tmp_path, BUNDLED, referee=referee, redis_url=redis_url, deal_sets=1, seatings="all")
        summary = await run_tournament(load_config(path), live=False)
        write_results(summary.output, "http://referee.example:8080/")
        rows = list(csv.DictReader((summary.output / "games.csv").read_text().splitlines()))
        leaderboard = (summary.output / "leaderboard.md").read_text()
        assert len(rows) == 6
        for row in rows:
            assert (summary.output / row["replay"]).is_file()
            assert row["viewer"] == f"http://referee.example:8080/?replay={row['table_id']}&round=1"
            assert f"[replay.json]({row['replay']}) · [view]({row['viewer']})" in leaderboard
        # Without a viewer, the saved replays are still linked.
        write_results(summary.output)
        unlinked = csv.DictReader((summary.output / "games.csv").read_text().splitlines())
        assert {row["viewer"] for row in unlinked} == {""}
        assert "[view](" not in (summary.output / "leaderboard.md").read_text()


class TestRanking:
    async def test_copies_of_one_deterministic_bot_share_the_first_rank_and_are_not_separable(
        self, tmp_path: Path, referee: str, redis_url: str
    ) -> None:
        copies = [{"name": f"copy-{i}", "bot": "heuristic"} for i in range(3)]  # the heuristic bot uses no randomness
        path = write_tournament(tmp_path, copies, referee=referee, redis_url=redis_url, deal_sets=2, seatings="all")
        summary = await run_tournament(load_config(path), live=False)
        results = summary.results
        assert results is not None
        assert results["ranked_by"] == "differential"
        ordinals = {results["entrants"][name]["rating"]["ordinal"] for name in results["leaderboard"]}
        assert len(ordinals) > 1  # the ratings tell them apart by the order of the games alone ...
        for name in results["leaderboard"]:
            entrant = results["entrants"][name]
            assert entrant["rank"] == 1  # ... the ranking does not
            assert entrant["differential"]["mean"] == 0
            assert entrant["not_separable_from"] == [other for other in results["leaderboard"] if other != name]
        assert not any(pair["significant"] for pair in results["pairs"])
        rows = list(csv.DictReader((summary.output / "standings.csv").read_text().splitlines()))
        assert [row["rank"] for row in rows] == ["1", "1", "1"]
        lines = summary_lines(summary, load_config(path))
        assert [line.split()[0] for line in lines if line.lstrip().startswith("1  copy-")] == ["1", "1", "1"]
        assert sum("not separable yet" in line for line in lines) == 3

    async def test_the_order_the_ranks_and_the_summary_agree_with_the_duplicate_result(
        self, tmp_path: Path, referee: str, redis_url: str
    ) -> None:
        path = write_tournament(tmp_path, BUNDLED, referee=referee, redis_url=redis_url, deal_sets=3, seatings="all")
        summary = await run_tournament(load_config(path), live=False)
        results = summary.results
        assert results is not None
        board = results["leaderboard"]
        differentials = [results["entrants"][name]["differential"]["mean"] for name in board]
        assert differentials == sorted(differentials, reverse=True)
        assert board[0] == "heuristic"
        for earlier, later in itertools.pairwise(board):
            assert results["entrants"][earlier]["rank"] <= results["entrants"][later]["rank"]
        # Every head-to-head line of the summary reads best first: A - B is never below zero.
        pairs = [
            line for line in summary_lines(summary, load_config(path)) if "points/game, duplicate differential" in line
        ]
        assert len(pairs) == 3
        for line in pairs:
            first, second = line.split(":")[0].split(" - ")
            assert board.index(first) < board.index(second)
            assert not line.split(": ")[1].startswith("-"), line
        table = (summary.output / "leaderboard.md").read_text()
        rows = [row for row in table.splitlines() if row.startswith("| ") and row.split(" | ")[1] in board]
        assert [row.split(" | ")[1] for row in rows[:3]] == board
        assert "Ranked by the duplicate differential" in table


class TestFaults:
    @pytest.mark.parametrize(
        ("mode", "fault"),
        [
            ("crash", "crashes"),
            ("hang", "hangs"),
            ("illegal", "illegal"),
            ("garbage", "garbage"),
            ("exit", "crashes"),
            ("flood", "garbage"),
            ("late", "timeouts"),
        ],
    )
    async def test_a_misbehaving_stdio_bot_is_recorded_and_noted_and_the_tournament_completes(
        self, tmp_path: Path, referee: str, redis_url: str, mode: str, fault: str
    ) -> None:
        entrants = [*BUNDLED[:2], faulty_bot(mode, mode)]
        # A short clock where the bot falls silent (its first timeout forfeits the game), yet one
        # the other two entrants keep up with on a loaded machine (at 0.5 s, one did not, once);
        # elsewhere a longer one.
        decision_s = 2 if mode in ("crash", "hang", "exit", "late") else 5
        clock = {"decision_s": decision_s, "timeout_policy": "forfeit"}
        path = write_tournament(tmp_path, entrants, referee=referee, redis_url=redis_url, clock=clock)
        summary = await run_tournament(load_config(path), live=False)
        assert summary.results is not None
        assert summary.results["games"] == {"scheduled": 3, "played": 3, "complete": True}
        faults = summary.results["entrants"][mode]["faults"]
        assert faults[fault] >= 3  # in each game
        for other in ("heuristic", "random"):
            assert sum(summary.results["entrants"][other]["faults"].values()) == 0
        logs = sorted((summary.output / "games").glob(f"*/seat*-{mode}.stderr.txt"))
        assert len(logs) == 3  # every game's log of the entrant is kept beside its replay
        if mode in ("crash", "hang", "exit"):
            assert faults["timeouts"] >= 1  # the referee's clock acted for the silent seat
            pids = [line for log in logs for line in log.read_text().splitlines() if line.startswith("started pid=")]
            assert len(pids) == len(set(pids)) == 3  # a fresh process for every next game
        if mode == "garbage":
            assert faults["timeouts"] == 0  # the answers after the garbage still counted
        # Every fault game.json counts for the seat has its note in the seat's log.
        for game, record in games_json(summary.output).items():
            (seat,) = (seat for seat in record["seats"] if seat["entrant"] == mode)
            assert seat["faults"].get(fault, 0) >= 1, (game, seat)
            log = (summary.output / "games" / game / f"seat{seat['seat']}-{mode}.stderr.txt").read_text()
            notes = [line for line in log.splitlines() if line.startswith("[runner] ")]
            for counted in seat["faults"]:
                assert any(note.startswith(f"[runner] {counted}: ") for note in notes), (game, counted, log)


class TestNodeEntrants:
    async def test_node_stdio_and_grpc_executables_per_game_and_persistent(
        self, tmp_path: Path, referee: str, redis_url: str, node: str
    ) -> None:
        entrants = [
            {"name": "node-stdio", "stdio": [node, str(NODE_CLIENT / "stdio-bot.mjs")]},
            {"name": "node-grpc", "command": [node, str(NODE_CLIENT / "tournament-bot.mjs")]},
            {"name": "node-many", "command": [node, str(NODE_CLIENT / "tournament-bot.mjs")], "per_game": False},
        ]
        path = write_tournament(tmp_path, entrants, referee=referee, redis_url=redis_url, clock={"decision_s": 10})
        summary = await run_tournament(load_config(path), live=False)
        assert summary.results is not None
        assert summary.results["games"]["played"] == 3
        for name in ("node-stdio", "node-grpc", "node-many"):
            entrant = summary.results["entrants"][name]
            assert entrant["games"] == 3
            assert sum(entrant["faults"].values()) == 0, entrant["faults"]
        for game, record in games_json(summary.output).items():
            assert all(seat["faults"] == {} for seat in record["seats"])
            stdio_log = next((summary.output / "games" / game).glob("seat*-node-stdio.stderr.txt")).read_text()
            assert f"{game} #" in stdio_log  # what the bot wrote on stderr for this game
            grpc_log = next((summary.output / "games" / game).glob("seat*-node-grpc.stderr.txt")).read_text()
            assert grpc_log.startswith(f"{game}: seat ")
        for replay in replays(summary.output).values():
            assert all(not action["timed_out"] for deal in replay["deals"] for action in deal["actions"])


class TestTls:
    def test_bundled_python_and_node_entrants_play_at_a_referee_serving_tls(
        self, tmp_path: Path, redis_url: str, node: str
    ) -> None:
        certificate = issue(tmp_path, trustme.CA())
        entrants = [
            {"name": "bundled", "bot": "heuristic"},
            {"name": "node-grpc", "command": [node, str(NODE_CLIENT / "tournament-bot.mjs")]},
            {
                "name": "dizhu-bot",  # told the authority by DIZHU_TLS_CA, as every executable entrant is
                "command": [sys.executable, "-m", "dizhu.cli", "bot", "--target", "{target}", "--table", "{table_id}",
                            "--token", "{seat_token}", "--bot", "random"],
            },
        ]  # fmt: skip
        with served_referee(
            redis_url, "tls", api_key=API_KEY, flags=certificate.serve_flags, credentials=certificate.credentials()
        ) as target:
            path = write_tournament(tmp_path, entrants, referee=target, redis_url=redis_url, clock={"decision_s": 10})
            status = cli.main([str(path), "--quiet", "--tls-ca", str(certificate.authority)])
        assert status == 0
        results = json.loads((tmp_path / "out" / "results.json").read_text())
        assert results["games"]["played"] == 3
        for name in ("bundled", "node-grpc", "dizhu-bot"):
            entrant = results["entrants"][name]
            assert entrant["games"] == 3
            assert sum(entrant["faults"].values()) == 0, (name, entrant["faults"])
        for replay in replays(tmp_path / "out").values():
            assert all(not action["timed_out"] for deal in replay["deals"] for action in deal["actions"])


class TestApiKey:
    def test_without_the_key_the_run_stops_with_a_clear_message(
        self, tmp_path: Path, referee: str, redis_url: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = write_tournament(tmp_path, BUNDLED, referee=referee, redis_url=redis_url)
        text = path.read_text().replace(f'api_key = "{API_KEY}"\n', "")
        path.write_text(text)
        assert cli.main([str(path), "--quiet"]) == 1
        assert "UNAUTHENTICATED" in capsys.readouterr().err
        assert cli.main([str(path), "--quiet", "--api-key", API_KEY]) == 0


class TestEntrantPrograms:
    @pytest.mark.parametrize("key", ["stdio", "command"])
    @pytest.mark.parametrize(
        ("program", "said"), [("./no-such-bot", "does not exist"), ("no-such-bot-on-path", "is not on the PATH")]
    )
    def test_a_missing_program_is_refused_naming_the_entrant_and_its_key(
        self,
        tmp_path: Path,
        referee: str,
        redis_url: str,
        capsys: pytest.CaptureFixture[str],
        key: str,
        program: str,
        said: str,
    ) -> None:
        entrants = [*BUNDLED[:2], {"name": "ghost", key: [program, "--fast"]}]
        path = write_tournament(tmp_path, entrants, referee=referee, redis_url=redis_url)
        assert cli.main([str(path), "--quiet"]) == 2
        error = capsys.readouterr().err
        assert f"entrants.ghost.{key}: the program {program!r} {said}" in error
        assert "Errno" not in error

    def test_a_program_that_cannot_be_run_is_refused_as_such(
        self, tmp_path: Path, referee: str, redis_url: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        (tmp_path / "bot.sh").write_text("#!/bin/sh\n")  # not executable
        entrants = [*BUNDLED[:2], {"name": "plain", "stdio": ["./bot.sh"]}]
        path = write_tournament(tmp_path, entrants, referee=referee, redis_url=redis_url)
        assert cli.main([str(path), "--quiet"]) == 2
        assert "entrants.plain.stdio: the program './bot.sh' is not executable" in capsys.readouterr().err
