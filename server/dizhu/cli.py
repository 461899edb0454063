"""The ``dizhu`` command line."""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from pathlib import Path

from dizhu.config import add_server_arguments
from dizhu.narrate import describe_deal, describe_event, describe_settlement
from dizhu.rules import (
    SEED_SIZE,
    VARIANTS,
    LandlordChosen,
    apply,
    deal,
    new_seed,
    settle,
    start_round,
)
from dizhu.rules.random_play import random_action


def _seed(text: str) -> bytes:
    try:
        seed = bytes.fromhex(text)
    except ValueError:
        raise argparse.ArgumentTypeError("a seed is written in hexadecimal") from None
    if len(seed) != SEED_SIZE:
        raise argparse.ArgumentTypeError(f"a seed is {SEED_SIZE} bytes ({2 * SEED_SIZE} hex digits)")
    return seed


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("a whole number is needed") from None
    if value < 1:
        raise argparse.ArgumentTypeError("at least 1")
    return value


def _demo_local(args: argparse.Namespace) -> int:
    """Play one round between random players in this process and narrate it."""
    variant = VARIANTS[args.variant]
    seed = args.seed or new_seed()
    rng = random.Random(seed)
    dealt = deal(seed, variant, dealer=args.dealer % variant.players)
    state = start_round(dealt)
    print("\n".join(describe_deal(dealt)))
    print("Auction:")
    landlord: int | None = None
    while not state.is_over:
        action = random_action(state, rng)
        transition = apply(state, action)
        state = transition.state
        for event in transition.events:
            if isinstance(event, LandlordChosen):
                landlord = event.seat
            print(describe_event(event, landlord, len(state.hands[action.seat])))
            if isinstance(event, LandlordChosen):
                print("Play:")
    print(describe_settlement(settle(state)))
    print(f"Seed revealed: {seed.hex()} (check: sha256(seed) == the commitment above).")
    return 0


def _demo(args: argparse.Namespace) -> int:
    """The demonstration: ``--local`` for the in-process one, else bots against a real referee."""
    if args.local:
        return _demo_local(args)
    import asyncio

    from dizhu.demo import bot_kinds, run_demo

    try:
        bots = bot_kinds(args.variant, [name.strip() for name in args.bots.split(",")] if args.bots else None)
    except ValueError as error:
        print(f"dizhu demo: {error}", file=sys.stderr)
        return 2
    return asyncio.run(run_demo(variant=args.variant, rounds=args.rounds, seed=args.seed, bots=bots, write=print))


def _serve(args: argparse.Namespace) -> int:
    """Run the referee until SIGTERM / SIGINT."""
    import asyncio

    from dizhu.config import config_from_args
    from dizhu.logs import configure_logging
    from dizhu.service.server import run, run_workers

    config = config_from_args(args)
    configure_logging(config.log_format, config.log_level)
    if config.workers > 1:
        return run_workers(config)
    asyncio.run(run(config))
    return 0


def _verify(args: argparse.Namespace) -> int:
    """Check a replay's JSON: seeds, deals, every action, the result."""
    from dizhu.referee.replay import verify

    text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text()
    result = verify(text)
    if result.ok:
        print(f"OK: {result.deals} deal(s) and {result.actions} action(s) verified; the result is the recorded one.")
        return 0
    print("NOT VERIFIED:")
    for problem in result.problems:
        print(f"  - {problem}")
    return 1


def _replay(args: argparse.Namespace) -> int:
    """Fetch a finished round's replay JSON from a referee."""
    import asyncio

    import grpc

    from dizhu.v1 import table_service_pb2, table_service_pb2_grpc

    async def fetch() -> str:
        async with grpc.aio.insecure_channel(args.target) as channel:
            stub = table_service_pb2_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
            request = table_service_pb2.GetReplayRequest(table_id=args.table_id, round=args.round)
            response = await stub.GetReplay(request, timeout=30)
            return str(response.json)

    try:
        print(asyncio.run(fetch()))
    except grpc.aio.AioRpcError as error:
        print(f"dizhu replay: {error.code().name}: {error.details()}", file=sys.stderr)
        return 1
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dizhu", description="Dou Dizhu referee and rules engine.")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser(
        "demo",
        help="start a referee with an embedded Redis and narrate a game between bundled bots",
        description="Start the referee (gRPC, embedded Redis, free port) in this process, create a table, "
        "let bundled bots play it through gRPC and narrate the game as a spectator sees it.",
    )
    demo.add_argument("--variant", choices=sorted(VARIANTS), default="3p", help="3 or 4 players (default 3p)")
    demo.add_argument("--rounds", type=_positive, default=1, help="rounds to play (default 1)")
    demo.add_argument(
        "--seed", type=_seed, help="seed of the first round, 64 hex digits, for a reproducible game (default: random)"
    )
    demo.add_argument(
        "--bots",
        help="one bot per seat, comma-separated, among heuristic and random (default: all heuristic), "
        "e.g. random,heuristic,heuristic",
    )
    demo.add_argument(
        "--local", action="store_true", help="the old in-process round between random players: no gRPC, no Redis"
    )
    demo.add_argument("--dealer", type=int, default=0, help="with --local: the dealing seat (default 0)")
    demo.set_defaults(handler=_demo)
    serve = commands.add_parser("serve", help="run the referee (gRPC), with an embedded Redis unless REDIS_URL is set")
    add_server_arguments(serve)
    serve.set_defaults(handler=_serve)
    verify = commands.add_parser("verify", help="verify a round's replay (JSON): seeds, deals, actions, result")
    verify.add_argument("file", help="the replay JSON file, or - for standard input")
    verify.set_defaults(handler=_verify)
    replay = commands.add_parser("replay", help="print a finished round's replay JSON, fetched from a referee")
    replay.add_argument("table_id")
    replay.add_argument("round", type=_positive)
    replay.add_argument("--target", default="127.0.0.1:50051", help="the referee's host:port")
    replay.set_defaults(handler=_replay)
    # Listed for --help only: main() hands `dizhu tournament ...` to dizhu.tournament.cli whole.
    commands.add_parser(
        "tournament",
        help="run a bot tournament through the referee (duplicate deals, ratings); see `dizhu tournament --help`",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["tournament"]:
        from dizhu.tournament.cli import main as tournament

        return tournament(argv[1:])
    args = build_parser().parse_args(argv)
    handler = args.handler
    result: int = handler(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
