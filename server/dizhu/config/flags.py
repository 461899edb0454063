"""``dizhu serve``'s flags, with environment variables as defaults, read into a :class:`ServerConfig`.

Every flag has an environment variable (``DIZHU_<FLAG>``, and the conventional ``REDIS_URL``);
a flag given on the command line wins (``--api-key`` flags replace ``DIZHU_API_KEYS``).
Environment values are checked like flags: a bad one is a clear usage error. The server
secret has a file flag and an environment variable, never a flag of its own (command lines
are visible to every user of the machine). The safety settings and their defaults are
explained in docs/security.md.
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import sys
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dizhu.config.settings import MIN_SECRET_CHARS, ServerConfig

__all__ = ["add_server_arguments", "config_from_args"]


def _env(name: str, default: object) -> str:
    """The environment's value of ``name``, else ``default``: a string argparse converts and checks
    like a flag's (so a bad environment value is a clear error of its own, never a traceback)."""
    return os.environ.get(name, str(default))


def _checked(convert: Callable[[str], Any], what: str, env: str) -> Callable[[str], Any]:
    """An argparse type: ``convert(text)``, or an error saying what was expected and where it came from."""

    def parse(text: str) -> Any:
        try:
            return convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what} (from the flag, or ${env})") from None

    parse.__name__ = what
    return parse


def _at_least(low: float, kind: Callable[[str], float]) -> Callable[[str], Any]:
    def convert(text: str) -> float:
        value = kind(text)
        if not (math.isfinite(value) and value >= low):
            raise ValueError(text)
        return value

    return convert


def _port(text: str) -> int:
    port = int(text)
    if not 0 <= port <= _MAX_PORT:
        raise ValueError(text)
    return port


def _address(text: str) -> str:
    host, colon, port = text.rpartition(":")
    if not colon or not host or not port.isdigit():
        raise ValueError(text)
    _port(port)
    return text


def _redis_url(text: str) -> str:
    """One URL, or a cluster's seed nodes: a URL, then further URLs or ``host:port``, comma-separated."""
    from dizhu.store.connection import seed_nodes

    first, _ = seed_nodes(text)
    if urllib.parse.urlsplit(first).scheme not in _REDIS_SCHEMES:
        raise ValueError(text)
    return text


def _key_prefix(text: str) -> str:
    from dizhu.store.keys import validate_prefix

    return validate_prefix(text)


_MAX_PORT = 65535
_REDIS_SCHEMES = ("redis", "rediss", "unix")
_LOG_LEVELS = ("debug", "info", "warning", "error", "critical")


