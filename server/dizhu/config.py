"""Server configuration, from command-line flags with environment variables as defaults.

Every flag has an environment variable (``DIZHU_<FLAG>``, and the conventional ``REDIS_URL``);
a flag given on the command line wins (``--api-key`` flags replace ``DIZHU_API_KEYS``).
Environment values are checked like flags: a bad one is a clear usage error.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import math
import os
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["ServerConfig", "add_server_arguments", "config_from_args"]


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
    #: Seconds an external Redis that does not answer at start is retried (with backoff) before giving up.
    redis_wait_s: float = 30.0


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
    if urllib.parse.urlsplit(text).scheme not in _REDIS_SCHEMES:
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
        type=_checked(_redis_url, "a redis://, rediss:// or unix:// URL", "REDIS_URL"),
        default=os.environ.get("REDIS_URL"),
        help="an external Redis, e.g. redis://host:6379/0 (env REDIS_URL; default: none, an embedded "
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
        help="tables one process may stream at once, one Redis connection each (env DIZHU_MAX_WATCHED_TABLES; "
        "default: %(default)s)",
    )
    parser.add_argument(
        "--redis-wait",
        metavar="SECONDS",
        type=_checked(seconds(), "a number of seconds, at least 0", "DIZHU_REDIS_WAIT_S"),
        default=_env("DIZHU_REDIS_WAIT_S", d.redis_wait_s),
        help="seconds to keep trying an external Redis that does not answer at start, with backoff, "
        "before giving up (env DIZHU_REDIS_WAIT_S; default: %(default)s)",
    )


def config_from_args(args: argparse.Namespace) -> ServerConfig:
    api_keys = args.api_key if args.api_key is not None else os.environ.get("DIZHU_API_KEYS", "").split(",")
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
        clock_interval_s=args.clock_interval,
        max_watched_tables=args.max_watched_tables,
        redis_wait_s=args.redis_wait,
    )
