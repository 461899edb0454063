"""``python -m dizhu.client`` (also ``dizhu bot``, ``dizhu-bot``): play a bot for one seat of a table.

::

    python -m dizhu.client --target HOST:PORT --table TABLE_ID --token SEAT_TOKEN   # a pre-assigned seat
    python -m dizhu.client --target HOST:PORT --table TABLE_ID --name ann           # take a free seat
    python -m dizhu.client ... --bot random --seed 7                                # a bundled bot
    python -m dizhu.client ... --bot my_bots.py:Greedy                              # your own Bot subclass

The bot (``--bot``: ``heuristic``, the default, ``random``, ``expert`` or ``expert:200ms`` where
the server is installed (docs/bots.md), or ``FILE.py:CLASS`` /
``MODULE:CLASS`` naming a :class:`~dizhu.client.Bot` subclass made with no arguments) plays
until the table closes, then one line of JSON goes to standard output: the table, the seat,
the decisions made, the moves the rules refused, and every seat's final balance. With
``--verbose`` every decision is told on standard error. The seat token may come from
``$DIZHU_SEAT_TOKEN`` instead of the command line, where other users of the machine could
read it.

Exit status: 0 once the table is closed; 1 when the referee refuses or cannot be reached
(the reason on standard error); 2 for a bad command line or a bot that cannot be loaded;
130 on ^C.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.util
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import grpc

from dizhu.client.bot import Bot, BotRunner, Decision
from dizhu.client.bots import BOT_KINDS
from dizhu.client.cards import format_cards
from dizhu.client.client import TableClient, tls_credentials
from dizhu.client.errors import DizhuError
from dizhu.v1 import table_pb2

__all__ = ["BUNDLED", "add_arguments", "add_tls_arguments", "credentials_from", "load_bot", "main", "play"]

#: The bundled bots by name (``NAME:OPTIONS`` too, ``expert:200ms``), each made from the ``--seed`` (None: unseeded).
BUNDLED: Mapping[str, Callable[[int | None], Bot]] = BOT_KINDS
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class BotNotLoaded(Exception):
    """``--bot`` names nothing that can be made into a bot; the message says why."""


def load_bot(spec: str, seed: int | None = None) -> Bot:
    """The bot ``spec`` names: a bundled one, or ``FILE.py:CLASS`` / ``MODULE:CLASS``."""
    if spec in BUNDLED:
        return BUNDLED[spec](seed)
    where, colon, name = spec.rpartition(":")
    if not colon or not where or not name:
        raise BotNotLoaded(f"--bot {spec!r}: use {', '.join(BUNDLED)}, FILE.py:CLASS or MODULE:CLASS")
    try:
        if where.endswith(".py"):
            path = Path(where)
            module_spec = importlib.util.spec_from_file_location(path.stem, path)
            if module_spec is None or module_spec.loader is None or not path.is_file():
                raise BotNotLoaded(f"--bot {spec!r}: no Python file {where}")
            module = importlib.util.module_from_spec(module_spec)
            module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(where)
    except BotNotLoaded:
        raise
    except Exception as error:  # whatever the bot's own module raises while loading
        raise BotNotLoaded(f"--bot {spec!r}: cannot load {where}: {type(error).__name__}: {error}") from error
    cls = getattr(module, name, None)
    if not (isinstance(cls, type) and issubclass(cls, Bot)):
        raise BotNotLoaded(f"--bot {spec!r}: {where} has no Bot subclass named {name}")
    try:
        return cls()
    except Exception as error:  # its constructor's own failure
        raise BotNotLoaded(f"--bot {spec!r}: {name}() failed: {type(error).__name__}: {error}") from error


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command's flags (shared with ``dizhu bot``)."""
    parser.add_argument(
        "--target",
        default="127.0.0.1:50051",
        metavar="TARGET",
        help="the referee: HOST:PORT, or unix:PATH for its unix socket (default: %(default)s)",
    )
    parser.add_argument("--table", required=True, metavar="TABLE_ID", help="the table to play at")
    seat = parser.add_mutually_exclusive_group()
    seat.add_argument(
        "--token",
        default=os.environ.get("DIZHU_SEAT_TOKEN"),
        help="the seat token of a pre-assigned seat (env DIZHU_SEAT_TOKEN; default: none, take a free seat)",
    )
    seat.add_argument("--name", help="the player name to take a free seat with (default: the bot's name)")
    parser.add_argument(
        "--bot",
        default="heuristic",
        help=f"{', '.join(BUNDLED)}, FILE.py:CLASS or MODULE:CLASS (default: %(default)s)",
    )
    parser.add_argument("--seed", type=int, help="seed of the random bot (default: none, unseeded)")
    parser.add_argument("--verbose", action="store_true", help="tell every decision on standard error")
    add_tls_arguments(parser)