def add_server_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``serve`` flags; each one's environment variable gives its default."""
    d = ServerConfig()
    whole = functools.partial(_at_least, 1, int)
    seconds = functools.partial(_at_least, 0, float)
    parser.add_argument(
        "--address",
        metavar="HOST:PORT",
        type=_checked(_address, "a host:port address (port 0..65535)", "DIZHU_ADDRESS"),
        default=_env("DIZHU_ADDRESS", d.address),
        help="where to listen; port 0 picks a free one (env DIZHU_ADDRESS; default: %(default)s)",
    )
    parser.add_argument(
        "--redis-url",
        metavar="URL",
        type=_checked(
            _redis_url, "a redis://, rediss:// or unix:// URL (a cluster: nodes, comma-separated)", "REDIS_URL"
        ),
        default=os.environ.get("REDIS_URL"),
        help="an external Redis, e.g. redis://host:6379/0; with --redis-cluster, seed nodes, comma-separated, "
        "e.g. redis://node-0:6379,node-1:6379,node-2:6379 (env REDIS_URL; default: none, an embedded "
        "redis-server keeping its data in --data-dir)",
    )
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        type=Path,
        default=Path(_env("DIZHU_DATA_DIR", d.data_dir)),
        help="the embedded Redis's data directory, locked against a second referee (env DIZHU_DATA_DIR; "
        "default: %(default)s)",
    )
    parser.add_argument(
        "--log-format",
        choices=["json", "console"],
        default=_env("DIZHU_LOG_FORMAT", d.log_format),
        help="json lines, or console for people (env DIZHU_LOG_FORMAT; default: %(default)s)",
    )
    parser.add_argument(
        "--log-level",
        type=str.lower,
        choices=_LOG_LEVELS,
        default=_env("DIZHU_LOG_LEVEL", d.log_level),
        help="the least severe level logged (env DIZHU_LOG_LEVEL; default: %(default)s)",
    )
    parser.add_argument(
        "--workers",
        metavar="N",
        type=_checked(whole(), "a whole number of at least 1", "DIZHU_WORKERS"),
        default=_env("DIZHU_WORKERS", d.workers),
        help="processes sharing the port (env DIZHU_WORKERS; default: %(default)s)",
    )
    parser.add_argument(
        "--grace",
        metavar="SECONDS",
        type=_checked(seconds(), "a number of seconds, at least 0", "DIZHU_GRACE_S"),
        default=_env("DIZHU_GRACE_S", d.grace_s),
        help="seconds in-flight calls get to finish on SIGTERM (env DIZHU_GRACE_S; default: %(default)s)",
    )
    parser.add_argument(
        "--finished-ttl",
        metavar="SECONDS",
        type=_checked(whole(), "a whole number of seconds, at least 1", "DIZHU_FINISHED_TTL_S"),
        default=_env("DIZHU_FINISHED_TTL_S", d.finished_ttl_s),
        help="seconds a closed table (state, events, replays) is kept (env DIZHU_FINISHED_TTL_S; "
        "default: %(default)s, 7 days)",
    )
    parser.add_argument(
        "--answer-ttl",
        metavar="SECONDS",
        type=_checked(whole(), "a whole number of seconds, at least 1", "DIZHU_ANSWER_TTL_S"),
        default=_env("DIZHU_ANSWER_TTL_S", d.answer_ttl_s),
        help="seconds a request id's answer is kept for retries (env DIZHU_ANSWER_TTL_S; default: %(default)s, 1 day)",
    )
    parser.add_argument(
        "--events-maxlen",
        metavar="N",
        type=_checked(whole(), "a whole number of at least 1", "DIZHU_EVENTS_MAXLEN"),
        default=_env("DIZHU_EVENTS_MAXLEN", d.events_maxlen),
        help="events kept per table; a client further behind gets a snapshot (env DIZHU_EVENTS_MAXLEN; "
        "default: %(default)s)",
    )
    parser.add_argument(
        "--api-key",
        metavar="KEY",
        action="append",
        default=None,
        help="require this key (x-api-key metadata) for CreateTable; repeatable; given at all, the flags "
        "replace $DIZHU_API_KEYS (comma-separated) (default: none, anyone may create tables)",
    )
    parser.add_argument(
        "--metrics-port",
        metavar="PORT",
        type=_checked(_port, "a port number 0..65535", "DIZHU_METRICS_PORT"),
        default=_env("DIZHU_METRICS_PORT", d.metrics_port),
        help="port of the Prometheus /metrics endpoint, 0 for none; worker n uses port + n "
        "(env DIZHU_METRICS_PORT; default: %(default)s)",
    )
    parser.add_argument(
        "--key-prefix",
        metavar="PREFIX",
        type=_checked(_key_prefix, "a key prefix of 1..64 characters of [A-Za-z0-9._:-]", "DIZHU_KEY_PREFIX"),
        default=_env("DIZHU_KEY_PREFIX", d.key_prefix),
        help="prefix of every Redis key (env DIZHU_KEY_PREFIX; default: %(default)s)",
    )
    parser.add_argument(
        "--heartbeat",
        metavar="SECONDS",
        type=_checked(_at_least(0.001, float), "a number of seconds above 0", "DIZHU_HEARTBEAT_S"),
        default=_env("DIZHU_HEARTBEAT_S", d.heartbeat_s),
        help="idle seconds after which an event stream carries a heartbeat (env DIZHU_HEARTBEAT_S; "
        "default: %(default)s)",
    )
    parser.add_argument(
        "--stream-backlog",
        metavar="N",
        type=_checked(whole(), "a whole number of at least 1", "DIZHU_STREAM_BACKLOG"),
        default=_env("DIZHU_STREAM_BACKLOG", d.stream_backlog),
        help="events a stream may have waiting to be sent; one given more starts again from a snapshot "
        "(env DIZHU_STREAM_BACKLOG; default: %(default)s)",
    )
    parser.add_argument(
        "--clock-interval",
        metavar="SECONDS",
        type=_checked(_at_least(0.001, float), "a number of seconds above 0", "DIZHU_CLOCK_INTERVAL_S"),
        default=_env("DIZHU_CLOCK_INTERVAL_S", d.clock_interval_s),
        help="seconds between the turn clock's looks for deadlines that passed (env DIZHU_CLOCK_INTERVAL_S; "
        "default: %(default)s)",
    )
    parser.add_argument(
        "--max-watched-tables",
        metavar="N",
        type=_checked(whole(), "a whole number of at least 1", "DIZHU_MAX_WATCHED_TABLES"),
        default=_env("DIZHU_MAX_WATCHED_TABLES", d.max_watched_tables),
        help="tables one process may stream at once (env DIZHU_MAX_WATCHED_TABLES; default: %(default)s)",
    )
    parser.add_argument(
        "--redis-wait",
        metavar="SECONDS",
        type=_checked(seconds(), "a number of seconds, at least 0", "DIZHU_REDIS_WAIT_S"),
        default=_env("DIZHU_REDIS_WAIT_S", d.redis_wait_s),
        help="seconds to keep trying an external Redis that does not answer at start, with backoff, "
        "before giving up (env DIZHU_REDIS_WAIT_S; default: %(default)s)",
    )
    _add_safety_arguments(parser, d)
    _add_tls_arguments(parser)
    _add_browser_arguments(parser, d)
    _add_scale_out_arguments(parser, d)


