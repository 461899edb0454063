"""Hostile entrants in a confined tournament, against a real referee and real bubblewrap.

Two intruders (``hostile/intruder.py``), one stdio and one gRPC, play beside three bundled
bots: in each game they first try to read the organiser's secret, the output folder and
another entrant's folder, ``/etc/shadow``, a planted symlink and one of their own, to see
other processes, to reach Redis, the referee's TCP port and an outside address, to write
outside their folder, to signal the runner, to find secrets in their environment, to write
a file over the size limit, fill ``/tmp`` and open too many files; they
leave a ``setsid`` daemon and a file in ``/tmp``; then, by game, they fork-bomb, balloon
memory, spin CPU in children, or flood their output. The same tournament is played once
with the intruders benign, unconfined: the games without them must come out identical
(duplicate deals and seeded bots make that exact).
"""

from __future__ import annotations

import json
import os
import sys
import urllib.parse
import uuid
from pathlib import Path
from typing import Any

import pytest

from dizhu.tournament import load_config, run_tournament
from tests.support.referees import served_referee
from tests.support.sandbox import (
    HOSTILE,
    add_sandbox,
    entrant_folder,
    processes_with,
    require_bubblewrap,
    runner_cgroups,
)
from tests.support.tournaments import API_KEY, write_tournament

INTRUDERS = ("stdio-intruder", "grpc-intruder")
BUNDLED = [
    {"name": "heuristic", "bot": "heuristic"},
    {"name": "random", "bot": "random"},
    {"name": "random-b", "bot": "random"},
]
LIMITS = {"memory_mib": 160, "processes": 32, "cpu_s": 1.5, "file_size_mib": 4, "tmp_mib": 8, "open_files": 64}
#: Every escape the intruder tries (its ``probe`` lines), the TCP ones apart.
PROBES = (
    "read-secret",
    "read-output",
    "read-other-entrant",
    "read-etc-shadow",
    "follow-planted-symlink",
    "follow-own-symlink",
    "see-processes",
    "connect-outside",
    "write-own-folder",
    "write-output",
    "write-dev",
    "chmod-referee-socket",
    "signal-runner",
    "environment",
    "big-file",
    "fill-tmp",
    "open-files",
)


def tcp_address(redis_url: str) -> list[str]:
    parts = urllib.parse.urlsplit(redis_url)
    return [f"{parts.hostname}:{parts.port}"] if parts.scheme == "redis" and parts.port else []


def intruders(tmp_path: Path, plan: dict[str, Any]) -> list[dict[str, Any]]:
    """The two intruders, each in a folder of its own holding its script, its plan and a planted symlink."""
    entrants = []
    for name in INTRUDERS:
        folder = entrant_folder(tmp_path, name, HOSTILE / "intruder.py")
        (folder / "plan.json").write_text(json.dumps(plan))
        (folder / "escape").symlink_to(plan["secret"])
        kind = name.split("-")[0]
        key = "stdio" if kind == "stdio" else "command"
        entrants.append({"name": name, key: [plan["python"], "intruder.py", kind, "plan.json"], "folder": name})
    return entrants


async def play(tmp_path: Path, mode: str, *, referee: str, tcp: list[str], redis_url: str, confined: bool) -> Path:
    """The tournament with the intruders in ``mode``; its output folder."""
    tmp_path.mkdir()
    secret = tmp_path / "organiser-secret.txt"
    secret.write_text("the organiser's secret")
    marker = f"dizhu-intruder-{uuid.uuid4().hex}"
    plan = {
        "mode": mode,
        "python": sys.executable,
        "secret": str(secret),
        "output": str(tmp_path / "out"),
        "other": str(tmp_path / "other-entrant"),
        "runner_pid": os.getpid(),
        "tcp": tcp,
        "outside": "192.0.2.1:443",  # TEST-NET-1: never routed, whatever the network
        "host_tmp": f"/tmp/{marker}",
        "forbidden_env": ["REDIS_URL", "DIZHU_API_KEY", "ORGANISER_TOKEN"],
        "marker": marker,
        "limits": LIMITS,
    }
    (tmp_path / "other-entrant").mkdir()
    (tmp_path / "other-entrant" / "strategy.txt").write_text("private")
    path = write_tournament(
        tmp_path,
        BUNDLED + intruders(tmp_path, plan),
        referee=referee,
        redis_url=redis_url,
        name=f"hostile-{uuid.uuid4().hex[:8]}",
        seed="hostile",
        concurrency=10,
        # A bank absorbs a busy machine's delays of the bundled bots: their games must not differ by a timeout.
        clock={"decision_s": 0.5, "time_bank_s": 5, "timeout_policy": "auto_play"},
    )
    if confined:
        add_sandbox(path, **LIMITS)
    summary = await run_tournament(load_config(path), live=False)
    assert (summary.progress.done, summary.progress.games) == (30, 30)
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    return summary.output


