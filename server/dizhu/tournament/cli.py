"""``dizhu tournament [FILE] [overrides]`` and ``dizhu tournament report DIR``."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["main"]


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("a whole number is needed") from None
    if value < 1:
        raise argparse.ArgumentTypeError("at least 1")
    return value


def run_parser() -> argparse.ArgumentParser:
    from dizhu.client.command import add_tls_arguments

    parser = argparse.ArgumentParser(
        prog="dizhu tournament",
        description="Run a tournament of bots through the referee: duplicate deals, standings with confidence "
        "intervals, openskill ratings. Without FILE: the bundled bots on an embedded referee. "
        "`dizhu tournament report DIR` recomputes the results of a tournament folder from its saved games. "
        "See docs/tournaments.md.",
    )
    parser.add_argument("file", nargs="?", type=Path, help="the tournament file (TOML); default: the bundled bots")
    parser.add_argument("--name", help="the tournament's name (its id in Redis; default: the file's name)")
    parser.add_argument("--variant", choices=["3p", "4p"])
    parser.add_argument("--format", choices=["duplicate", "random"], help="duplicate deals, or random seating")
    parser.add_argument("--deal-sets", type=_positive, help="deals, each played by every seating of every line-up")
    parser.add_argument(
        "--seatings", choices=["all", "rotations"], help="duplicate seatings: permutations or rotations"
    )
    parser.add_argument("--seed", help="the tournament seed: any text, or 64 hex digits")
    parser.add_argument("--concurrency", type=_positive, help="games this runner plays at once")
    parser.add_argument("--output", "-o", type=Path, help="the output folder")
    parser.add_argument(
        "--referee", action="append", help="an external referee host:port (repeatable); default: embedded referees"
    )
    parser.add_argument("--referees", type=_positive, help="how many embedded referee processes to start")
    parser.add_argument(
        "--api-key", default=os.environ.get("DIZHU_API_KEY"), help="x-api-key for external referees (env DIZHU_API_KEY)"
    )
    add_tls_arguments(parser)
    parser.add_argument(
        "--redis-url", help="the Redis keeping schedule and results (default: REDIS_URL, else embedded)"
    )
    parser.add_argument("--decision-time", type=float, help="the turn clock, seconds per decision (0: none)")
    parser.add_argument("--timeout-policy", choices=["auto_play", "forfeit"])
    parser.add_argument("--lease", type=float, help="seconds a claimed game stays this runner's without renewal")
    parser.add_argument("--max-games", type=_positive, help="stop after claiming this many games")
    parser.add_argument("--fresh", action="store_true", help="forget what Redis holds for this tournament first")
    parser.add_argument(
        "--collect",
        action="store_true",
        help="play nothing: write the output folder from what the runners recorded in Redis "
        "(exit status 3 while the tournament is not complete)",
    )
    parser.add_argument(
        "--sandbox",
        action="store_true",
        help="confine every command and stdio entrant with bubblewrap (the file's [sandbox] limits, else the "
        "defaults; docs/tournaments.md, Confinement)",
    )
    parser.add_argument("--quiet", action="store_true", help="no live view, only the summary")
    parser.add_argument("--viewer-url", help=_VIEWER_HELP)
    return parser


_VIEWER_HELP = (
    "the HTTP address of a referee serving the web table (dizhu serve --http-address), e.g. http://host:8080: "
    "the results link every game to its replay viewer"
)


_T = TypeVar("_T")


async def _cancelled_on_sigterm(running: Coroutine[Any, Any, _T]) -> _T:
    """``running``, cancelled by SIGTERM as ``asyncio.run`` cancels it on Ctrl-C: a runner that
    Kubernetes stops (a pod deleted, drained or preempted) gives its games back at once,
    rather than leaving them to wait for their leases to run out."""
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, task.cancel)
    try:
        return await running
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


#: What ``dizhu tournament`` needs beyond dizhu itself: the [tournament] extra.
_EXTRA = "pip install 'dizhu[tournament]'"


def _run(argv: Sequence[str]) -> int:
    args = run_parser().parse_args(argv)
    from dizhu.client import DizhuError
    from dizhu.tournament.config import ConfigError, load_config

    try:
        from dizhu.tournament.runner import collect_tournament, run_tournament, summary_lines
        from dizhu.tournament.store import ScheduleMismatch
    except ModuleNotFoundError as error:
        print(f"dizhu tournament: needs the tournament extra ({_EXTRA}): {error}", file=sys.stderr)
        return 2

    overrides = {
        "name": args.name,
        "variant": args.variant,
        "format": args.format,
        "deal_sets": args.deal_sets,
        "seatings": args.seatings,
        "seed": args.seed,
        "concurrency": args.concurrency,
        "output": args.output,
        "viewer_url": args.viewer_url,
        "referees": tuple(args.referee) if args.referee else None,
        "embedded_referees": args.referees,
        "api_key": args.api_key,
        "tls": args.tls or None,
        "tls_ca": Path(args.tls_ca).resolve() if args.tls_ca else None,
        "redis_url": args.redis_url,
        "lease_s": args.lease,
        "clock.decision_s": args.decision_time,
        "clock.timeout_policy": args.timeout_policy,
        "sandbox": args.sandbox or None,
    }
    try:
        config = load_config(args.file, overrides)
    except ConfigError as error:
        print(f"dizhu tournament: {error}", file=sys.stderr)
        return 2
    try:
        running = (
            collect_tournament(config)
            if args.collect
            else run_tournament(config, max_games=args.max_games, fresh=args.fresh, live=False if args.quiet else None)
        )
        summary = asyncio.run(_cancelled_on_sigterm(running))
    except (ConfigError, ScheduleMismatch, ImportError, AttributeError, TypeError) as error:  # the file's fault
        print(f"dizhu tournament: {error}", file=sys.stderr)
        return 2
    except (DizhuError, OSError) as error:
        hint = " (give the referee's key with --api-key or DIZHU_API_KEY)" if "UNAUTHENTICATED" in str(error) else ""
        print(f"dizhu tournament: {error}{hint}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, asyncio.CancelledError) as stopped:
        print("dizhu tournament: stopped; run the same command again to resume", file=sys.stderr)
        return 128 + (signal.SIGINT if isinstance(stopped, KeyboardInterrupt) else signal.SIGTERM)
    print("\n".join(summary_lines(summary, config)))
    if args.collect and not summary.progress.finished:
        print("dizhu tournament: the tournament is not complete; the outputs hold the games recorded", file=sys.stderr)
        return 3
    return 0


def _report(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="dizhu tournament report",
        description="Recompute results.json, games.csv, standings.csv, leaderboard.md and ratings.png "
        "of a tournament folder from its saved games (replays and fault records).",
    )
    parser.add_argument("directory", type=Path)
    parser.add_argument("--viewer-url", help=_VIEWER_HELP)
    args = parser.parse_args(argv)
    try:
        from dizhu.tournament.report import write_results
    except ModuleNotFoundError as error:
        print(f"dizhu tournament report: needs the tournament extra ({_EXTRA}): {error}", file=sys.stderr)
        return 2
    try:
        result = write_results(args.directory, args.viewer_url)
    except ValueError as error:
        print(f"dizhu tournament report: {error}", file=sys.stderr)
        return 2
    print((args.directory / "leaderboard.md").read_text(), end="")
    games = result["games"]
    print(f"\n{games['played']} of {games['scheduled']} games; results written to {args.directory}/")
    return 0


def main(argv: Sequence[str]) -> int:
    """Dispatch ``report`` or a run."""
    if argv and argv[0] == "report":
        return _report(argv[1:])
    return _run(argv)
