"""The ``dizhu`` command line.

It never answers bad input with a traceback: every fault a user can cause or fix is one
message on standard error and an exit status of its own (``docs/operations.md``):

==== ==========================================================================================
0    done (``verify``: the replay is verified)
1    failed: ``verify`` found the record contradicting itself (tampered); the referee could not
     start (a taken address or data directory, an unreachable Redis, ...); a call was refused
2    a bad command line, or a bad ``DIZHU_*`` / ``REDIS_URL`` environment value
3    ``verify``: no replay to check (missing file, a directory, not UTF-8, not JSON, not the schema)
130  interrupted (^C)
141  the reader of the output went away (``dizhu demo | head``)
==== ==========================================================================================
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

# Before gRPC loads: no command forks a process that uses gRPC (workers are spawned), and
# gRPC's fork handlers can abort a child started with a pre-exec hook, such as the
# embedded redis-server (it dies with its parent that way).
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
# Every failure gRPC's core would log on its own (a port it cannot bind, ...) is told by the
# command in its own words; GRPC_VERBOSITY=ERROR shows the core's lines as well.
os.environ.setdefault("GRPC_VERBOSITY", "NONE")

if TYPE_CHECKING:
    from dizhu.referee.signing import PublicKey

# Nothing of dizhu is imported here: dizhu.rules reads DIZHU_ENGINE when it is imported, and a
# bad value must be a message (main), not a traceback.

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_NOT_A_REPLAY = 3
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141
#: The most rounds a table may have, and the largest round number: both are uint32 in the
#: contract (TableSettings.round_limit, GetReplayRequest.round; pinned by the command line's tests).
MAX_ROUNDS = 2**32 - 1


def _seed(text: str) -> bytes:
    from dizhu.rules import SEED_SIZE

    digits = text.strip()
    if len(digits) != 2 * SEED_SIZE:
        raise argparse.ArgumentTypeError(
            f"a seed is {SEED_SIZE} bytes, {2 * SEED_SIZE} hex digits, not {len(digits)} digit(s)"
        )
    try:
        return bytes.fromhex(digits)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a seed's {2 * SEED_SIZE} digits are hexadecimal: 0-9 and a-f") from None


def _whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("a whole number is needed") from None


def _clock(text: str) -> float:
    """Seconds per decision as the referee takes them: 0 (no clock), or whole milliseconds within its bounds."""
    from dizhu.referee.limits import MAX_DECISION_MS, MIN_DECISION_MS

    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("a number of seconds is needed") from None
    if seconds != 0 and not MIN_DECISION_MS <= seconds * 1000 <= MAX_DECISION_MS:
        raise argparse.ArgumentTypeError(
            f"0 (no clock) or {MIN_DECISION_MS / 1000:g} to {MAX_DECISION_MS // 1000} seconds, not {text}"
        )
    return round(seconds * 1000) / 1000


def _player_name(text: str) -> str:
    from dizhu.referee.limits import MAX_NAME_LENGTH

    if not 1 <= len(text) <= MAX_NAME_LENGTH or not text.isprintable():
        raise argparse.ArgumentTypeError(f"1 to {MAX_NAME_LENGTH} printable characters")
    return text


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("a whole number is needed") from None
    if not 1 <= value <= MAX_ROUNDS:
        raise argparse.ArgumentTypeError(f"1 to {MAX_ROUNDS}, not {value}")
    return value


def _seeded_rounds(command: str, args: argparse.Namespace) -> str | None:
    """Why ``--rounds`` cannot be played from ``--seed`` (None: it can): every round's seed is preset."""
    from dizhu.referee.limits import MAX_SEEDS

    if args.seed is not None and args.rounds > MAX_SEEDS:
        return f"dizhu {command}: --rounds: at most {MAX_SEEDS} with --seed (a table holds {MAX_SEEDS} preset seeds)"
    return None


def _engine_problem() -> str | None:
    """Why the rules engine the environment asks for cannot be used (None: it can)."""
    try:
        importlib.import_module("dizhu.rules")
    except (ValueError, RuntimeError) as error:  # an unknown engine; EngineUnavailable
        named = [
            f"{name}={os.environ[name]!r}" for name in ("DIZHU_ENGINE", "DIZHU_REQUIRE_NATIVE") if os.environ.get(name)
        ]
        if not named:
            raise
        return f"{', '.join(named)}: {error}"
    return None


