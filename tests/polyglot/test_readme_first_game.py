"""Each example bot's README, step 3 as written: a table and three bots, in the shell that started the referee.

The step runs in a shell where a long-lived job is already in the background, as ``dizhu serve
&`` is in step 1: the step must return once the three bots are done, not wait for that job too
(a bare ``wait`` would). The bots are the suite's builds, placed where each README's build puts
them; the referee is the suite's, named by ``DIZHU_TARGET`` and ``DIZHU_API_KEY``, which every
bot reads.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.support.polyglot_builds import CLIENTS
from tests.support.polyglot_tables import API_KEY, PLAY_TIMEOUT_S

#: Where each README's build leaves the bot, relative to its folder.
BUILT_AT = {
    "go": "dizhu-bot",
    "java": "target/dizhu-bot.jar",
    "rust": "target/release/dizhu-bot",
    "cpp": "build/dizhu-bot",
}


def step_3(language: str) -> str:
    """The README's step 3: the lines after its ``# 3.`` comment, up to the end of the block."""
    lines = (CLIENTS / language / "README.md").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("# 3. "))
    end = next(i for i in range(start, len(lines)) if lines[i] == "```")
    return "\n".join(line for line in lines[start:end] if not line.startswith("#"))


@pytest.mark.parametrize("language", list(BUILT_AT))
def test_step_3_plays_a_table_and_returns_with_the_referee_still_in_the_background(
    language: str, referee: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    built = Path(request.getfixturevalue(f"{language}_bot")[-1])
    (tmp_path / BUILT_AT[language]).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / BUILT_AT[language]).symlink_to(built)
    # The referee of step 1, its output elsewhere: the step's is read to its end.
    script = "sleep 600 >/dev/null &\n" + step_3(language)
    env = {**os.environ, "DIZHU_TARGET": referee, "DIZHU_API_KEY": API_KEY}
    shell = subprocess.Popen(
        ["bash", "-c", script], cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        out, _ = shell.communicate(timeout=PLAY_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        out = ""
    finally:
        with contextlib.suppress(ProcessLookupError):  # the background job, and anything left of the step
            os.killpg(shell.pid, signal.SIGKILL)
        shell.wait()
    assert shell.returncode == 0, f"step 3 did not return (or failed):\n{script}\n{out}"
    finished = [json.loads(line) for line in out.splitlines() if '"balances"' in line]
    assert len(finished) == 3
    assert sum(finished[0]["balances"]) == 0
