"""Runners as real processes: resume after a kill, two runners sharing a tournament, the out-of-the-box run.

Each runner is ``python -m dizhu.cli tournament FILE`` in a child process; the referee is a
``dizhu serve`` child (module fixture) and the schedule lives in the tests' Redis. The
checks read Redis and the output folders: every game recorded exactly once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import redis

from dizhu.referee.replay import verify
from dizhu.referee.signing import Authenticity, SigningKeys, parse_public_keys, replay_digest
from dizhu.tournament import load_config
from tests.support.tournaments import faulty_bot, write_tournament

BUNDLED = [
    {"name": "heuristic", "bot": "heuristic"},
    {"name": "random", "bot": "random"},
    {"name": "random-b", "bot": "random"},
]


def runner(*args: str) -> list[str]:
    return [sys.executable, "-m", "dizhu.cli", "tournament", *args, "--quiet"]


def results_key(path: Path) -> tuple[str, str]:
    config = load_config(path)
    return config.redis_url or "", f"{config.key_prefix}:{{tournament:{config.name}}}"


def recorded(path: Path) -> dict[bytes, dict[str, object]]:
    url, base = results_key(path)
    with redis.Redis.from_url(url) as client:
        return {game: json.loads(record) for game, record in client.hgetall(f"{base}:results").items()}


def attempts(path: Path) -> dict[bytes, int]:
    url, base = results_key(path)
    with redis.Redis.from_url(url) as client:
        return {game: int(n) for game, n in client.hgetall(f"{base}:attempts").items()}


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting for its parent is not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


class TestResume:
    def test_a_killed_runner_is_resumed_without_replaying_or_double_counting(
        self, tmp_path: Path, referee: str, redis_url: str
    ) -> None:
        path = write_tournament(
            tmp_path, BUNDLED, referee=referee, redis_url=redis_url, deal_sets=2, seatings="all", concurrency=2
        )
        text = path.read_text().replace("lease_s = 5", "lease_s = 2")
        path.write_text(text)
        errors = tmp_path / "first.stderr"
        with errors.open("wb") as stderr:
            first = subprocess.Popen(runner(str(path)), stdout=subprocess.DEVNULL, stderr=stderr)
        deadline = time.monotonic() + 120
        while len(recorded(path)) < 3:
            assert first.poll() is None, errors.read_text()
            assert time.monotonic() < deadline, "the first runner recorded nothing in two minutes"
            time.sleep(0.05)
        first.send_signal(signal.SIGKILL)
        first.wait()
        before = recorded(path)
        assert 3 <= len(before) < 12
        second = subprocess.run(runner(str(path)), capture_output=True, check=False, text=True, timeout=300)
        assert second.returncode == 0, second.stderr
        after = recorded(path)
        assert sorted(after) == sorted(str(game).encode() for game in range(12))  # every game, once
        for game, record in before.items():
            assert after[game] == record  # finished games were not played again
        assert len({r["runner"] for r in after.values()}) == 2  # the killed runner's games, and the rest
        results = json.loads((tmp_path / "out" / "results.json").read_text())
        assert results["games"] == {"scheduled": 12, "played": 12, "complete": True}
        assert sorted(p.name for p in (tmp_path / "out" / "games").iterdir()) == [f"g{i:05d}" for i in range(12)]
        assert "12 of 12 games recorded" in second.stdout


class TestStrayChildren:
    def test_a_stdio_bot_whose_child_outlives_it_neither_breaks_the_run_nor_survives_it(
        self, tmp_path: Path, referee: str, redis_url: str
    ) -> None:
        # Each process of the entrant forks a child that holds its pipes for 300 s, then plays.
        entrants = [*BUNDLED[:2], faulty_bot("forker", "fork")]
        path = write_tournament(tmp_path, entrants, referee=referee, redis_url=redis_url, clock={"decision_s": 5})
        done = subprocess.run(runner(str(path)), capture_output=True, check=False, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
        assert "3 of 3 games recorded" in done.stdout
        logs = [log.read_text() for log in (tmp_path / "out" / "games").glob("*/seat*-forker.stderr.txt")]
        lines = [line for log in logs for line in log.splitlines()]
        children = [int(line.removeprefix("child pid=")) for line in lines if line.startswith("child pid=")]
        assert children  # one per process of the entrant
        deadline = time.monotonic() + 5
        while any(running(pid) for pid in children) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [pid for pid in children if running(pid)] == []  # stopped with their process group
        results = json.loads((tmp_path / "out" / "results.json").read_text())
        assert results["entrants"]["forker"]["faults"] == dict.fromkeys(
            ("timeouts", "crashes", "hangs", "illegal", "garbage"), 0
        )


class TestSharing:
    def test_two_runners_share_one_tournament_each_game_played_once(
        self, tmp_path: Path, referee: str, redis_url: str
    ) -> None:
        path = write_tournament(tmp_path, BUNDLED, referee=referee, redis_url=redis_url, deal_sets=4, concurrency=2)
        both = [
            subprocess.Popen(
                runner(str(path), "--max-games", "6", "--output", str(tmp_path / name)),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for name in ("one", "two")
        ]
        for process in both:
            out, err = process.communicate(timeout=300)
            assert process.returncode == 0, err
            assert "this runner played 6" in out
        records = recorded(path)
        assert sorted(records) == sorted(str(game).encode() for game in range(12))
        assert sorted(Counter(record["runner"] for record in records.values()).values()) == [6, 6]
        assert set(attempts(path).values()) == {1}  # nobody took a game over: each was played once
        # A runner started on the finished tournament plays nothing and writes every game out.
        done = subprocess.run(runner(str(path)), capture_output=True, check=False, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "this runner played 0" in done.stdout
        results = json.loads((tmp_path / "out" / "results.json").read_text())
        assert results["games"]["played"] == 12
        assert sum(e["games"] for e in results["entrants"].values()) == 36


class TestOutOfTheBox:
    def test_the_bundled_bots_on_an_embedded_referee_and_the_report(self, tmp_path: Path) -> None:
        output = tmp_path / "results"
        run_env = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
        done = subprocess.run(
            runner("--deal-sets", "1", "--output", str(output)),
            env=run_env,
            capture_output=True,
            check=False,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        assert "6 of 6 games recorded" in done.stdout
        assert "heuristic" in done.stdout
        for name in ("results.json", "games.csv", "standings.csv", "leaderboard.md", "ratings.png", "tournament.json"):
            assert (output / name).is_file(), name
        # Every saved game verifies offline with the one key the embedded referees shared and
        # published; results.json names each game's record by its digest.
        (key,) = parse_public_keys((output / "referee-keys.pem").read_bytes())
        private = output / "private" / "signing-key.pem"
        assert private.stat().st_mode & 0o077 == 0
        assert SigningKeys.from_pem(private.read_bytes()).key_id == key.key_id
        results = json.loads((output / "results.json").read_text())
        assert results["referee_keys"] == "referee-keys.pem"
        assert len(results["replays"]) == 6
        for game, saved in results["replays"].items():
            text = (output / "games" / game / "replay.json").read_text()
            checked = verify(text, [key])
            assert checked.ok, (game, checked.problems)
            assert checked.signature.authenticity is Authenticity.VALID
            assert saved == {"sha256": replay_digest(text), "key_id": key.key_id}
        verified = subprocess.run(
            [sys.executable, "-m", "dizhu.cli", "verify", "--key", str(output / "referee-keys.pem"), "-"],
            input=(output / "games" / "g00000" / "replay.json").read_text(),
            env=run_env,
            capture_output=True,
            check=False,
            text=True,
            timeout=60,
        )
        assert verified.returncode == 0, verified.stdout
        assert f"signed by the referee's key {key.key_id}" in verified.stdout
        (output / "leaderboard.md").unlink()
        report = subprocess.run(
            [sys.executable, "-m", "dizhu.cli", "tournament", "report", str(output)],
            env=run_env,
            capture_output=True,
            check=False,
            text=True,
            timeout=120,
        )
        assert report.returncode == 0, report.stderr
        assert (output / "leaderboard.md").read_text() in report.stdout
        assert "6 of 6 games" in report.stdout
