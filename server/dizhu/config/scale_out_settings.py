"""The scale-out settings (docs/scaling.md): a Redis Cluster, how durable an acknowledged change is, connection age."""

from __future__ import annotations

import argparse
import dataclasses
from typing import ClassVar

from dizhu.config.declaration import SettingsGroup, setting
from dizhu.config.flag_values import SECONDS, Values, at_least, usage_error

__all__ = ["ScaleOutSettings"]


@dataclasses.dataclass(frozen=True)
class ScaleOutSettings(SettingsGroup):
    """How referees share one Redis (docs/scaling.md, docs/store.md)."""

    TITLE: ClassVar[str | None] = "scale-out (docs/scaling.md)"
    DOCS_HEADING: ClassVar[str] = "Scale-out ([scaling.md](scaling.md), [store.md](store.md))"

    #: ``redis_url`` names a node of a Redis Cluster, or several, comma-separated (the client finds the others).
    redis_cluster: bool = setting(
        False,
        "--redis-url names a node of a Redis Cluster (redis:// or rediss://)",
        form="switch",
        default_text="off, one Redis server",
        docs="; or several, comma-separated ([store.md](store.md#redis-cluster), "
        "[scaling.md](scaling.md#what-the-referees-sharing-tables-must-share))",
    )
    #: When a change is acknowledged: once on the primary (``primary``), or on a replica too (``replica``).
    durability: str = setting(
        "primary",
        "acknowledge a change once Redis's primary has it, or only once a replica has it too (WAIT): "
        "then a failover loses no acknowledged move",
        choices=("primary", "replica"),
        docs="([store.md](store.md#durability))",
    )
    replica_timeout_s: float = setting(
        1.0,
        "with --durability replica, how long a change waits for a replica before the call fails "
        "UNAVAILABLE, to be retried",
        values=SECONDS,
    )
    #: The kernel and load balancers spread connections, not calls.
    max_connection_age_s: float = setting(
        300.0,
        "seconds after which a client's connection is closed gracefully, so that clients reconnect and "
        "spread over new processes",
        values=Values("SECONDS", at_least(1, float), "a number of seconds, at least 1"),
    )

    @staticmethod
    def check_arguments(args: argparse.Namespace) -> None:
        """A usage error (SystemExit(2)) for a cluster or a durability that the Redis named cannot give."""
        if args.redis_cluster and (not args.redis_url or args.redis_url.startswith("unix:")):
            raise usage_error(
                "--redis-cluster needs --redis-url (or REDIS_URL) naming a cluster node: redis:// or rediss://"
            )
        if args.redis_url and "," in args.redis_url and not args.redis_cluster:
            raise usage_error("several nodes in --redis-url (or REDIS_URL) are a Redis Cluster's: add --redis-cluster")
        if args.durability == "replica" and not args.redis_url:
            raise usage_error(
                "--durability replica needs a Redis with replicas (--redis-url): the embedded one has none"
            )