def games(output: Path) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    return {
        folder.name: (
            json.loads((folder / "game.json").read_text()),
            json.loads((folder / "replay.json").read_text()),
        )
        for folder in sorted((output / "games").iterdir())
    }


def untimed(replay: dict[str, Any]) -> list[dict[str, Any]]:
    """A replay's deals with their actions, less when each was taken."""
    return [
        {
            **deal,
            "actions": [
                {k: v for k, v in action.items() if k not in ("time", "took_ms")} for action in deal["actions"]
            ],
        }
        for deal in replay["deals"]
    ]


def intruder_logs(output: Path) -> dict[str, list[str]]:
    """Per intruder, the saved logs of its games."""
    logs: dict[str, list[str]] = {name: [] for name in INTRUDERS}
    for log in sorted((output / "games").glob("*/seat*-*-intruder.stderr.txt")):
        logs[log.name.split("-", 1)[1].removesuffix(".stderr.txt")].append(log.read_text(errors="replace"))
    return logs


@pytest.mark.slow  # 30 games, most of them played by the clock for a killed intruder: about a minute
class TestHostileEntrants:
    async def test_every_attack_fails_is_the_intruders_fault_and_changes_no_other_game(
        self, tmp_path: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        require_bubblewrap()
        monkeypatch.setenv("ORGANISER_TOKEN", "not for entrants")
        monkeypatch.setenv("DIZHU_API_KEY", API_KEY)
        socket = tmp_path / "referee.sock"
        with served_referee(redis_url, "hostile", api_key=API_KEY, flags=["--unix-socket", str(socket)]) as target:
            tcp = [target, *tcp_address(redis_url)]
            common = {"referee": f"unix:{socket}", "tcp": tcp, "redis_url": redis_url}
            baseline = await play(tmp_path / "benign", "benign", confined=False, **common)
            hostile = await play(tmp_path / "hostile", "attack", confined=True, **common)
        plan = json.loads((tmp_path / "hostile" / "plan.json").read_text())

        # Games without an intruder: exactly as without the attacks. With one: the faults are its own.
        calm, played = games(baseline), games(hostile)
        assert calm.keys() == played.keys()
        untouched = [
            game for game, (record, _) in played.items() if not {s["entrant"] for s in record["seats"]} & set(INTRUDERS)
        ]
        assert len(untouched) == 3
        for game in untouched:
            assert played[game][1]["result"] == calm[game][1]["result"]
            assert untimed(played[game][1]) == untimed(calm[game][1])
        for record, _ in played.values():
            for seat in record["seats"]:
                if seat["entrant"] not in INTRUDERS:
                    assert seat["faults"] == {}, (record["game"], seat)

        # Every escape blocked, in every game each intruder played.
        logs = intruder_logs(hostile)
        for name, texts in logs.items():
            assert len(texts) == 18, name  # C(4, 2) line-ups with it, in 3 rotations
            for text in texts:
                assert "REACHED" not in text, (name, text[:2000])
                for probe in (*PROBES, *(f"connect-{address}" for address in tcp)):
                    assert f"probe {probe}: blocked" in text, (name, probe, text[:2000])

        # Each limit met was noted against the intruder, by name, for both kinds.
        for name, texts in logs.items():
            joined = "\n".join(texts)
            assert "[runner] crashes: killed: process limit 32 (processes and threads)" in joined, name
            assert "[runner] crashes: killed: memory limit 160 MiB" in joined, name
            assert "[runner] crashes: killed: CPU limit 1.5 s per game" in joined, name
            assert "bytes dropped ...]" in joined, name  # the flood, capped
        stdio_floods = [text for text in logs["stdio-intruder"] if "attack flood" in text]
        assert stdio_floods
        assert all("[runner] garbage: " in text for text in stdio_floods)  # its lines skipped

        # Nothing written outside, nothing left running, nothing of the sandboxes left behind.
        assert not Path(plan["host_tmp"]).exists()
        assert (tmp_path / "hostile" / "organiser-secret.txt").read_text() == "the organiser's secret"
        for name in INTRUDERS:
            assert sorted(p.name for p in (tmp_path / "hostile" / name).iterdir()) == [
                "escape",
                "intruder.py",
                "plan.json",
            ]
        assert not (hostile / "written").exists()
        assert processes_with(plan["marker"]) == []
        assert runner_cgroups() == []
