"""The ``dizhu`` command line run from this source tree, and what a clean exit looks like."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
USAGE, FAILED, NOT_A_REPLAY, BROKEN_PIPE = 2, 1, 3, 141
#: Generous: a server that fails must fail long before this (a safety net, not a timing assertion).
TIMEOUT_S = 120


def command_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("DIZHU_") and key != "REDIS_URL"}
    paths = [str(ROOT / "server"), str(ROOT / "clients" / "python"), env.get("PYTHONPATH", "")]
    env.update(PYTHONPATH=os.pathsep.join(filter(None, paths)), GRPC_VERBOSITY="NONE", **(extra or {}))
    return env


def dizhu(*args: str, env: Mapping[str, str] | None = None, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dizhu.cli", *args],
        env=command_env(env),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def assert_clean(result: subprocess.CompletedProcess[str], status: int, *said: str) -> None:
    """``result`` exited with ``status``, says each of ``said``, and shows no traceback."""
    output = result.stdout + result.stderr
    assert result.returncode == status, output
    assert "Traceback" not in output, output
    assert "Exception ignored" not in output, output
    for words in said:
        assert words in output, output
