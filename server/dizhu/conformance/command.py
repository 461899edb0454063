"""``dizhu conformance rules|protocol``: the kit's runner on the command line (docs/conformance.md).

Exit status: 0 every case passed (or failed as its implementation's known-failing list says);
1 a case failed, or a listed case passed (the list must be updated); 2 a bad command line (a
profile the kit does not have, a selection of no case), an engine that cannot be loaded (the
native engine not built), a kit that cannot be read, or no referee answering at ``--target``.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from dizhu.conformance.engines import FAMILIES, EngineError, StdioEngine, load_engine
from dizhu.conformance.kit import KitError, Report, find_kit

__all__ = ["add_parser"]


def _finish(report: Report, args: argparse.Namespace) -> int:
    if args.json:
        print(json.dumps(report.to_json(), indent=1))
    else:
        print(report.to_text())
    return 0 if report.ok else 1


def _rules(args: argparse.Namespace) -> int:
    from dizhu.conformance.rules_runner import run_rules

    try:
        kit = find_kit(args.kit)
        engine = load_engine(args.engine)
    except (KitError, EngineError) as error:
        print(f"dizhu conformance rules: {error}", file=sys.stderr)
        return 2
    families = tuple(args.family) if args.family else FAMILIES
    try:
        report = run_rules(kit, engine, families=families, implementation=args.implementation, unordered=args.unordered)
    except KitError as error:
        print(f"dizhu conformance rules: {error}", file=sys.stderr)
        return 2
    finally:
        if isinstance(engine, StdioEngine):
            engine.close()
    return _finish(report, args)


def _positive_seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < seconds <= 3600:
        raise argparse.ArgumentTypeError(f"{text!r}: give more than 0 and at most 3600 seconds")
    return seconds


def _protocol(args: argparse.Namespace) -> int:
    from dizhu.client.command import credentials_from
    from dizhu.conformance.protocol_runner import Unreachable, run_protocol

    try:
        kit = find_kit(args.kit)
        credentials = credentials_from(args)
        report = run_protocol(
            kit,
            args.target,
            implementation=args.implementation,
            credentials=credentials,
            only=args.only,
            profile=args.profile,
            timeout_s=args.timeout,
        )
    except (KitError, Unreachable) as error:
        print(f"dizhu conformance protocol: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"dizhu conformance protocol: --tls-ca {args.tls_ca}: {error.strerror or error}", file=sys.stderr)
        return 2
    return _finish(report, args)


def _validate(args: argparse.Namespace) -> int:
    try:
        kit = find_kit(args.kit)
        errors = kit.validate()
    except KitError as error:
        print(f"dizhu conformance validate: {error}", file=sys.stderr)
        return 2
    for line in errors:
        print(line)
    print(f"kit {kit.version} at {kit.root}: {'valid' if not errors else f'{len(errors)} schema errors'}")
    return 0 if not errors else 1


def add_parser(commands: Any) -> None:
    """Add ``conformance`` and its subcommands to the ``dizhu`` command line's subparsers."""
    from dizhu.client.command import add_tls_arguments

    conformance = commands.add_parser(
        "conformance",
        help="run the conformance kit: the rules vectors against an engine, the protocol cases against a referee",
        description="Run the conformance kit (docs/conformance.md). Exit status 0: passed (known failures "
        "allowed); 1: a case failed or a known-failing case passed; 2: bad arguments, engine or kit, or no referee "
        "at --target.",
    )
    kinds = conformance.add_subparsers(dest="suite", required=True)
    rules = kinds.add_parser("rules", help="the rules vectors against a rules engine")
    rules.add_argument(
        "--engine",
        default="python",
        help="python (default), native (dizhu.engine's native backend), cmd:COMMAND (a JSON-lines engine "
        "in any language) or MODULE:ATTRIBUTE (an engine in Python)",
    )
    rules.add_argument("--family", action="append", choices=FAMILIES, help="only this family (repeatable)")
    rules.add_argument("--implementation", help="whose known-failing list applies (default: the engine's name)")
    rules.add_argument(
        "--unordered",
        action="store_true",
        help="compare legal-move lists as sets, for an engine that lists the right moves in its own order "
        "(the report says so; dizhu's engines are held to the kit's order)",
    )
    rules.set_defaults(handler=_rules)
    protocol = kinds.add_parser("protocol", help="the protocol cases against a live referee")
    protocol.add_argument("--target", required=True, help="the referee's host:port")
    protocol.add_argument("--implementation", default="dizhu", help="whose known-failing list applies (default: dizhu)")
    protocol.add_argument("--only", help="only the cases whose id starts with this")
    protocol.add_argument(
        "--profile",
        default="default",
        help="the cases of the referee's profile: default, or rate / quota for a referee started with the flags "
        "the kit lists for them (docs/conformance.md)",
    )
    protocol.add_argument(
        "--timeout",
        type=_positive_seconds,
        default=10.0,
        metavar="SECONDS",
        help="how long to wait for the referee to answer, and for each call (default: 10)",
    )
    add_tls_arguments(protocol)
    protocol.set_defaults(handler=_protocol)
    validate = kinds.add_parser("validate", help="check the kit's files against their JSON Schemas")
    validate.set_defaults(handler=_validate)
    for parser in (rules, protocol, validate):
        parser.add_argument("--kit", help="the kit folder (default: $DIZHU_CONFORMANCE_KIT, else the checkout's)")
        if parser is not validate:
            parser.add_argument("--json", action="store_true", help="print the report as JSON")
