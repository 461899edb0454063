"""The safety flags (docs/security.md): server secrets, the signing keys, limits and quotas.

Every number here bounds what one client, or all of them, may make a referee keep or do.
"""

from __future__ import annotations

import argparse
import functools
import os
from pathlib import Path

from dizhu.config.flag_values import add_env_flag, add_env_switch, at_least, fraction, usage_error
from dizhu.config.settings import MIN_SECRET_CHARS, ServerConfig

__all__ = ["add_safety_arguments", "secrets", "signing_keys"]


def add_safety_arguments(parser: argparse.ArgumentParser, d: ServerConfig) -> None:
    safety = parser.add_argument_group("safety (docs/security.md)")
    safety.add_argument(
        "--secret-file",
        metavar="FILE",
        type=Path,
        default=os.environ.get("DIZHU_SECRET_FILE"),
        help="file of server secrets, one per line: the first mints tokens, the next ones are retired keys still "
        f"answering retries; each at least {MIN_SECRET_CHARS} characters (env DIZHU_SECRET_FILE; else env "
        "DIZHU_SECRET, comma-separated; default: a secret made up for this run)",
    )
    safety.add_argument(
        "--signing-key",
        metavar="FILE",
        type=Path,
        default=os.environ.get("DIZHU_SIGNING_KEY_FILE"),
        help="the Ed25519 private key (PEM) that signs every round's record (env DIZHU_SIGNING_KEY_FILE; "
        "default: signing-key.pem in --data-dir, made on first start; with --redis-url, a key made up for this "
        "run); referees sharing tables share it",
    )
    safety.add_argument(
        "--retired-signing-keys",
        metavar="FILE",
        type=Path,
        # Written out: an empty value names a file here (".", refused), where add_env_flag reads it as unset.
        default=os.environ.get("DIZHU_RETIRED_SIGNING_KEYS_FILE"),
        help="PEM file of the public keys that signed older rounds, published beside the current one "
        "(env DIZHU_RETIRED_SIGNING_KEYS_FILE; default: none)",
    )
    safety.add_argument(
        "--print-public-key",
        action="store_true",
        help="print the public keys that verify this referee's round records (PEM, the current one first) and "
        "exit (default: serve)",
    )
    flag = functools.partial(add_env_flag, safety)
    count = functools.partial(flag, metavar="N", convert=at_least(1, int), expected="a whole number of at least 1")
    rate = functools.partial(flag, convert=at_least(0.001, float), expected="a number of calls above 0")
    flag(
        "--limits",
        "DIZHU_LIMITS",
        choices=["auto", "on", "off"],
        default=d.limits,
        help="per-client rate limits and quotas: auto applies them only when listening beyond loopback",
    )
    add_env_switch(
        safety,
        "--allow-anonymous-create",
        "DIZHU_ALLOW_ANONYMOUS_CREATE",
        help="let anyone create tables without an API key although listening beyond loopback",
    )
    count(
        "--max-request-bytes",
        "DIZHU_MAX_REQUEST_BYTES",
        metavar="BYTES",
        default=d.max_request_bytes,
        help="the largest request accepted, in bytes",
    )
    rate(
        "--rate-limit",
        "DIZHU_RATE_LIMIT",
        metavar="PER_SECOND",
        default=d.rate_limit,
        help="calls per second per client, in bursts of up to twice as many",
    )
    rate(
        "--create-rate-limit",
        "DIZHU_CREATE_RATE_LIMIT",
        metavar="PER_MINUTE",
        default=d.create_rate_limit,
        help="CreateTable calls per minute per client, in bursts of up to a third as many",
    )
    count("--max-open-tables", "DIZHU_MAX_OPEN_TABLES", default=d.max_open_tables, help="open tables per client")
    count("--max-streams", "DIZHU_MAX_STREAMS", default=d.max_streams, help="open WatchTable streams per process")
    count(
        "--max-streams-per-connection",
        "DIZHU_MAX_STREAMS_PER_CONNECTION",
        default=d.max_streams_per_connection,
        help="open WatchTable streams per connection",
    )
    count(
        "--max-streams-per-client",
        "DIZHU_MAX_STREAMS_PER_CLIENT",
        default=d.max_streams_per_client,
        help="open WatchTable streams per client, when limits apply",
    )
    count(
        "--answers-per-table",
        "DIZHU_ANSWERS_PER_TABLE",
        default=d.answers_per_table,
        help="recorded answers kept per table, the latest",
    )
    count(
        "--replays-per-table",
        "DIZHU_REPLAYS_PER_TABLE",
        default=d.replays_per_table,
        help="round replays kept per table, the latest",
    )
    flag(
        "--idle-close",
        "DIZHU_IDLE_CLOSE_S",
        metavar="SECONDS",
        convert=at_least(0, float),
        expected="a number of seconds, at least 0",
        default=d.idle_close_s,
        help="seconds without a client's action before a table is closed as abandoned; 0: never",
    )
    flag(
        "--unattended-rounds",
        "DIZHU_UNATTENDED_ROUNDS",
        metavar="N",
        convert=at_least(0, int),
        expected="a whole number, at least 0",
        default=d.unattended_rounds,
        help="rounds in a row played by the clock alone before a table is closed; 0: never",
    )
    flag(
        "--memory-reserve",
        "DIZHU_MEMORY_RESERVE",
        metavar="FRACTION",
        convert=fraction,
        expected="a fraction from 0 up to 1",
        default=d.memory_reserve,
        help="fraction of Redis maxmemory kept for running tables: CreateTable is refused beyond the rest",
    )


def secrets(args: argparse.Namespace) -> tuple[str, ...]:
    """The server secrets from ``--secret-file`` (or ``DIZHU_SECRET``); SystemExit if one is too short."""
    if args.secret_file is not None:
        try:
            lines = Path(args.secret_file).read_text().splitlines()
        except OSError as error:
            raise SystemExit(f"--secret-file: {error}") from None
        found = tuple(line.strip() for line in lines if line.strip() and not line.startswith("#"))
        if not found:
            raise SystemExit(f"--secret-file {args.secret_file}: no secret in it")
    else:
        found = tuple(value.strip() for value in os.environ.get("DIZHU_SECRET", "").split(",") if value.strip())
    if any(len(secret) < MIN_SECRET_CHARS for secret in found):
        raise SystemExit(f"a server secret needs at least {MIN_SECRET_CHARS} characters (e.g. openssl rand -hex 32)")
    return found


def signing_keys(args: argparse.Namespace) -> tuple[bytes, bytes]:
    """The signing key's PEM and the retired keys' PEM; a usage error if a file is unusable.

    Without ``--signing-key``: the key in the embedded Redis's data directory (made there on
    first start); with an external Redis there is none, b"" (one is made up for the run).
    """
    from dizhu.referee.signing import SigningKeys, load_or_create_private_key

    try:
        if args.signing_key is not None:
            key = Path(args.signing_key).read_bytes()
        else:
            key = b"" if args.redis_url else load_or_create_private_key(args.data_dir / "signing-key.pem")
        retired = Path(args.retired_signing_keys).read_bytes() if args.retired_signing_keys is not None else b""
    except OSError as error:
        raise usage_error(f"signing key: {error.filename}: {error.strerror or error}") from None
    try:
        SigningKeys.from_pem(key, retired) if key else SigningKeys.ephemeral()
    except (ValueError, TypeError) as error:
        raise usage_error(f"--signing-key or --retired-signing-keys: not an Ed25519 key: {error}") from None
    return key, retired