def _add_scale_out_arguments(parser: argparse.ArgumentParser, d: ServerConfig) -> None:
    scale = parser.add_argument_group("scale-out (docs/scaling.md)")
    scale.add_argument(
        "--redis-cluster",
        action="store_true",
        default=_env("DIZHU_REDIS_CLUSTER", "") in {"1", "true", "yes"},
        help="--redis-url names a node of a Redis Cluster (redis:// or rediss://) (env DIZHU_REDIS_CLUSTER=1; "
        "default: off, one Redis server)",
    )
    durabilities = ("primary", "replica")
    scale.add_argument(
        "--durability",
        choices=durabilities,
        # Checked by the type too: argparse checks choices against the command line, not the environment.
        type=_checked(_one_of(durabilities), "primary or replica", "DIZHU_DURABILITY"),
        default=_env("DIZHU_DURABILITY", d.durability),
        help="acknowledge a change once Redis's primary has it, or only once a replica has it too (WAIT): "
        "then a failover loses no acknowledged move (env DIZHU_DURABILITY; default: %(default)s)",
    )
    scale.add_argument(
        "--replica-timeout",
        metavar="SECONDS",
        type=_checked(_at_least(0.001, float), "a number of seconds above 0", "DIZHU_REPLICA_TIMEOUT_S"),
        default=_env("DIZHU_REPLICA_TIMEOUT_S", d.replica_timeout_s),
        help="with --durability replica, how long a change waits for a replica before the call fails "
        "UNAVAILABLE, to be retried (env DIZHU_REPLICA_TIMEOUT_S; default: %(default)s)",
    )
    scale.add_argument(
        "--max-connection-age",
        metavar="SECONDS",
        type=_checked(_at_least(1, float), "a number of seconds, at least 1", "DIZHU_MAX_CONNECTION_AGE_S"),
        default=_env("DIZHU_MAX_CONNECTION_AGE_S", d.max_connection_age_s),
        help="seconds after which a client's connection is closed gracefully, so that clients reconnect and "
        "spread over new processes (env DIZHU_MAX_CONNECTION_AGE_S; default: %(default)s)",
    )


def _one_of(allowed: tuple[str, ...]) -> Callable[[str], str]:
    def convert(text: str) -> str:
        if text not in allowed:
            raise ValueError(text)
        return text

    return convert


def _usage_error(message: str) -> SystemExit:
    """A bad combination of settings: said on standard error, exit status 2 (as argparse's own)."""
    print(f"dizhu serve: error: {message}", file=sys.stderr)  # noqa: T201 -- a command line's message
    return SystemExit(2)


