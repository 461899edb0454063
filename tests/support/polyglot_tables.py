"""Tables played by the example bots' processes against a referee, and what they print.

Every bot takes the same command line (``--create``, ``--table``, ``--name``, ``--target``,
``--api-key``) and ends by printing ``{"table_id", "seat", "decisions", "balances"}`` as its
last line of standard output.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import subprocess
import tempfile
import time
from collections.abc import Sequence
from typing import IO, Any

from dizhu.client import TableClient
from dizhu.v1 import table_pb2

API_KEY = "polyglot-test-key"
# A hang guard only: a table of one or two rounds takes seconds.
PLAY_TIMEOUT_S = 240


def created_table(bot: Sequence[str], referee: str, variant: str, rounds: int) -> dict[str, Any]:
    """A new table, created by the bot's ``--create``; what it printed (``table_id``, ``creator_token``)."""
    created = subprocess.run(
        [*bot, "--create", "--target", referee, "--api-key", API_KEY, "--variant", variant, "--rounds", str(rounds)],
        capture_output=True,
        text=True,
        timeout=PLAY_TIMEOUT_S,
        check=False,
    )
    assert created.returncode == 0, f"{bot} --create failed:\n{created.stdout}\n{created.stderr}"
    printed: dict[str, Any] = json.loads(created.stdout.strip().splitlines()[-1])
    return printed


def create_table(bot: Sequence[str], referee: str, variant: str, rounds: int) -> str:
    """A new table, created by the bot's ``--create``; its id."""
    table_id: str = created_table(bot, referee, variant, rounds)["table_id"]
    return table_id


@dataclasses.dataclass(frozen=True)
class Seated:
    """A bot's process, its standard output and error going to files (a pipe nobody reads
    while it runs could fill and stall it)."""

    process: subprocess.Popen[str]
    out: IO[str]
    err: IO[str]

    def output(self) -> tuple[str, str]:
        """What it wrote to standard output and error so far."""
        self.out.seek(0)
        self.err.seek(0)
        return self.out.read(), self.err.read()


def start_seats(bots: Sequence[tuple[str, Sequence[str]]], referee: str, table_id: str) -> dict[str, Seated]:
    """Each (name, command) started, joining ``table_id`` under its name; the processes by name."""
    seated = {}
    for name, command in bots:
        # Closed by finish(), once the bot ended.
        out, err = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")  # noqa: SIM115
        process = subprocess.Popen(
            [*command, "--target", referee, "--table", table_id, "--name", name], stdout=out, stderr=err, text=True
        )
        seated[name] = Seated(process, out, err)
    return seated


def finish(seated: dict[str, Seated]) -> dict[str, dict[str, Any]]:
    """Waits for each bot to play its table to the end; what each printed last, by name. Fails,
    with their output, unless every one exited 0: as soon as one fails (its table would wait
    for it for ever), or after :data:`PLAY_TIMEOUT_S` in all."""
    deadline = time.monotonic() + PLAY_TIMEOUT_S
    processes = [bot.process for bot in seated.values()]
    while time.monotonic() < deadline and any(process.poll() is None for process in processes):
        if any(process.returncode not in (None, 0) for process in processes):
            break
        time.sleep(0.1)
    finished: dict[str, dict[str, Any]] = {}
    failures = []
    for name, bot in seated.items():
        if bot.process.poll() is None:
            bot.process.kill()
        bot.process.wait()
        out, err = bot.output()
        bot.out.close()
        bot.err.close()
        if bot.process.returncode != 0:
            failures.append(f"{name} exited with {bot.process.returncode}:\n{out}\n{err[-3000:]}")
        else:
            finished[name] = json.loads(out.strip().splitlines()[-1])
    assert not failures, "\n".join(failures)
    return finished


def play(bots: Sequence[tuple[str, Sequence[str]]], referee: str, table_id: str) -> dict[str, dict[str, Any]]:
    """Each (name, command) joins ``table_id`` under its name, all at once, and plays it to the end;
    what each printed last, by name."""
    return finish(start_seats(bots, referee, table_id))


def split_into_tables(clients: dict[str, Sequence[str]], seats: int) -> list[list[tuple[str, Sequence[str]]]]:
    """The clients as the players of tables of ``seats`` seats each, in the order given."""
    players = list(clients.items())
    assert len(players) % seats == 0, f"{len(players)} clients do not fill tables of {seats}"
    return [players[start : start + seats] for start in range(0, len(players), seats)]


def wait_until_full(referee: str, table_id: str, timeout_s: float = PLAY_TIMEOUT_S) -> None:
    """Returns once every seat of the table is taken; fails if none gets there within ``timeout_s``."""

    async def watch() -> None:
        async with TableClient(referee, table_id=table_id) as client:
            deadline = asyncio.get_running_loop().time() + timeout_s
            while not all(seat.occupied for seat in (await client.get()).seats):
                assert asyncio.get_running_loop().time() < deadline, f"table {table_id} never filled"
                await asyncio.sleep(0.05)

    asyncio.run(watch())


def wait_until_playing(referee: str, table_ids: Sequence[str], timeout_s: float = PLAY_TIMEOUT_S) -> None:
    """Returns once every one of the tables has all its seats taken and is in its play phase
    (mid-round); fails if one closes first, or none gets there within ``timeout_s``."""

    async def watch() -> None:
        clients = [TableClient(referee, table_id=table_id) for table_id in table_ids]
        try:
            deadline = asyncio.get_running_loop().time() + timeout_s
            while True:
                views = [await client.get() for client in clients]
                closed = [view.table_id for view in views if view.phase == table_pb2.PHASE_CLOSED]
                assert not closed, f"tables {closed} closed before they were caught mid-round"
                if all(view.phase == table_pb2.PHASE_PLAY for view in views):
                    return
                assert asyncio.get_running_loop().time() < deadline, "the tables never got to their play phase"
                await asyncio.sleep(0.02)
        finally:
            for client in clients:
                await client.close()

    asyncio.run(watch())


def closed_view(referee: str, table_id: str) -> table_pb2.TableView:
    """The table as a spectator reads it through the Python SDK."""

    async def read() -> table_pb2.TableView:
        async with TableClient(referee, table_id=table_id) as spectator:
            return await spectator.get()

    return asyncio.run(read())
