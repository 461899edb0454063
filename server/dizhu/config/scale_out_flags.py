"""The scale-out flags (docs/scaling.md): a Redis Cluster, how durable an acknowledged change is, connection age."""

from __future__ import annotations

import argparse

from dizhu.config.flag_values import add_env_flag, add_env_switch, at_least, usage_error
from dizhu.config.settings import ServerConfig

__all__ = ["add_scale_out_arguments", "check_scale_out_arguments"]


def add_scale_out_arguments(parser: argparse.ArgumentParser, d: ServerConfig) -> None:
    scale = parser.add_argument_group("scale-out (docs/scaling.md)")
    add_env_switch(
        scale,
        "--redis-cluster",
        "DIZHU_REDIS_CLUSTER",
        help="--redis-url names a node of a Redis Cluster (redis:// or rediss://)",
        default_text="off, one Redis server",
    )
    add_env_flag(
        scale,
        "--durability",
        "DIZHU_DURABILITY",
        choices=("primary", "replica"),
        default=d.durability,
        help="acknowledge a change once Redis's primary has it, or only once a replica has it too (WAIT): "
        "then a failover loses no acknowledged move",
    )
    add_env_flag(
        scale,
        "--replica-timeout",
        "DIZHU_REPLICA_TIMEOUT_S",
        metavar="SECONDS",
        convert=at_least(0.001, float),
        expected="a number of seconds above 0",
        default=d.replica_timeout_s,
        help="with --durability replica, how long a change waits for a replica before the call fails "
        "UNAVAILABLE, to be retried",
    )
    add_env_flag(
        scale,
        "--max-connection-age",
        "DIZHU_MAX_CONNECTION_AGE_S",
        metavar="SECONDS",
        convert=at_least(1, float),
        expected="a number of seconds, at least 1",
        default=d.max_connection_age_s,
        help="seconds after which a client's connection is closed gracefully, so that clients reconnect and "
        "spread over new processes",
    )


def check_scale_out_arguments(args: argparse.Namespace) -> None:
    """A usage error (SystemExit(2)) for a cluster or a durability that the Redis named cannot give."""
    if args.redis_cluster and (not args.redis_url or args.redis_url.startswith("unix:")):
        raise usage_error(
            "--redis-cluster needs --redis-url (or REDIS_URL) naming a cluster node: redis:// or rediss://"
        )
    if args.redis_url and "," in args.redis_url and not args.redis_cluster:
        raise usage_error("several nodes in --redis-url (or REDIS_URL) are a Redis Cluster's: add --redis-cluster")
    if args.durability == "replica" and not args.redis_url:
        raise usage_error("--durability replica needs a Redis with replicas (--redis-url): the embedded one has none")
