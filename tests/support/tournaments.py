"""Helpers of the tournament tests: tournament files, faulty entrants, where things are."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "tests" / "tournament" / "bots"
NODE_CLIENT = ROOT / "clients" / "node"
API_KEY = "tournament-test-key"


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