def _fraction(text: str) -> float:
    value = float(text)
    if not 0 <= value < 1:
        raise ValueError(text)
    return value


def _add_safety_arguments(parser: argparse.ArgumentParser, d: ServerConfig) -> None:
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
    safety.add_argument(
        "--limits",
        choices=["auto", "on", "off"],
        default=_env("DIZHU_LIMITS", d.limits),
        help="per-client rate limits and quotas: auto applies them only when listening beyond loopback "
        "(env DIZHU_LIMITS; default: %(default)s)",
    )
    safety.add_argument(
        "--allow-anonymous-create",
        action="store_true",
        default=_env("DIZHU_ALLOW_ANONYMOUS_CREATE", "") in {"1", "true", "yes"},
        help="let anyone create tables without an API key although listening beyond loopback "
        "(env DIZHU_ALLOW_ANONYMOUS_CREATE=1; default: off)",
    )
    whole = functools.partial(_at_least, 1, int)
    whole_or_zero = functools.partial(_at_least, 0, int)
    rate = functools.partial(_at_least, 0.001, float)
    seconds = functools.partial(_at_least, 0, float)
    numbers: list[tuple[str, str, str, Callable[[str], Any], str, object, str]] = [
        (
            "--max-request-bytes",
            "DIZHU_MAX_REQUEST_BYTES",
            "BYTES",
            whole(),
            "a whole number of at least 1",
            d.max_request_bytes,
            "the largest request accepted, in bytes",
        ),
        (
            "--rate-limit",
            "DIZHU_RATE_LIMIT",
            "PER_SECOND",
            rate(),
            "a number of calls above 0",
            d.rate_limit,
            "calls per second per client, in bursts of up to twice as many",
        ),
        (
            "--create-rate-limit",
            "DIZHU_CREATE_RATE_LIMIT",
            "PER_MINUTE",
            rate(),
            "a number of calls above 0",
            d.create_rate_limit,
            "CreateTable calls per minute per client, in bursts of up to a third as many",
        ),
        (
            "--max-open-tables",
            "DIZHU_MAX_OPEN_TABLES",
            "N",
            whole(),
            "a whole number of at least 1",
            d.max_open_tables,
            "open tables per client",
        ),
        (
            "--max-streams",
            "DIZHU_MAX_STREAMS",
            "N",
            whole(),
            "a whole number of at least 1",
            d.max_streams,
            "open WatchTable streams per process",
        ),
        (
            "--max-streams-per-connection",
            "DIZHU_MAX_STREAMS_PER_CONNECTION",
            "N",
            whole(),
            "a whole number of at least 1",
            d.max_streams_per_connection,
            "open WatchTable streams per connection",
        ),
        (
            "--max-streams-per-client",
            "DIZHU_MAX_STREAMS_PER_CLIENT",
            "N",
            whole(),
            "a whole number of at least 1",
            d.max_streams_per_client,
            "open WatchTable streams per client, when limits apply",
        ),
        (
            "--answers-per-table",
            "DIZHU_ANSWERS_PER_TABLE",
            "N",
            whole(),
            "a whole number of at least 1",
            d.answers_per_table,
            "recorded answers kept per table, the latest",
        ),
        (
            "--replays-per-table",
            "DIZHU_REPLAYS_PER_TABLE",
            "N",
            whole(),
            "a whole number of at least 1",
            d.replays_per_table,
            "round replays kept per table, the latest",
        ),
        (
            "--idle-close",
            "DIZHU_IDLE_CLOSE_S",
            "SECONDS",
            seconds(),
            "a number of seconds, at least 0",
            d.idle_close_s,
            "seconds without a client's action before a table is closed as abandoned; 0: never",
        ),
        (
            "--unattended-rounds",
            "DIZHU_UNATTENDED_ROUNDS",
            "N",
            whole_or_zero(),
            "a whole number, at least 0",
            d.unattended_rounds,
            "rounds in a row played by the clock alone before a table is closed; 0: never",
        ),
        (
            "--memory-reserve",
            "DIZHU_MEMORY_RESERVE",
            "FRACTION",
            _fraction,
            "a fraction from 0 up to 1",
            d.memory_reserve,
            "fraction of Redis maxmemory kept for running tables: CreateTable is refused beyond the rest",
        ),
    ]
    for flag, env, metavar, convert, what, default, meaning in numbers:
        safety.add_argument(
            flag,
            metavar=metavar,
            type=_checked(convert, what, env),
            default=_env(env, default),
            help=f"{meaning} (env {env}; default: %(default)s)",
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


def _signing_keys(args: argparse.Namespace) -> tuple[bytes, bytes]:
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
        raise _usage_error(f"signing key: {error.filename}: {error.strerror or error}") from None
    try:
        SigningKeys.from_pem(key, retired) if key else SigningKeys.ephemeral()
    except (ValueError, TypeError) as error:
        raise _usage_error(f"--signing-key or --retired-signing-keys: not an Ed25519 key: {error}") from None
    return key, retired


def _add_tls_arguments(parser: argparse.ArgumentParser) -> None:
    tls = parser.add_argument_group("TLS (docs/security.md#tls)")
    tls.add_argument(
        "--tls-cert",
        metavar="FILE",
        type=Path,
        default=os.environ.get("DIZHU_TLS_CERT") or None,
        help="serve both ports over TLS with this certificate chain (PEM), read again when it changes; "
        "needs --tls-key (env DIZHU_TLS_CERT; default: none, plaintext)",
    )
    tls.add_argument(
        "--tls-key",
        metavar="FILE",
        type=Path,
        default=os.environ.get("DIZHU_TLS_KEY") or None,
        help="the private key (PEM) of --tls-cert (env DIZHU_TLS_KEY; default: none)",
    )


def _tls_files(args: argparse.Namespace) -> tuple[Path | None, Path | None]:
    cert, key = args.tls_cert, args.tls_key
    if (cert is None) != (key is None):
        raise _usage_error("--tls-cert and --tls-key go together (or $DIZHU_TLS_CERT and $DIZHU_TLS_KEY)")
    return cert, key


def _http_address(text: str) -> str:
    return _address(text) if text else text


def _add_browser_arguments(parser: argparse.ArgumentParser, d: ServerConfig) -> None:
    browsers = parser.add_argument_group("browsers and presence (docs/front-ends.md)")
    browsers.add_argument(
        "--http-address",
        metavar="HOST:PORT",
        type=_checked(_http_address, "a host:port address (port 0..65535), or empty", "DIZHU_HTTP_ADDRESS"),
        default=_env("DIZHU_HTTP_ADDRESS", d.http_address),
        help="where to serve browsers: gRPC-Web, Connect and the web table (env DIZHU_HTTP_ADDRESS; default: "
        "none, no HTTP port)",
    )
    browsers.add_argument(
        "--cors-origin",
        metavar="URL",
        action="append",
        default=None,
        help="an origin whose pages may call the HTTP port, or * for any; repeatable; given at all, the flags "
        "replace $DIZHU_CORS_ORIGINS (comma-separated) (default: none, same origin only)",
    )
    browsers.add_argument(
        "--web-bots",
        metavar="N",
        type=_checked(functools.partial(_at_least, 0, int)(), "a whole number, at least 0", "DIZHU_WEB_BOTS"),
        default=_env("DIZHU_WEB_BOTS", d.web_bots),
        help="bundled bots the web table may run in this process at once, 0 for none (env DIZHU_WEB_BOTS; "
        "default: %(default)s)",
    )
    above_zero = _at_least(0.001, float)
    for flag, env, default, what in (
        (
            "--http-header-timeout",
            "DIZHU_HTTP_HEADER_TIMEOUT_S",
            d.http_header_timeout_s,
            "a request's line and headers may take from their first byte on the HTTP port, else 408 and the "
            "connection closed",
        ),
        (
            "--http-body-timeout",
            "DIZHU_HTTP_BODY_TIMEOUT_S",
            d.http_body_timeout_s,
            "a request's body may take after its headers on the HTTP port, else 408 and the connection closed",
        ),
        (
            "--http-idle-timeout",
            "DIZHU_HTTP_IDLE_TIMEOUT_S",
            d.http_idle_timeout_s,
            "an HTTP connection may sit without a request (before its first, between two) before it is closed",
        ),
    ):
        browsers.add_argument(
            flag,
            metavar="SECONDS",
            type=_checked(above_zero, "a number of seconds above 0", env),
            default=_env(env, default),
            help=f"seconds {what} (env {env}; default: %(default)s)",
        )
    browsers.add_argument(
        "--http-max-connections",
        metavar="N",
        type=_checked(_at_least(1, int), "a whole number, at least 1", "DIZHU_HTTP_MAX_CONNECTIONS"),
        default=os.environ.get("DIZHU_HTTP_MAX_CONNECTIONS") or None,
        help="HTTP connections open at once; more are answered 503 and closed as they come, so that the gRPC port "
        "keeps file descriptors (env DIZHU_HTTP_MAX_CONNECTIONS; default: half the open-file limit)",
    )
    browsers.add_argument(
        "--presence-window",
        metavar="SECONDS",
        type=_checked(above_zero, "a number of seconds above 0", "DIZHU_PRESENCE_WINDOW_S"),
        default=_env("DIZHU_PRESENCE_WINDOW_S", d.presence_window_s),
        help="seconds a seat counts as connected after its last call (env DIZHU_PRESENCE_WINDOW_S; "
        "default: %(default)s)",
    )
    browsers.add_argument(
        "--presence-lease",
        metavar="SECONDS",
        type=_checked(above_zero, "a number of seconds above 0", "DIZHU_PRESENCE_LEASE_S"),
        default=_env("DIZHU_PRESENCE_LEASE_S", d.presence_lease_s),
        help="seconds an open stream keeps its seat connected after its process last renewed it "
        "(env DIZHU_PRESENCE_LEASE_S; default: %(default)s)",
    )


def config_from_args(args: argparse.Namespace) -> ServerConfig:
    if args.redis_cluster and (not args.redis_url or args.redis_url.startswith("unix:")):
        raise _usage_error(
            "--redis-cluster needs --redis-url (or REDIS_URL) naming a cluster node: redis:// or rediss://"
        )
    if args.redis_url and "," in args.redis_url and not args.redis_cluster:
        raise _usage_error("several nodes in --redis-url (or REDIS_URL) are a Redis Cluster's: add --redis-cluster")
    if args.durability == "replica" and not args.redis_url:
        raise _usage_error("--durability replica needs a Redis with replicas (--redis-url): the embedded one has none")
    http_port = args.http_address.rpartition(":")[2] if args.http_address else ""
    if http_port not in ("", "0") and http_port == args.address.rpartition(":")[2]:
        raise _usage_error(
            f"--http-address {args.http_address} takes the port of --address {args.address}: the HTTP side needs "
            "a port of its own"
        )
    api_keys = args.api_key if args.api_key is not None else os.environ.get("DIZHU_API_KEYS", "").split(",")
    cors_origins = args.cors_origin if args.cors_origin is not None else _env("DIZHU_CORS_ORIGINS", "").split(",")
    tls_cert, tls_key = _tls_files(args)
    signing_key, retired_signing_keys = _signing_keys(args)
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
        api_keys=tuple(key for key in api_keys if key),
        metrics_port=args.metrics_port,
        key_prefix=args.key_prefix,
        heartbeat_s=args.heartbeat,
        stream_backlog=args.stream_backlog,
        clock_interval_s=args.clock_interval,
        max_watched_tables=args.max_watched_tables,
        redis_wait_s=args.redis_wait,
        secrets=_secrets(args),
        signing_key=signing_key,
        retired_signing_keys=retired_signing_keys,
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
        http_address=args.http_address,
        cors_origins=tuple(origin for origin in cors_origins if origin),
        web_bots=args.web_bots,
        http_header_timeout_s=args.http_header_timeout,
        http_body_timeout_s=args.http_body_timeout,
        http_idle_timeout_s=args.http_idle_timeout,
        http_max_connections=args.http_max_connections,
        tls_cert=tls_cert,
        tls_key=tls_key,
        presence_window_s=args.presence_window,
        presence_lease_s=args.presence_lease,
        redis_cluster=args.redis_cluster,
        durability=args.durability,
        replica_timeout_s=args.replica_timeout,
        max_connection_age_s=args.max_connection_age,
    )
