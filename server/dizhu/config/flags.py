"""``dizhu serve``'s flags, with environment variables as defaults, read into a :class:`ServerConfig`.

Every flag has an environment variable (``DIZHU_<FLAG>``, and the conventional ``REDIS_URL``);
a flag given on the command line wins (``--api-key`` flags replace ``DIZHU_API_KEYS``).
Environment values are checked like flags: a bad one is a clear usage error. The server
secret has a file flag and an environment variable, never a flag of its own (command lines
are visible to every user of the machine). The safety settings and their defaults are
explained in docs/security.md.

The process's own flags are here (where it listens, its store, logs, workers, streams and
turn clock); each group of ``--help`` has a module of its own, added after them in this
order: :mod:`~dizhu.config.safety_flags`, :mod:`~dizhu.config.tls_flags`,
:mod:`~dizhu.config.browser_flags` and :mod:`~dizhu.config.scale_out_flags`, each with the
checks of its own combinations. How a value is checked: :mod:`~dizhu.config.flag_values`.
"""

from __future__ import annotations

import argparse
import functools
import os
from pathlib import Path

from dizhu.config.browser_flags import add_browser_arguments, check_browser_arguments
from dizhu.config.flag_values import add_env_flag, at_least, checked, from_env, host_port, port_number, usage_error
from dizhu.config.safety_flags import add_safety_arguments, secrets, signing_keys
from dizhu.config.scale_out_flags import add_scale_out_arguments, check_scale_out_arguments
from dizhu.config.settings import REDIS_URL_EXPECTED, ServerConfig, is_redis_url
from dizhu.config.tls_flags import add_tls_arguments, tls_files

__all__ = ["add_server_arguments", "config_from_args"]


def _redis_url(text: str) -> str:
    """One URL, or a cluster's seed nodes: a URL, then further URLs or ``host:port``, comma-separated."""
    from dizhu.store.connection import seed_nodes

    first, _ = seed_nodes(text)
    if not is_redis_url(first):
        raise ValueError(text)
    return text


def _key_prefix(text: str) -> str:
    from dizhu.store.keys import validate_prefix

    return validate_prefix(text)


_LOG_LEVELS = ("debug", "info", "warning", "error", "critical")


