"""Tables played by the example bots' processes against a referee, and what they print.

Every bot takes the same command line (``--create``, ``--table``, ``--name``, ``--target``,
``--api-key``) and ends by printing ``{"table_id", "seat", "decisions", "balances"}`` as its
last line of standard output.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Sequence
from typing import Any

from dizhu.client import TableClient
from dizhu.v1 import table_pb2

API_KEY = "polyglot-test-key"
# A hang guard only: a table of one or two rounds takes seconds.
PLAY_TIMEOUT_S = 240


def create_table(bot: Sequence[str], referee: str, variant: str, rounds: int) -> str:
    """A new table, created by the bot's ``--create``; its id."""
    created = subprocess.run(
        [*bot, "--create", "--target", referee, "--api-key", API_KEY, "--variant", variant, "--rounds", str(rounds)],
        capture_output=True,
        text=True,
        timeout=PLAY_TIMEOUT_S,
        check=False,
    )
    assert created.returncode == 0, f"{bot} --create failed:\n{created.stdout}\n{created.stderr}"
    table_id: str = json.loads(created.stdout.strip().splitlines()[-1])["table_id"]
    return table_id


def play(bots: Sequence[tuple[str, Sequence[str]]], referee: str, table_id: str) -> dict[str, dict[str, Any]]:
    """Each (name, command) joins ``table_id`` under its name, all at once, and plays it to the end;
    what each printed last, by name."""
    processes = {
        name: subprocess.Popen(
            [*command, "--target", referee, "--table", table_id, "--name", name],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, command in bots
    }
    finished: dict[str, dict[str, Any]] = {}
    failures = []
    for name, process in processes.items():
        try:
            out, err = process.communicate(timeout=PLAY_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
        if process.returncode != 0:
            failures.append(f"{name} exited with {process.returncode}:\n{out}\n{err[-3000:]}")
        else:
            finished[name] = json.loads(out.strip().splitlines()[-1])
    assert not failures, "\n".join(failures)
    return finished


def closed_view(referee: str, table_id: str) -> table_pb2.TableView:
    """The table as a spectator reads it through the Python SDK."""

    async def read() -> table_pb2.TableView:
        async with TableClient(referee, table_id=table_id) as spectator:
            return await spectator.get()

    return asyncio.run(read())