def _demo_local(args: argparse.Namespace) -> int:
    """Play one round between random players in this process and narrate it."""
    from dizhu.narrate import describe_deal, describe_event, describe_settlement
    from dizhu.rules import VARIANTS, LandlordChosen, apply, deal, new_seed, settle, start_round
    from dizhu.rules.random_play import random_action

    variant = VARIANTS[args.variant]
    seed = args.seed or new_seed()
    rng = random.Random(seed)
    dealt = deal(seed, variant, dealer=args.dealer or 0)
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
    players = 4 if args.variant == "4p" else 3
    if args.dealer is not None and not 0 <= args.dealer < players:
        print(f"dizhu demo: --dealer: a seat of {args.variant}: 0 to {players - 1}", file=sys.stderr)
        return EXIT_USAGE
    if (problem := _seeded_rounds("demo", args)) and not args.local:
        print(problem, file=sys.stderr)
        return EXIT_USAGE
    if args.local:
        return _demo_local(args)
    import asyncio

    from dizhu.demo import bot_kinds, run_demo

    try:
        bots = bot_kinds(args.variant, [name.strip() for name in args.bots.split(",")] if args.bots else None)
    except ValueError as error:
        print(f"dizhu demo: {error}", file=sys.stderr)
        return EXIT_USAGE
    from dizhu.client import DizhuError
    from dizhu.embedded_redis import RedisServerFailed, RedisServerNotFound
    from dizhu.service.startup import StartupError

    try:
        return asyncio.run(
            run_demo(
                variant=args.variant, rounds=args.rounds, seed=args.seed, bots=bots, dealer=args.dealer, write=print
            )
        )
    except (StartupError, RedisServerFailed, RedisServerNotFound, DizhuError) as error:
        print(f"dizhu demo: {error}", file=sys.stderr)
        return EXIT_FAILED


