"""Server configuration, from command-line flags with environment variables as defaults.

Every flag has an environment variable (``DIZHU_<FLAG>``, and the conventional ``REDIS_URL``);
a flag given on the command line wins. The server secret has a file flag and an environment
variable, never a flag of its own (command lines are visible to every user of the machine).
The safety settings and their defaults are explained in docs/security.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import ipaddress
import os
from pathlib import Path

__all__ = ["ServerConfig", "add_server_arguments", "config_from_args", "listens_on_loopback"]

#: The shortest server secret accepted (characters; 64 hex digits are recommended).
MIN_SECRET_CHARS = 32


def listens_on_loopback(address: str) -> bool:
    """Whether ``host:port`` (or ``unix:...``) accepts connections from this machine only."""
    if address.startswith("unix:"):
        return True
    host = address.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclasses.dataclass(frozen=True, slots=True)
class ServerConfig:
    #: Where to listen, ``host:port``; port 0 picks a free one.
    address: str = "127.0.0.1:50051"
    #: An external Redis; None starts an embedded redis-server keeping its data in ``data_dir``.
    redis_url: str | None = None
    data_dir: Path = Path("var/redis")
    #: ``json`` (one JSON object per line) or ``console`` (for people).
    log_format: str = "json"
    log_level: str = "info"
    #: Worker processes sharing the port (SO_REUSEPORT).
    workers: int = 1
    #: Seconds in-flight calls get to finish on SIGTERM.
    grace_s: float = 10.0
    #: How long a closed table's keys are kept.
    finished_ttl_s: int = 7 * 24 * 3600
    #: How long a request id's answer is kept for retries.
    answer_ttl_s: int = 24 * 3600
    #: Events kept per table before the oldest are trimmed.
    events_maxlen: int = 10_000
    #: API keys CreateTable requires; empty: anyone may create tables.
    api_keys: tuple[str, ...] = ()
    #: Port for Prometheus metrics (/metrics); 0 disables them.
    metrics_port: int = 0
    #: Redis key prefix.
    key_prefix: str = "dizhu"
    #: Seconds of silence after which an event stream carries a heartbeat.
    heartbeat_s: float = 10.0
    #: How often the turn clock looks for tables whose time ran out.
    clock_interval_s: float = 0.1
    #: Tables one process may stream at once (each holds a Redis connection while watched).
    max_watched_tables: int = 10_000
    # -- Safety (docs/security.md) ------------------------------------------------------------
    #: Secrets tokens are derived from: the first mints, the others (retired) still re-mint
    #: the tokens of recorded answers. Empty: one made up per run (and shared by its workers).
    secrets: tuple[str, ...] = dataclasses.field(default=(), repr=False)
    #: Per-client limits: "auto" (only when listening beyond loopback), "on" or "off".
    limits: str = "auto"
    #: Let anyone create tables without an API key although the server listens beyond loopback.
    allow_anonymous_create: bool = False
    #: The largest request accepted, in bytes.
    max_request_bytes: int = 64 * 1024
    #: Calls per second per client (bursts of twice as many).
    rate_limit: float = 200.0
    #: CreateTable calls per minute per client (bursts of a third as many).
    create_rate_limit: float = 30.0
    #: Open tables per client.
    max_open_tables: int = 100
    #: Open WatchTable streams per process, per connection, per client.
    max_streams: int = 2000
    max_streams_per_connection: int = 100
    max_streams_per_client: int = 200
    #: Recorded answers kept per table (the latest).
    answers_per_table: int = 1000
    #: Replays kept per table (the latest rounds').
    replays_per_table: int = 256
    #: Seconds without a client's action after which a table is closed as abandoned; 0: never.
    idle_close_s: float = 6 * 3600.0
    #: Rounds in a row played by the clock alone after which a table is closed; 0: never.
    unattended_rounds: int = 5
    #: Fraction of Redis' maxmemory kept for running tables: CreateTable is refused beyond the rest.
    memory_reserve: float = 0.10

    @property
    def limits_enabled(self) -> bool:
        """Whether the per-client limits apply (see ``limits``)."""
        return self.limits == "on" or (self.limits == "auto" and not listens_on_loopback(self.address))

    @property
    def anonymous_create(self) -> bool:
        """Whether CreateTable needs no API key (when the server has none configured)."""
        return self.allow_anonymous_create or listens_on_loopback(self.address)


def _env(name: str, default: str) -> str:
    return os.environ.get(name, default)


def add_server_arguments(parser: argparse.ArgumentParser) -> None:
    d = ServerConfig()
    parser.add_argument("--address", default=_env("DIZHU_ADDRESS", d.address), help="host:port to listen on")
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("REDIS_URL"),
        help="external Redis (env REDIS_URL); default: an embedded redis-server",
    )
    parser.add_argument("--data-dir", type=Path, default=Path(_env("DIZHU_DATA_DIR", str(d.data_dir))))
    parser.add_argument("--log-format", choices=["json", "console"], default=_env("DIZHU_LOG_FORMAT", d.log_format))
    parser.add_argument("--log-level", default=_env("DIZHU_LOG_LEVEL", d.log_level))
    parser.add_argument("--workers", type=int, default=int(_env("DIZHU_WORKERS", str(d.workers))))
    parser.add_argument("--grace", type=float, default=float(_env("DIZHU_GRACE_S", str(d.grace_s))))
    parser.add_argument("--finished-ttl", type=int, default=int(_env("DIZHU_FINISHED_TTL_S", str(d.finished_ttl_s))))
    parser.add_argument("--answer-ttl", type=int, default=int(_env("DIZHU_ANSWER_TTL_S", str(d.answer_ttl_s))))
    parser.add_argument("--events-maxlen", type=int, default=int(_env("DIZHU_EVENTS_MAXLEN", str(d.events_maxlen))))
    parser.add_argument(
        "--api-key",
        action="append",
        default=[key for key in _env("DIZHU_API_KEYS", "").split(",") if key],
        help="require this key (x-api-key metadata) for CreateTable; repeatable (env DIZHU_API_KEYS, comma-separated)",
    )
    parser.add_argument("--metrics-port", type=int, default=int(_env("DIZHU_METRICS_PORT", str(d.metrics_port))))
    parser.add_argument("--key-prefix", default=_env("DIZHU_KEY_PREFIX", d.key_prefix))
    parser.add_argument("--heartbeat", type=float, default=float(_env("DIZHU_HEARTBEAT_S", str(d.heartbeat_s))))
    parser.add_argument(
        "--clock-interval", type=float, default=float(_env("DIZHU_CLOCK_INTERVAL_S", str(d.clock_interval_s)))
    )
    parser.add_argument(
        "--max-watched-tables",
        type=int,
        default=int(_env("DIZHU_MAX_WATCHED_TABLES", str(d.max_watched_tables))),
        help="tables one process may stream at once (one Redis connection each)",
    )
    _add_safety_arguments(parser, d)


def _add_safety_arguments(parser: argparse.ArgumentParser, d: ServerConfig) -> None:
    safety = parser.add_argument_group("safety (docs/security.md)")
    safety.add_argument(
        "--secret-file",
        type=Path,
        default=os.environ.get("DIZHU_SECRET_FILE"),
        help="file of server secrets, one per line: the first mints tokens, the next ones are retired keys still "
        f"answering retries; each at least {MIN_SECRET_CHARS} characters (env DIZHU_SECRET_FILE; else env "
        "DIZHU_SECRET, comma-separated; default: a secret made up for this run)",
    )
    safety.add_argument(
        "--limits",
        choices=["auto", "on", "off"],
        default=_env("DIZHU_LIMITS", d.limits),
        help="per-client rate limits and quotas: auto applies them only when listening beyond loopback "
        f"(env DIZHU_LIMITS; default {d.limits})",
    )
    safety.add_argument(
        "--allow-anonymous-create",
        action="store_true",
        default=_env("DIZHU_ALLOW_ANONYMOUS_CREATE", "") in {"1", "true", "yes"},
        help="let anyone create tables without an API key although listening beyond loopback "
        "(env DIZHU_ALLOW_ANONYMOUS_CREATE=1; default: off)",
    )
    numbers: list[tuple[str, str, type[int] | type[float], int | float, str]] = [
        ("--max-request-bytes", "DIZHU_MAX_REQUEST_BYTES", int, d.max_request_bytes, "largest request, bytes"),
        ("--rate-limit", "DIZHU_RATE_LIMIT", float, d.rate_limit, "calls per second per client (bursts of twice)"),
        (
            "--create-rate-limit",
            "DIZHU_CREATE_RATE_LIMIT",
            float,
            d.create_rate_limit,
            "CreateTable calls per minute per client (bursts of a third)",
        ),
        ("--max-open-tables", "DIZHU_MAX_OPEN_TABLES", int, d.max_open_tables, "open tables per client"),
        ("--max-streams", "DIZHU_MAX_STREAMS", int, d.max_streams, "open streams per process"),
        (
            "--max-streams-per-connection",
            "DIZHU_MAX_STREAMS_PER_CONNECTION",
            int,
            d.max_streams_per_connection,
            "open streams per connection",
        ),
        (
            "--max-streams-per-client",
            "DIZHU_MAX_STREAMS_PER_CLIENT",
            int,
            d.max_streams_per_client,
            "open streams per client (with limits)",
        ),
        ("--answers-per-table", "DIZHU_ANSWERS_PER_TABLE", int, d.answers_per_table, "answers kept per table"),
        ("--replays-per-table", "DIZHU_REPLAYS_PER_TABLE", int, d.replays_per_table, "round replays kept per table"),
        (
            "--idle-close",
            "DIZHU_IDLE_CLOSE_S",
            float,
            d.idle_close_s,
            "seconds without a client's action before a table is closed as abandoned; 0: never",
        ),
        (
            "--unattended-rounds",
            "DIZHU_UNATTENDED_ROUNDS",
            int,
            d.unattended_rounds,
            "rounds in a row played by the clock alone before a table is closed; 0: never",
        ),
        (
            "--memory-reserve",
            "DIZHU_MEMORY_RESERVE",
            float,
            d.memory_reserve,
            "fraction of Redis maxmemory kept for running tables (CreateTable refused beyond the rest)",
        ),
    ]
    for flag, env, kind, default, meaning in numbers:
        safety.add_argument(
            flag, type=kind, default=kind(_env(env, str(default))), help=f"{meaning} (env {env}; default {default:g})"
        )


def _secrets(args: argparse.Namespace) -> tuple[str, ...]:
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


def config_from_args(args: argparse.Namespace) -> ServerConfig:
    if args.workers < 1:
        raise SystemExit("--workers must be at least 1")
    return ServerConfig(
        address=args.address,
        redis_url=args.redis_url or None,
        data_dir=args.data_dir,
        log_format=args.log_format,
        log_level=args.log_level,
        workers=args.workers,
        grace_s=args.grace,
        finished_ttl_s=args.finished_ttl,
        answer_ttl_s=args.answer_ttl,
        events_maxlen=args.events_maxlen,
        api_keys=tuple(args.api_key),
        metrics_port=args.metrics_port,
        key_prefix=args.key_prefix,
        heartbeat_s=args.heartbeat,
        clock_interval_s=args.clock_interval,
        max_watched_tables=args.max_watched_tables,
        secrets=_secrets(args),
        limits=args.limits,
        allow_anonymous_create=args.allow_anonymous_create,
        max_request_bytes=args.max_request_bytes,
        rate_limit=args.rate_limit,
        create_rate_limit=args.create_rate_limit,
        max_open_tables=args.max_open_tables,
        max_streams=args.max_streams,
        max_streams_per_connection=args.max_streams_per_connection,
        max_streams_per_client=args.max_streams_per_client,
        answers_per_table=args.answers_per_table,
        replays_per_table=args.replays_per_table,
        idle_close_s=args.idle_close,
        unattended_rounds=args.unattended_rounds,
        memory_reserve=args.memory_reserve,
    )
