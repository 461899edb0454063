"""The safety settings (docs/security.md): server secrets, the signing keys, limits and quotas.

Every number here bounds what one client, or all of them, may make a referee keep or do.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from pathlib import Path
from typing import ClassVar

from dizhu.config.declaration import SettingsGroup, setting
from dizhu.config.flag_values import COUNT, FILE, FRACTION, SECONDS_OR_NONE, SOME, Values, at_least, usage_error

__all__ = ["MIN_SECRET_CHARS", "SafetySettings", "secrets", "signing_keys"]

#: The shortest server secret accepted (characters; 64 hex digits are recommended).
MIN_SECRET_CHARS = 32

_CALLS = Values("PER_SECOND", at_least(0.001, float), "a number of calls above 0")


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


def _signing_key(args: argparse.Namespace) -> bytes:
    return signing_keys(args)[0]


def _retired_signing_keys(args: argparse.Namespace) -> bytes:
    return signing_keys(args)[1]


@dataclasses.dataclass(frozen=True)
class SafetySettings(SettingsGroup):
    """How much a referee lets its clients make it keep or do, and the keys of its tokens and records."""

    TITLE: ClassVar[str | None] = "safety (docs/security.md)"
    DOCS_HEADING: ClassVar[str] = (
        "Safety: each limit and what it protects in [security.md](security.md#every-limit-and-its-default)"
    )

    #: Secrets tokens are derived from: the first mints, the others (retired) still re-mint
    #: the tokens of recorded answers. Empty: one made up per run (and shared by its workers).
    secrets: tuple[str, ...] = setting(
        (),
        "file of server secrets, one per line: the first mints tokens, the next ones are retired keys still "
        f"answering retries; each at least {MIN_SECRET_CHARS} characters; without it, $DIZHU_SECRET, "
        "comma-separated",
        repr=False,
        values=FILE,
        flag="--secret-file",
        env="DIZHU_SECRET_FILE",
        default_text="a secret made up for this run",
        empty_env_is_unset=False,
        read=secrets,
    )
    #: The Ed25519 key (PEM) that signs round records, and the public keys (PEM) of retired
    #: ones (docs/replay.md, "Signatures"). Empty: one made up per run (and shared by its workers).
    signing_key: bytes = setting(
        b"",
        "the Ed25519 private key (PEM) that signs every round's record; referees sharing tables share it",
        repr=False,
        values=FILE,
        env="DIZHU_SIGNING_KEY_FILE",
        default_text="signing-key.pem in --data-dir, made on first start; with --redis-url, a key made up for this run",
        empty_env_is_unset=False,
        read=_signing_key,
    )
    retired_signing_keys: bytes = setting(
        b"",
        "PEM file of the public keys that signed older rounds, published beside the current one",
        values=FILE,
        env="DIZHU_RETIRED_SIGNING_KEYS_FILE",
        default_text="none",
        # An empty value names a file (".", refused), as a flag's empty value would.
        empty_env_is_unset=False,
        read=_retired_signing_keys,
    )
    limits: str = setting(
        "auto",
        "per-client rate limits and quotas: auto applies them only when listening beyond loopback",
        choices=("auto", "on", "off"),
    )
    allow_anonymous_create: bool = setting(
        False,
        "let anyone create tables without an API key although listening beyond loopback",
        form="switch",
        default_text="off",
    )
    max_request_bytes: int = setting(
        64 * 1024, "the largest request accepted, in bytes", values=COUNT.shown_as("BYTES")
    )
    rate_limit: float = setting(200.0, "calls per second per client, in bursts of up to twice as many", values=_CALLS)
    create_rate_limit: float = setting(
        30.0,
        "CreateTable calls per minute per client, in bursts of up to a third as many",
        values=_CALLS.shown_as("PER_MINUTE"),
    )
    max_open_tables: int = setting(100, "open tables per client", values=COUNT)
    max_streams: int = setting(2000, "open WatchTable streams per process", values=COUNT)
    max_streams_per_connection: int = setting(100, "open WatchTable streams per connection", values=COUNT)
    max_streams_per_client: int = setting(200, "open WatchTable streams per client, when limits apply", values=COUNT)
    answers_per_table: int = setting(1000, "recorded answers kept per table, the latest", values=COUNT)
    replays_per_table: int = setting(256, "round replays kept per table, the latest", values=COUNT)
    idle_close_s: float = setting(
        6 * 3600.0,
        "seconds without a client's action before a table is closed as abandoned; 0: never",
        values=SECONDS_OR_NONE,
    )
    unattended_rounds: int = setting(
        5, "rounds in a row played by the clock alone before a table is closed; 0: never", values=SOME
    )
    memory_reserve: float = setting(
        0.10,
        "fraction of Redis maxmemory kept for running tables: CreateTable is refused beyond the rest",
        values=FRACTION,
    )

    @staticmethod
    def add_other_arguments(group: argparse._ActionsContainer) -> None:
        group.add_argument(
            "--print-public-key",
            action="store_true",
            help="print the public keys that verify this referee's round records (PEM, the current one first) and "
            "exit (default: serve)",
        )
