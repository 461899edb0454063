"""``dizhu demo`` end to end: a referee, an embedded Redis and three bots in one process."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _demo(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "server"), str(ROOT / "clients" / "python"), *filter(None, [env.get("PYTHONPATH")])]
    )
    return subprocess.run(
        [sys.executable, "-m", "dizhu.cli", "demo", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


class TestDemo:
    def test_one_round_is_narrated_settled_and_verified(self) -> None:
        result = _demo("--rounds", "1")
        assert result.returncode == 0, result.stdout + result.stderr
        assert "Traceback" not in result.stdout + result.stderr, result.stderr
        assert "Settlement of round 1: stake" in result.stdout
        assert "sha256(seed) == commitment ✓" in result.stdout
        assert "The table is closed (round_limit)" in result.stdout

    def test_a_seeded_4p_game_with_random_bots_is_reproducible(self) -> None:
        args = ("--variant", "4p", "--seed", "ab" * 32, "--bots", "random,heuristic,random,heuristic")
        first, second = _demo(*args), _demo(*args)
        assert first.returncode == 0, first.stdout + first.stderr
        strip = [line for line in first.stdout.splitlines() if "listening on" not in line and "Table " not in line]
        again = [line for line in second.stdout.splitlines() if "listening on" not in line and "Table " not in line]
        assert strip == again
        assert "Seed revealed: " + "ab" * 32 in first.stdout
        # Each play the referee says doubled is told as such, as many as the settlement counts.
        told = first.stdout.count("the stake doubles!")
        settled = sum(int(found) for found in re.findall(r"(\d+) doubling\(s\)", first.stdout))
        assert told == settled
        # After each closed trick the narration names who leads, as the referee said.
        assert first.stdout.count("who leads next") > 0

    def test_redeals_and_later_rounds_are_narrated_and_every_seed_checks_out(self) -> None:
        """Seed 000a..., three random bots: everybody passes the first deal; then a second round."""
        result = _demo("--rounds", "2", "--seed", "000a" * 16, "--bots", "random,random,random")
        assert result.returncode == 0, result.stdout + result.stderr
        lines = result.stdout.splitlines()
        assert "Everybody passed: the cards are thrown in and dealt again." in lines
        assert "=== Round 1 (deal 2, redeal 1) ===" in lines
        assert "=== Round 2 (deal 1) ===" in lines
        reveals = [line for line in lines if line.startswith("Seed revealed: ")]
        assert len(reveals) == 3
        assert all(line.endswith("sha256(seed) == commitment ✓") for line in reveals)

    def test_local_demo_still_works(self) -> None:
        result = _demo("--local")
        assert result.returncode == 0, result.stderr
        assert "Seed revealed" in result.stdout

    def test_wrong_number_of_bots_is_refused(self) -> None:
        result = _demo("--bots", "random,random")
        assert result.returncode == 2
        assert "--bots needs 3 names" in result.stderr