def add_server_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``serve`` flags; each one's environment variable gives its default."""
    d = ServerConfig()
    flag = functools.partial(add_env_flag, parser)
    count = functools.partial(flag, metavar="N", convert=at_least(1, int), expected="a whole number of at least 1")
    ttl = functools.partial(
        flag, metavar="SECONDS", convert=at_least(1, int), expected="a whole number of seconds, at least 1"
    )
    wait = functools.partial(
        flag, metavar="SECONDS", convert=at_least(0, float), expected="a number of seconds, at least 0"
    )
    interval = functools.partial(
        flag, metavar="SECONDS", convert=at_least(0.001, float), expected="a number of seconds above 0"
    )
    flag(
        "--address",
        "DIZHU_ADDRESS",
        metavar="HOST:PORT",
        convert=host_port,
        expected="a host:port address (port 0..65535)",
        default=d.address,
        help="where to listen; port 0 picks a free one",
    )
    parser.add_argument(
        "--unix-socket",
        metavar="PATH",
        type=Path,
        default=os.environ.get("DIZHU_UNIX_SOCKET") or None,
        help="a unix socket to listen on as well, e.g. for confined tournament entrants (one process: not with "
        "--workers; env DIZHU_UNIX_SOCKET)",
    )
    parser.add_argument(
        "--redis-url",
        metavar="URL",
        type=checked(_redis_url, f"{REDIS_URL_EXPECTED} (a cluster: nodes, comma-separated)", "REDIS_URL"),
        # Written out: an empty REDIS_URL is a usage error here, where add_env_flag would read it as unset.
        default=os.environ.get("REDIS_URL"),
        help="an external Redis, e.g. redis://host:6379/0; with --redis-cluster, seed nodes, comma-separated, "
        "e.g. redis://node-0:6379,node-1:6379,node-2:6379 (env REDIS_URL; default: none, an embedded "
        "redis-server keeping its data in --data-dir)",
    )
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        type=Path,
        default=Path(from_env("DIZHU_DATA_DIR", d.data_dir)),
        help="the embedded Redis's data directory, locked against a second referee (env DIZHU_DATA_DIR; "
        "default: %(default)s)",
    )
    flag(
        "--log-format",
        "DIZHU_LOG_FORMAT",
        choices=["json", "console"],
        default=d.log_format,
        help="json lines, or console for people",
    )
    flag(
        "--log-level",
        "DIZHU_LOG_LEVEL",
        type=str.lower,
        choices=_LOG_LEVELS,
        default=d.log_level,
        help="the least severe level logged",
    )
    count("--workers", "DIZHU_WORKERS", default=d.workers, help="processes sharing the port")
    wait("--grace", "DIZHU_GRACE_S", default=d.grace_s, help="seconds in-flight calls get to finish on SIGTERM")
    ttl(
        "--finished-ttl",
        "DIZHU_FINISHED_TTL_S",
        default=d.finished_ttl_s,
        help="seconds a closed table (state, events, replays) is kept",
        default_text="%(default)s, 7 days",
    )
    ttl(
        "--answer-ttl",
        "DIZHU_ANSWER_TTL_S",
        default=d.answer_ttl_s,
        help="seconds a request id's answer is kept for retries",
        default_text="%(default)s, 1 day",
    )
    count(
        "--events-maxlen",
        "DIZHU_EVENTS_MAXLEN",
        default=d.events_maxlen,
        help="events kept per table; a client further behind gets a snapshot",
    )
    parser.add_argument(
        "--api-key",
        metavar="KEY",
        action="append",
        default=None,
        help="require this key (x-api-key metadata) for CreateTable; repeatable; given at all, the flags "
        "replace $DIZHU_API_KEYS (comma-separated) (default: none, anyone may create tables)",
    )
    flag(
        "--metrics-port",
        "DIZHU_METRICS_PORT",
        metavar="PORT",
        convert=port_number,
        expected="a port number 0..65535",
        default=d.metrics_port,
        help="port of the Prometheus /metrics endpoint, 0 for none; worker n uses port + n",
    )
    flag(
        "--key-prefix",
        "DIZHU_KEY_PREFIX",
        metavar="PREFIX",
        convert=_key_prefix,
        expected="a key prefix of 1..64 characters of [A-Za-z0-9._:-]",
        default=d.key_prefix,
        help="prefix of every Redis key",
    )
    interval(
        "--heartbeat",
        "DIZHU_HEARTBEAT_S",
        default=d.heartbeat_s,
        help="idle seconds after which an event stream carries a heartbeat",
    )
    count(
        "--stream-backlog",
        "DIZHU_STREAM_BACKLOG",
        default=d.stream_backlog,
        help="events a stream may have waiting to be sent; one given more starts again from a snapshot",
    )
    interval(
        "--clock-interval",
        "DIZHU_CLOCK_INTERVAL_S",
        default=d.clock_interval_s,
        help="seconds between the turn clock's looks for deadlines that passed",
    )
    count(
        "--max-watched-tables",
        "DIZHU_MAX_WATCHED_TABLES",
        default=d.max_watched_tables,
        help="tables one process may stream at once",
    )
    wait(
        "--redis-wait",
        "DIZHU_REDIS_WAIT_S",
        default=d.redis_wait_s,
        help="seconds to keep trying an external Redis that does not answer at start, with backoff, before giving up",
    )
    add_safety_arguments(parser, d)
    add_tls_arguments(parser)
    add_browser_arguments(parser, d)
    add_scale_out_arguments(parser, d)


def config_from_args(args: argparse.Namespace) -> ServerConfig:
    """The settings the flags (and their environment variables) say; SystemExit(2) for a bad combination."""
    check_scale_out_arguments(args)
    if args.unix_socket is not None and args.workers > 1:
        raise usage_error("--unix-socket serves one process: it cannot be shared by --workers")
    check_browser_arguments(args)
    api_keys = args.api_key if args.api_key is not None else os.environ.get("DIZHU_API_KEYS", "").split(",")
    cors_origins = args.cors_origin if args.cors_origin is not None else from_env("DIZHU_CORS_ORIGINS", "").split(",")
    tls_cert, tls_key = tls_files(args)
    signing_key, retired_signing_keys = signing_keys(args)
    return ServerConfig(
        address=args.address,
        unix_socket=None if args.unix_socket is None else Path(args.unix_socket),
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
        secrets=secrets(args),
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
