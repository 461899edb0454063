"""Bots from the command line (``python -m dizhu.client``, ``dizhu bot``) and the READMEs' bot, as pasted.

The READMEs' ``my_bot.py`` and ``test_my_bot.py`` blocks are written to a fresh directory
and run there with pytest, outside this project's configuration, exactly as a reader would;
the same ``my_bot.py`` then plays a seat through the command line, next to a bundled bot
of each kind, on a real referee.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dizhu.client import TableClient
from dizhu.v1 import table_pb2

ROOT = Path(__file__).resolve().parents[2]
READMES = [ROOT / "README.md", ROOT / "clients" / "python" / "README.md"]


def python_files(markdown: str) -> dict[str, str]:
    """The README's Python (and ini) blocks whose first line is ``# <file>.py`` (``# <file>.ini``), by file name."""
    files = {}
    for block in re.findall(r"```(?:python|ini)\n(.*?)```", markdown, flags=re.DOTALL):
        first = block.splitlines()[0]
        if re.fullmatch(r"# [a-z_]+\.(py|ini)", first):
            files[first[2:]] = block
    return files


def _env(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DIZHU_", "PYTEST_"))}
    return {**env, "GRPC_VERBOSITY": "NONE", **extra}


async def _command(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, *args, env=env or _env(), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


class TestReadmeSnippets:
    @pytest.mark.parametrize("readme", READMES, ids=lambda path: str(path.relative_to(ROOT)))
    def test_the_bot_and_its_test_run_as_pasted(self, readme: Path, tmp_path: Path) -> None:
        files = python_files(readme.read_text())
        assert set(files) >= {"my_bot.py", "test_my_bot.py", "pytest.ini"}, sorted(files)
        for name in ("my_bot.py", "test_my_bot.py", "pytest.ini"):
            (tmp_path / name).write_text(files[name])
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_my_bot.py"],
            cwd=tmp_path,
            env=_env(),
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        assert "1 passed" in result.stdout
        assert "Warning" not in result.stdout + result.stderr, "the reader would see a warning"
        assert "warning" not in result.stdout.splitlines()[-1], result.stdout


class TestBotCommand:
    async def test_bundled_and_user_bots_play_a_table_from_the_command_line(self, target: str, tmp_path: Path) -> None:
        (tmp_path / "my_bot.py").write_text(python_files(READMES[0].read_text())["my_bot.py"])
        async with TableClient(target) as creator:
            created = await creator.create_table(player_names=["heuristic", "random"])  # seat 2 is free
            table = ["--target", target, "--table", created.table_id]
            tokens = [seat.token for seat in created.seat_tokens]
            results = await asyncio.gather(
                _command("-m", "dizhu.client", *table, "--token", tokens[0], "--verbose"),
                _command(
                    "-m",
                    "dizhu.cli",
                    "bot",
                    *table,
                    "--bot",
                    "random",
                    "--seed",
                    "3",
                    env=_env(DIZHU_SEAT_TOKEN=tokens[1]),
                ),
                _command(
                    "-m", "dizhu.client", *table, "--name", "mine", "--bot", f"{tmp_path / 'my_bot.py'}:LowestFirst"
                ),
            )
            final = await creator.get()
        summaries = []
        for status, out, err in results:
            assert status == 0, err
            assert "Traceback" not in err
            summaries.append(json.loads(out.strip().splitlines()[-1]))
        assert [summary["seat"] for summary in summaries] == [0, 1, 2]
        assert all(summary["closed"] and summary["decisions"] > 0 for summary in summaries)
        assert all(summary["balances"] == [seat.balance for seat in final.seats] for summary in summaries)
        assert final.phase == table_pb2.PHASE_CLOSED
        assert [seat.player_name for seat in final.seats] == ["heuristic", "random", "mine"]
        assert "seat 0 " in results[0][2]  # --verbose told the decisions

    @pytest.mark.parametrize(
        ("bot", "said"),
        [
            ("nosuch", "FILE.py:CLASS"),
            ("missing_file.py:Bot", "no Python file"),
            ("dizhu.client:TableClient", "no Bot subclass named TableClient"),
            ("no_such_module_here:Bot", "cannot load no_such_module_here"),
        ],
        ids=["unknown-name", "missing-file", "not-a-bot", "missing-module"],
    )
    async def test_a_bot_that_cannot_be_loaded_is_a_usage_error(self, bot: str, said: str) -> None:
        status, _, err = await _command("-m", "dizhu.client", "--table", "t", "--bot", bot)
        assert status == 2, err
        assert said in err
        assert "Traceback" not in err

    async def test_an_unknown_table_is_a_refusal_told_plainly(self, target: str) -> None:
        status, _, err = await _command("-m", "dizhu.cli", "bot", "--target", target, "--table", "no-such-table")
        assert status == 1, err
        assert "TABLE_NOT_FOUND" in err
        assert "Traceback" not in err
