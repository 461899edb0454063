"""The process's own settings: where it listens, its store, logs, workers, streams and turn clock."""

from __future__ import annotations

import argparse
import dataclasses
import ipaddress
from pathlib import Path
from typing import ClassVar

from dizhu.config.declaration import SettingsGroup, setting
from dizhu.config.flag_values import (
    COUNT,
    DIR,
    HOST_PORT,
    PORT,
    SECONDS,
    SECONDS_OR_NONE,
    WHOLE_SECONDS,
    Values,
    usage_error,
)

__all__ = ["REDIS_URL_EXPECTED", "ProcessSettings", "is_redis_url", "listens_on_loopback"]

#: The URL forms redis-py connects to, "//" included: from redis-py 8.2 on, ``unix:/path`` is refused.
_REDIS_URL_PREFIXES = ("redis://", "rediss://", "unix://")
#: What a refused Redis URL is told it should be.
REDIS_URL_EXPECTED = "a redis://, rediss:// or unix:// URL"
_LOG_LEVELS = ("debug", "info", "warning", "error", "critical")


def is_redis_url(url: str) -> bool:
    """Whether redis-py takes ``url`` (its scheme only: a URL naming no server fails on connecting)."""
    return url.lower().startswith(_REDIS_URL_PREFIXES)


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


_URL = Values("URL", _redis_url, f"{REDIS_URL_EXPECTED} (a cluster: nodes, comma-separated)")
_PREFIX = Values("PREFIX", _key_prefix, "a key prefix of 1..64 characters of [A-Za-z0-9._:-]")
_PATH = Values("PATH", Path, "a path")


@dataclasses.dataclass(frozen=True)
class ProcessSettings(SettingsGroup):
    """The flags ``dizhu serve --help`` lists first."""

    DOCS_HEADING: ClassVar[str] = "The process: where it listens, its store, logs, workers, streams and turn clock"

    address: str = setting("127.0.0.1:50051", "where to listen; port 0 picks a free one", values=HOST_PORT)
    #: How a confined tournament entrant, which has no network, reaches the referee
    #: (docs/tournaments.md, "Confinement").
    unix_socket: Path | None = setting(
        None,
        "a unix socket to listen on as well, e.g. for confined tournament entrants (one process: not with --workers)",
        values=_PATH,
        default_text="none",
        docs="([tournaments.md](tournaments.md#confinement))",
    )
    redis_url: str | None = setting(
        None,
        "an external Redis, e.g. redis://host:6379/0; with --redis-cluster, seed nodes, comma-separated, "
        "e.g. redis://node-0:6379,node-1:6379,node-2:6379",
        values=_URL,
        env="REDIS_URL",
        default_text="none, an embedded redis-server keeping its data in --data-dir",
        # An empty REDIS_URL is a usage error, not an embedded Redis.
        empty_env_is_unset=False,
    )
    data_dir: Path = setting(
        Path("var/redis"), "the embedded Redis's data directory, locked against a second referee", values=DIR
    )
    log_format: str = setting("json", "json lines, or console for people", choices=("json", "console"))
    log_level: str = setting("info", "the least severe level logged", choices=_LOG_LEVELS, normalise=str.lower)
    workers: int = setting(
        1, "processes sharing the port", values=COUNT, docs="(`SO_REUSEPORT`; spawned, never forked)"
    )
    grace_s: float = setting(10.0, "seconds in-flight calls get to finish on SIGTERM", values=SECONDS_OR_NONE)
    finished_ttl_s: int = setting(
        7 * 24 * 3600,
        "seconds a closed table (state, events, replays) is kept",
        values=WHOLE_SECONDS,
        default_text="%(default)s, 7 days",
    )
    answer_ttl_s: int = setting(
        24 * 3600,
        "seconds a request id's answer is kept for retries",
        values=WHOLE_SECONDS,
        default_text="%(default)s, 1 day",
    )
    events_maxlen: int = setting(10_000, "events kept per table; a client further behind gets a snapshot", values=COUNT)
    api_keys: tuple[str, ...] = setting(
        (),
        "require this key (x-api-key metadata) for CreateTable",
        values=Values("KEY", str, "a key"),
        form="list",
        flag="--api-key",
        default_text="none, anyone may create tables",
    )
    metrics_port: int = setting(
        0, "port of the Prometheus /metrics endpoint, 0 for none; worker n uses port + n", values=PORT
    )
    key_prefix: str = setting("dizhu", "prefix of every Redis key", values=_PREFIX)
    heartbeat_s: float = setting(20.0, "idle seconds after which an event stream carries a heartbeat", values=SECONDS)
    stream_backlog: int = setting(
        1000,
        "events a stream may have waiting to be sent; one given more starts again from a snapshot",
        values=COUNT,
    )
    clock_interval_s: float = setting(
        0.1, "seconds between the turn clock's looks for deadlines that passed", values=SECONDS
    )
    #: All are followed on one Redis connection.
    max_watched_tables: int = setting(10_000, "tables one process may stream at once", values=COUNT)
    #: Every per-table memory of a process follows it (docs/scaling.md, "Every bound of a referee process").
    cached_tables: int = setting(
        4096,
        "tables one process keeps decoded, with their seats' presence refreshes and activity marks, and half "
        "as many running deals' encoded lists and view digests; the least recently used beyond it are read "
        "again from Redis; dizhu serve's caches keyed by values (deals, actions, events, views' entries) are "
        "bounded by it too",
        values=COUNT,
    )
    redis_wait_s: float = setting(
        30.0,
        "seconds to keep trying an external Redis that does not answer at start, with backoff, before giving up",
        values=SECONDS_OR_NONE,
    )

    @staticmethod
    def check_arguments(args: argparse.Namespace) -> None:
        if args.unix_socket is not None and args.workers > 1:
            raise usage_error("--unix-socket serves one process: it cannot be shared by --workers")