def add_tls_arguments(parser: argparse.ArgumentParser) -> None:
    """``--tls`` and ``--tls-ca``: how a command reaches a referee that serves TLS."""
    parser.add_argument(
        "--tls",
        action="store_true",
        default=bool(os.environ.get("DIZHU_TLS")),
        help="reach the referee over TLS, its certificate checked against the system's authorities (env DIZHU_TLS)",
    )
    parser.add_argument(
        "--tls-ca",
        metavar="FILE",
        default=os.environ.get("DIZHU_TLS_CA") or None,
        help="reach the referee over TLS, its certificate checked against this authority (PEM) (env DIZHU_TLS_CA)",
    )


def credentials_from(args: argparse.Namespace) -> grpc.ChannelCredentials | None:
    """The channel credentials ``--tls`` / ``--tls-ca`` ask for; None: plaintext.

    Raises ``OSError`` when the authority's file cannot be read."""
    if args.tls_ca:
        return tls_credentials(args.tls_ca)
    return tls_credentials() if args.tls else None


def unreadable_authority(prog: str, args: argparse.Namespace, error: OSError) -> int:
    """Say that ``--tls-ca`` could not be read; the usage exit status to return."""
    print(f"{prog}: --tls-ca {args.tls_ca}: {error.strerror or error}", file=sys.stderr)
    return EXIT_USAGE


def _tell(decision: Decision) -> None:
    if decision.action == "bid":
        what = f"bids {decision.amount}" if decision.amount else "passes"
    elif decision.action == "play":
        what = f"plays {format_cards(decision.cards)}" if decision.cards else "passes"
    else:
        what = "settles"
    print(f"seat {decision.seat} {what} (version {decision.after.version})", file=sys.stderr)


async def play(args: argparse.Namespace, bot: Bot, credentials: grpc.ChannelCredentials | None) -> dict[str, object]:
    """Play ``bot`` as the command line says; the summary printed at the end."""
    async with TableClient(args.target, table_id=args.table, token=args.token, credentials=credentials) as client:
        if args.token is None:
            await client.join(args.name or bot.name)
        runner = BotRunner(bot, client, on_decision=_tell if args.verbose else None)
        final = await runner.run()
    return {
        "table_id": final.table_id,
        "seat": client.seat,
        "closed": final.phase == table_pb2.PHASE_CLOSED,
        "decisions": runner.decisions,
        "refused": runner.refused,
        "balances": [seat.balance for seat in final.seats],
    }


def main(argv: Sequence[str] | None = None, *, prog: str | None = None) -> int:
    """The command (``prog``: its name in messages, by default the program's)."""
    parser = argparse.ArgumentParser(prog=prog, description="Play a bot for one seat of a dizhu table until it closes.")
    add_arguments(parser)
    return run(parser.parse_args(argv), parser.prog)


def run(args: argparse.Namespace, prog: str) -> int:
    """Run the parsed command; its exit status."""
    try:
        bot = load_bot(args.bot, args.seed)
    except BotNotLoaded as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return EXIT_USAGE
    try:
        credentials = credentials_from(args)
    except OSError as error:
        return unreadable_authority(prog, args, error)
    try:
        summary = asyncio.run(play(args, bot, credentials))
    except DizhuError as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    print(json.dumps(summary))
    return 0
