"""Server configuration, from command-line flags with environment variables as defaults.

Every flag has an environment variable (``DIZHU_<FLAG>``, and the conventional ``REDIS_URL``);
a flag given on the command line wins.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from pathlib import Path

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
    #: Where to serve browsers, ``host:port`` (gRPC-Web, Connect, the web table); empty: no HTTP.
    http_address: str = ""
    #: Origins whose pages may call the HTTP port (CORS); ``*`` for any; empty: same origin only.
    cors_origins: tuple[str, ...] = ()
    #: Bundled bots the web table may start in this process at once (0: none).
    web_bots: int = 32
    #: Seconds a seat counts as connected after its last call made with its token.
    presence_window_s: float = 30.0
    #: Seconds a seat's open stream keeps it connected after its process last renewed it.
    presence_lease_s: float = 15.0


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
    parser.add_argument(
        "--http-address",
        default=_env("DIZHU_HTTP_ADDRESS", d.http_address),
        help="host:port to serve browsers on: gRPC-Web, Connect and the web table (default: off)",
    )
    parser.add_argument(
        "--cors-origin",
        action="append",
        default=[origin for origin in _env("DIZHU_CORS_ORIGINS", "").split(",") if origin],
        help="an origin whose pages may call the HTTP port, or * for any; repeatable "
        "(env DIZHU_CORS_ORIGINS, comma-separated; default: same origin only)",
    )
    parser.add_argument(
        "--web-bots",
        type=int,
        default=int(_env("DIZHU_WEB_BOTS", str(d.web_bots))),
        help="bundled bots the web table may run in this process at once (0: none)",
    )
    parser.add_argument(
        "--presence-window",
        type=float,
        default=float(_env("DIZHU_PRESENCE_WINDOW_S", str(d.presence_window_s))),
        help="seconds a seat counts as connected after its last call",
    )
    parser.add_argument(
        "--presence-lease",
        type=float,
        default=float(_env("DIZHU_PRESENCE_LEASE_S", str(d.presence_lease_s))),
        help="seconds an open stream keeps its seat connected after its process last renewed it",
    )


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
        http_address=args.http_address,
        cors_origins=tuple(args.cors_origin),
        web_bots=args.web_bots,
        presence_window_s=args.presence_window,
        presence_lease_s=args.presence_lease,
    )