def _serve(args: argparse.Namespace) -> int:
    """Run the referee until SIGTERM / SIGINT."""
    import asyncio

    from dizhu.config import config_from_args
    from dizhu.embedded_redis import DataDirInUse, RedisServerFailed, RedisServerNotFound
    from dizhu.logs import configure_logging
    from dizhu.process import run, run_workers
    from dizhu.service.startup import StartupError

    config = config_from_args(args)
    if args.print_public_key:
        from dizhu.service.server import signing_keys

        if not config.signing_key:
            print("dizhu serve: --print-public-key with --redis-url needs --signing-key", file=sys.stderr)
            return EXIT_USAGE
        print(signing_keys(config).public_pem(), end="")
        return EXIT_OK
    configure_logging(config.log_format, config.log_level)
    try:
        if config.workers > 1:
            return run_workers(config)
        asyncio.run(run(config))
    except (StartupError, DataDirInUse, RedisServerFailed, RedisServerNotFound) as error:
        print(f"dizhu serve: {error}", file=sys.stderr)
        return EXIT_FAILED
    except OSError as error:  # e.g. a data directory that cannot be created
        print(f"dizhu serve: cannot start: {error}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def _read_replay(file: str) -> str:
    """The text of ``file`` (``-``: standard input); OSError or UnicodeDecodeError if it cannot be read."""
    if file == "-":
        return sys.stdin.buffer.read().decode()
    return Path(file).read_bytes().decode()


def _referee_keys(args: argparse.Namespace) -> tuple[PublicKey, ...] | None:
    """The public keys ``--key`` or ``--target`` give (None: neither); ValueError with a message if unusable."""
    from dizhu.referee.signing import PublicKey, key_id, parse_public_keys

    if args.key is not None:
        try:
            return parse_public_keys(Path(args.key).read_bytes())
        except OSError as error:
            raise ValueError(f"--key {args.key}: {error.strerror or error}") from None
        except ValueError as error:
            raise ValueError(f"--key {args.key}: {error}") from None
    if args.target is None:
        return None
    import asyncio

    import grpc
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    from dizhu.client import open_channel
    from dizhu.client.command import credentials_from
    from dizhu.v1 import table_service_pb2, table_service_pb2_grpc

    async def fetch() -> table_service_pb2.GetRefereeKeysResponse:
        async with open_channel(args.target, credentials_from(args)) as channel:
            stub = table_service_pb2_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
            response: table_service_pb2.GetRefereeKeysResponse = await stub.GetRefereeKeys(
                table_service_pb2.GetRefereeKeysRequest(), timeout=30
            )
            return response

    try:
        listed = asyncio.run(fetch()).keys
        keys = tuple(
            PublicKey(key_id(public), public)
            for public in map(Ed25519PublicKey.from_public_bytes, (key.public_key for key in listed))
        )
    except OSError as error:
        raise ValueError(f"--tls-ca {args.tls_ca}: {error.strerror or error}") from None
    except grpc.aio.AioRpcError as error:
        raise ValueError(f"--target {args.target}: {error.code().name}: {error.details()}") from None
    except ValueError as error:  # a key that is no 32-byte Ed25519 key
        raise ValueError(f"--target {args.target}: {error}") from None
    return keys


def _verify(args: argparse.Namespace) -> int:
    """Check a replay's JSON: seeds, deals, every action, the result; with keys, its signature."""
    from dizhu.referee.replay import verify
    from dizhu.referee.signing import Authenticity, replay_digest

    try:
        keys = _referee_keys(args)
    except ValueError as error:
        print(f"dizhu verify: {error}", file=sys.stderr)
        return EXIT_USAGE
    try:
        text = _read_replay(args.file)
    except UnicodeDecodeError:
        print(f"NOT A REPLAY: {args.file} is not UTF-8 text")
        return EXIT_NOT_A_REPLAY
    except OSError as error:
        print(f"NOT A REPLAY: cannot read {args.file}: {error.strerror or error}")
        return EXIT_NOT_A_REPLAY
    result = verify(text, keys)
    if not result.readable:
        print(f"NOT A REPLAY: {args.file}: {result.problems[0].removeprefix('not a replay: ')}")
        return EXIT_NOT_A_REPLAY
    signed = result.signature
    if signed.authenticity is Authenticity.VALID:
        authenticity = f"signed by the referee's key {signed.key_id}: the record is exactly as the referee wrote it."
    elif signed.authenticity is Authenticity.NOT_CHECKED:
        carries = f"it carries a signature by key {signed.key_id}" if signed.key_id else "it carries no signature"
        authenticity = f"NOT checked ({carries}; give --key or --target to check it)."
    else:
        authenticity = f"{signed.authenticity.value.upper()}."
    try:
        digest = replay_digest(text)
    except ValueError:
        digest = "none (no canonical form)"
    if result.ok:
        print(f"OK: {result.deals} deal(s) and {result.actions} action(s) verified; the result is the recorded one.")
        print(f"Authenticity: {authenticity}")
        print(f"Digest: {digest}")
        return EXIT_OK
    print(f"NOT VERIFIED ({authenticity.rstrip('.')}):" if keys is not None else "NOT VERIFIED:")
    for problem in result.problems:
        print(f"  - {problem}")
    if keys is None:
        print(f"Authenticity: {authenticity}")
    return EXIT_FAILED


def _bot(args: argparse.Namespace) -> int:
    """Play a bot for one seat (the SDK's ``python -m dizhu.client``)."""
    from dizhu.client.command import run

    return run(args, "dizhu bot")


def _replay(args: argparse.Namespace) -> int:
    """Fetch a finished round's replay JSON from a referee."""
    import asyncio

    import grpc

    from dizhu.client import open_channel
    from dizhu.client.command import credentials_from, unreadable_authority
    from dizhu.v1 import table_service_pb2, table_service_pb2_grpc

    try:
        credentials = credentials_from(args)
    except OSError as error:
        return unreadable_authority("dizhu replay", args, error)

    async def fetch() -> str:
        async with open_channel(args.target, credentials) as channel:
            stub = table_service_pb2_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
            request = table_service_pb2.GetReplayRequest(table_id=args.table_id, round=args.round)
            try:
                response = await stub.GetReplay(request, timeout=30)
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.NOT_FOUND:
                    raise
                raise _NoReplay(await _why_no_replay(stub, args.table_id, args.round, args.target)) from None
            return str(response.json)

    try:
        print(asyncio.run(fetch()))
    except _NoReplay as missing:
        print(f"dizhu replay: {missing}", file=sys.stderr)
        return EXIT_FAILED
    except grpc.aio.AioRpcError as error:
        print(f"dizhu replay: {error.code().name}: {error.details()}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


class _NoReplay(Exception):
    """The referee has no replay of the round asked for; the message says why."""


async def _why_no_replay(stub: Any, table_id: str, round_number: int, target: str) -> str:
    """A missing table told apart from a round not over yet, or one no longer kept."""
    import grpc

    from dizhu.v1 import table_pb2, table_service_pb2

    try:
        response = await stub.GetTable(table_service_pb2.GetTableRequest(table_id=table_id), timeout=30)
    except grpc.aio.AioRpcError as error:
        if error.code() == grpc.StatusCode.NOT_FOUND:
            return f"no table {table_id} at {target}"
        raise
    view: table_pb2.TableView = response.table
    finished = view.last_settlement.round
    if round_number > finished:
        state = table_pb2.Phase.Name(view.phase).removeprefix("PHASE_").lower().replace("_", " ")
        where = "the table is closed" if view.phase == table_pb2.PHASE_CLOSED else f"the table is in the {state} phase"
        last = f"round {finished} is the last finished" if finished else "no round is finished yet"
        return f"round {round_number} of table {table_id} is not over ({last}; {where})"
    return f"round {round_number} of table {table_id} is no longer kept (only the latest rounds' replays are)"


def _version() -> str:
    try:
        return importlib.metadata.version("dizhu")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "(not installed)"


def _play(args: argparse.Namespace) -> int:
    """A person's seat in the terminal, against bundled bots."""
    import asyncio

    from rich.console import Console

    from dizhu.client.command import credentials_from, unreadable_authority
    from dizhu.play import PlayOptions, play, stdin_lines
    from dizhu.play.screen import Screen

    try:
        credentials = credentials_from(args)
    except OSError as error:
        return unreadable_authority("dizhu play", args, error)
    if credentials is not None and not args.target:
        print(
            "dizhu play: --tls and --tls-ca need --target (the referee in this process speaks plaintext)",
            file=sys.stderr,
        )
        return 2
    options = PlayOptions(
        variant=args.variant,
        rounds=args.rounds,
        bots=[name.strip() for name in args.bots.split(",")] if args.bots else None,
        name=args.name,
        clock_s=args.clock,
        seed=args.seed,
        target=args.target,
        table_id=args.table,
        credentials=credentials,
    )
    from dizhu.client import DizhuError

    if args.table and not args.target:
        print("dizhu play: --table needs --target (the referee that holds the table)", file=sys.stderr)
        return 2
    if problem := _seeded_rounds("play", args):
        print(problem, file=sys.stderr)
        return 2
    try:
        return asyncio.run(play(options, Screen(Console(highlight=False)), stdin_lines()))
    except ValueError as error:
        print(f"dizhu play: {error}", file=sys.stderr)
        return 2
    except DizhuError as error:
        print(f"dizhu play: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        if args.target:
            said = f"your seat at the referee {args.target} stays taken until its clock or idle time frees it."
        else:
            said = "the game ended with it (its referee ran in this process)."
        print(f"\nInterrupted: {said}", file=sys.stderr)
        return EXIT_INTERRUPTED


def build_parser() -> argparse.ArgumentParser:
    from dizhu.config import add_server_arguments
    from dizhu.rules import VARIANTS
    from dizhu.table_command import add_parser as add_table_parser

    parser = argparse.ArgumentParser(
        prog="dizhu",
        description="Dou Dizhu referee and rules engine.",
        epilog="Exit status: 0 done; 1 failed (not verified, cannot start, refused); 2 bad command line or "
        "environment; 3 verify: not a replay; 130 interrupted; 141 the output's reader went away.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
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
        help="one bot per seat, comma-separated, among expert, heuristic and random (default: all heuristic), "
        "e.g. expert,heuristic,heuristic; expert:200ms sets the expert's time per decision",
    )
    demo.add_argument(
        "--local", action="store_true", help="the old in-process round between random players: no gRPC, no Redis"
    )
    demo.add_argument("--dealer", type=_whole, help="the seat that deals the first round (default 0)")
    demo.set_defaults(handler=_demo)
    from dizhu.client.command import add_arguments as add_bot_arguments
    from dizhu.client.command import add_tls_arguments

    serve = commands.add_parser("serve", help="run the referee (gRPC), with an embedded Redis unless REDIS_URL is set")
    add_server_arguments(serve)
    serve.set_defaults(handler=_serve)
    verify = commands.add_parser(
        "verify",
        help="verify a round's replay (JSON): seeds, deals, actions, result; with a key, the referee's signature",
        description="Verify a round's replay (JSON): seeds, deals, every action, the clock's actions, the result; "
        "with --key or --target, also that the referee signed exactly this record. Exit status 0: verified; "
        "1: not verified (the record contradicts itself, or is unsigned, signed by an unknown key, or altered "
        "after signing); 2: a bad command line or unusable keys; 3: not a replay.",
    )
    verify.add_argument("file", help="the replay JSON file, or - for standard input")
    keys = verify.add_mutually_exclusive_group()
    keys.add_argument("--key", metavar="PUBLIC_KEY_FILE", help="the referee's public key(s), PEM")
    keys.add_argument("--target", help="the referee's host:port, asked for its public keys (GetRefereeKeys)")
    add_tls_arguments(verify)
    verify.set_defaults(handler=_verify)
    replay = commands.add_parser("replay", help="print a finished round's replay JSON, fetched from a referee")
    replay.add_argument("table_id")
    replay.add_argument("round", type=_positive)
    replay.add_argument("--target", default="127.0.0.1:50051", help="the referee's host:port")
    add_tls_arguments(replay)
    replay.set_defaults(handler=_replay)

    bot = commands.add_parser(
        "bot",
        help="play a bundled or your own bot for one seat of a table until it closes",
        description="Play a bot (heuristic, random, expert[:BUDGET], FILE.py:CLASS or MODULE:CLASS) for one seat "
        "of a table on a referee until the table closes, then print a JSON summary. Same as `python -m dizhu.client`.",
    )
    add_bot_arguments(bot)
    bot.set_defaults(handler=_bot)
    seat = commands.add_parser(
        "play",
        help="play a table against bundled bots in the terminal",
        description="Take a seat at a table against bundled bots (a referee with an embedded Redis in this "
        "process, or --target): type bids and cards; h for help.",
    )
    seat.add_argument("--variant", choices=sorted(VARIANTS), default="3p", help="3 or 4 players (default 3p)")
    seat.add_argument("--rounds", type=_positive, default=3, help="rounds to play (default 3)")
    seat.add_argument(
        "--bots",
        help="the other seats' bots, comma-separated, among expert, heuristic and random (expert:200ms: "
        "the expert's time per decision)",
    )
    seat.add_argument(
        "--name", type=_player_name, default="guest", help="your name at the table, 1 to 32 characters (default guest)"
    )
    seat.add_argument(
        "--clock",
        type=_clock,
        default=60.0,
        help="seconds per decision, 0.1 to 3600 (whole milliseconds), 0 for no clock (default 60)",
    )
    seat.add_argument("--seed", type=_seed, help="seed of the first round (64 hex digits), for a reproducible game")
    seat.add_argument("--target", help="a running referee's host:port (default: one in this process)")
    seat.add_argument("--table", help="with --target: take a free seat at this table instead of creating one")
    add_tls_arguments(seat)
    seat.set_defaults(handler=_play)
    add_table_parser(commands, clock=_clock, positive=_positive)
    from dizhu.conformance.command import add_parser as add_conformance_parser

    add_conformance_parser(commands)
    # Listed for --help only: main() hands `dizhu tournament ...` to dizhu.tournament.cli whole.
    commands.add_parser(
        "tournament",
        help="run a bot tournament through the referee (duplicate deals, ratings); see `dizhu tournament --help`",
    )
    return parser


def _only_broken_pipes(error: BaseException) -> bool:
    """Whether ``error`` is a broken pipe, or a group (from a task group) of nothing else."""
    if isinstance(error, BaseExceptionGroup):
        return all(_only_broken_pipes(inner) for inner in error.exceptions)
    return isinstance(error, BrokenPipeError)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if problem := _engine_problem():
        print(f"dizhu: {problem}", file=sys.stderr)
        return EXIT_USAGE
    try:
        if argv[:1] == ["tournament"]:
            from dizhu.tournament.cli import main as tournament

            status: int = tournament(argv[1:])
        else:
            args = build_parser().parse_args(argv)
            status = args.handler(args)
        sys.stdout.flush()  # a reader that went away shows here, not in a message at exit
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BaseException as error:
        if not _only_broken_pipes(error):
            raise
        # Nothing more can be written; keep the interpreter's own last flush quiet too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    return status


if __name__ == "__main__":
    sys.exit(main())
