"""Fixtures of the tournament tests: a real ``dizhu serve`` referee over the tests' Redis, tournament files.

The referee is a separate process (``dizhu.testing.serve_process``) requiring an API key,
as an organiser's external referee would; every tournament gets a fresh name and key
prefix, so tests never see each other's schedules. Nothing is mocked.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# Before gRPC loads: keep its core's own logging out of the test output.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

import pytest

from dizhu.testing import serve_process

ROOT = Path(__file__).resolve().parents[2]
BOTS = Path(__file__).resolve().parent / "bots"
NODE_CLIENT = ROOT / "clients" / "node"
API_KEY = "tournament-test-key"


@pytest.fixture(scope="module")
def referee(redis_url: str) -> Iterator[str]:
    """``"127.0.0.1:<port>"`` of a ``dizhu serve`` child requiring :data:`API_KEY`, for the module."""
    flags = ["--key-prefix", f"tref-{uuid.uuid4().hex[:8]}", "--api-key", API_KEY, "--log-level", "warning"]
    with serve_process(redis_url, args=[*flags, "--grace", "1"]) as process:
        yield process.target


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    return str(value)


def write_tournament(
    folder: Path,
    entrants: list[dict[str, Any]],
    *,
    referee: str,
    redis_url: str,
    clock: dict[str, Any] | None = None,
    referee_keys: dict[str, Any] | None = None,
    **top: Any,
) -> Path:
    """A tournament file in ``folder`` (fresh name and key prefix), playing on ``referee``; its path.

    ``referee_keys``: further keys of its ``[referee]`` table."""
    top = {"name": f"t-{uuid.uuid4().hex[:10]}", "deal_sets": 1, "seatings": "rotations", "output": "out", **top}
    lines = [f"{key} = {toml_value(value)}" for key, value in top.items()]
    keys = {
        "targets": [referee],
        "api_key": API_KEY,
        "redis_url": redis_url,
        "key_prefix": f"tt-{uuid.uuid4().hex[:8]}",
        "lease_s": 5,
        **(referee_keys or {}),
    }
    lines += ["[referee]", *(f"{key} = {toml_value(value)}" for key, value in keys.items())]
    lines += ["[clock]", *(f"{key} = {toml_value(value)}" for key, value in (clock or {}).items())]
    for entrant in entrants:
        lines += ["[[entrants]]", *(f"{key} = {toml_value(value)}" for key, value in entrant.items())]
    path = folder / "tournament.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def faulty_bot(name: str, mode: str) -> dict[str, Any]:
    """A stdio entrant running ``bots/faulty_stdio_bot.py MODE``."""
    return {"name": name, "stdio": [sys.executable, str(BOTS / "faulty_stdio_bot.py"), mode]}


@pytest.fixture(scope="session")
def node() -> str:
    """The ``node`` binary, with clients/node's dependencies installed (``npm ci`` when missing)."""
    node = shutil.which("node")
    npm = shutil.which("npm")
    if node is None or npm is None:
        pytest.fail("node and npm must be on PATH (Node.js >= 18) for the Node entrants' tests", pytrace=False)
    if not (NODE_CLIENT / "node_modules" / "@grpc" / "grpc-js").is_dir():
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=NODE_CLIENT,
            capture_output=True,
            check=False,
            text=True,
            timeout=300,
        )
        if done.returncode != 0:
            pytest.fail(f"npm ci failed in {NODE_CLIENT}:\n{done.stdout}\n{done.stderr}", pytrace=False)
    return node
