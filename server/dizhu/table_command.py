"""``dizhu table create|list|close``: tables on a running referee, from the command line.

``create`` prints the table's id and its creator token (and the seat tokens of the players it
names), how a bot plays each named seat (``dizhu bot --token``) and, while seats are free, how a
bot or a person takes one; ``list`` prints the referee's open
tables; ``close`` closes one with its creator token. Every call is an ordinary SDK call
(:class:`dizhu.client.TableClient`); a refusal is one line on standard error and exit status 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any, cast

from dizhu.client import DizhuError, TableClient
from dizhu.client.command import add_tls_arguments, credentials_from, unreadable_authority
from dizhu.client.table_settings import TIMEOUT_POLICIES
from dizhu.v1 import cards_pb2, table_pb2, table_service_pb2

__all__ = ["add_parser"]

_TARGET = "127.0.0.1:50051"
#: ``--next-round``'s choices: the contract's rules by name (``NEXT_ROUND_WHEN_ALL_SETTLED``: ``when-all-settled``).
_NEXT_ROUND = {
    name.removeprefix("NEXT_ROUND_").lower().replace("_", "-"): cast(table_pb2.NextRound, number)
    for name, number in table_pb2.NextRound.items()
    if number != table_pb2.NEXT_ROUND_UNSPECIFIED
}


def _variant_name(variant: int) -> str:
    return "4p" if variant == cards_pb2.VARIANT_FOUR_PLAYER else "3p"


async def _create(client: TableClient, args: argparse.Namespace) -> dict[str, Any]:
    names = [name.strip() for name in args.players.split(",")] if args.players else []
    created = await client.create_table(
        variant=args.variant,
        player_names=names,
        round_limit=args.rounds,
        next_round=_NEXT_ROUND[args.next_round],
        decision_time=args.clock or None,
        timeout_policy=args.timeout_policy.replace("-", "_"),
    )
    return {
        "table_id": created.table_id,
        "creator_token": created.creator_token,
        "seat_tokens": [
            {"seat": seat, "name": name, "token": token.token}
            for seat, (name, token) in enumerate(zip(names, created.seat_tokens, strict=True))
        ],
        "free_seats": sum(not seat.occupied for seat in created.table.seats),
    }


def _print_created(table: dict[str, Any], args: argparse.Namespace) -> None:
    target = f" --target {args.target}" if args.target != _TARGET else ""
    print(f"Table {table['table_id']} on {args.target}, {args.variant}, {args.rounds} round(s).")
    print(f"creator token: {table['creator_token']}  (keep it: `dizhu table close` needs it)")
    for seat in table["seat_tokens"]:
        print(f"seat {seat['seat']} ({seat['name']}) token: {seat['token']}")
    if table["seat_tokens"]:
        print("A bot plays a named seat with its token:")
        for seat in table["seat_tokens"]:
            print(f"  dizhu bot --table {table['table_id']}{target} --token {seat['token']} --bot heuristic")
    if not table["free_seats"]:
        print("There is no free seat: every seat is named.")
        return
    print(f"{table['free_seats']} free seat(s). A bot takes one with:")
    print(f"  dizhu bot --table {table['table_id']}{target} --name NAME --bot heuristic")
    print(f"A person with: dizhu play --table {table['table_id']} --target {args.target}")


async def _list(client: TableClient) -> list[table_service_pb2.TableSummary]:
    tables: list[table_service_pb2.TableSummary] = []
    token = ""
    while True:
        page = await client.list_tables(page_token=token)
        tables += page.tables
        token = page.next_page_token
        if not token:
            return tables


def _print_tables(tables: list[table_service_pb2.TableSummary]) -> None:
    if not tables:
        print("No open tables.")
        return
    for table in tables:
        players = ", ".join(name or "(free)" for name in table.player_names)
        seats = f"{table.free_seats} free seat(s)"
        print(f"{table.table_id}  {_variant_name(table.variant)}  {_round(table)}  {seats}  {players}")


def _round(table: table_service_pb2.TableSummary) -> str:
    """Where the table is: between rounds its ``round`` is the one about to start, so the one over is before it."""
    limit = f"/{table.round_limit}" if table.round_limit else ""
    if table.phase == table_pb2.PHASE_ROUND_OVER:
        return f"round {table.round - 1}{limit} over"
    phase = table_pb2.Phase.Name(table.phase).removeprefix("PHASE_").lower().replace("_", " ")
    return f"round {table.round}{limit}  {phase}"


def _run(args: argparse.Namespace) -> int:
    try:
        credentials = credentials_from(args)
    except OSError as error:
        return unreadable_authority("dizhu table", args, error)

    async def call() -> int:
        async with TableClient(args.target, credentials=credentials, api_key=args.api_key) as client:
            if args.action == "create":
                table = await _create(client, args)
                if args.json:
                    print(json.dumps(table, indent=1))
                else:
                    _print_created(table, args)
            elif args.action == "list":
                _print_tables(await _list(client))
            else:
                client.table_id = args.table_id
                client.creator_token = args.token
                closed = await client.close_table()
                standings = ", ".join(f"{s.player_name or f'seat {s.seat}'} {s.balance:+d}" for s in closed.standings)
                print(f"Table {args.table_id} closed." + (f" Standings: {standings}." if standings else ""))
        return 0

    try:
        return asyncio.run(call())
    except DizhuError as error:
        print(f"dizhu table {args.action}: {error}", file=sys.stderr)
        return 1
    except ValueError as error:
        print(f"dizhu table {args.action}: {error}", file=sys.stderr)
        return 2


def add_parser(commands: Any, *, clock: Any, positive: Any) -> None:
    """Add ``table`` and its actions to the ``dizhu`` command line's subparsers."""
    table = commands.add_parser(
        "table",
        help="create, list or close tables on a running referee",
        description="Tables on a running referee: `create` prints the table id and its tokens (for "
        "`dizhu bot --table` and `dizhu play --table`), `list` the open tables, `close` closes one.",
    )
    actions = table.add_subparsers(dest="action", required=True)
    create = actions.add_parser("create", help="create a table and print its id and tokens")
    create.add_argument("--variant", choices=["3p", "4p"], default="3p", help="3 or 4 players (default 3p)")
    create.add_argument("--rounds", type=positive, default=1, help="rounds before the table closes (default 1)")
    create.add_argument(
        "--players",
        help="names of players to seat now, comma-separated: their seat tokens are printed (default: none, "
        "every seat free to join)",
    )
    create.add_argument(
        "--clock", type=clock, default=0.0, help="seconds per decision, 0.1 to 3600; 0 for no clock (default)"
    )
    create.add_argument(
        "--timeout-policy",
        choices=[policy.replace("_", "-") for policy in TIMEOUT_POLICIES],
        default="auto-play",
        help="with --clock (default auto-play)",
    )
    create.add_argument(
        "--next-round",
        choices=sorted(_NEXT_ROUND),
        default="automatic",
        help="deal the next round at once, or once every seat called Settle (default automatic)",
    )
    create.add_argument("--json", action="store_true", help="print the id and tokens as JSON")
    create.add_argument(
        "--api-key",
        default=os.environ.get("DIZHU_API_KEY"),
        help="the referee's API key, if it asks for one (x-api-key; env DIZHU_API_KEY)",
    )
    listed = actions.add_parser("list", help="the referee's open tables")
    close = actions.add_parser("close", help="close a table (its creator token)")
    close.add_argument("table_id")
    close.add_argument("--token", required=True, help="the creator token `dizhu table create` printed")
    for parser in (create, listed, close):
        parser.add_argument("--target", default=_TARGET, help=f"the referee's host:port (default {_TARGET})")
        add_tls_arguments(parser)
        parser.set_defaults(handler=_run)
    listed.set_defaults(api_key=None)
    close.set_defaults(api_key=None)
