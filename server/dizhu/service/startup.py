"""Starting a referee: each fault the person starting it can fix becomes one clear message.

A malformed or taken address, a taken metrics port, an external Redis that does not answer
(retried with backoff first: it may be starting too) raise :class:`StartupError`, whose
message says what to change; ``dizhu serve`` prints it without a traceback.
"""

from __future__ import annotations

import asyncio
import urllib.parse

import grpc
import prometheus_client
import structlog
from redis.exceptions import AuthenticationError, RedisClusterException

from dizhu.store.connection import StoreClient, is_cluster, is_unavailable

__all__ = ["StartupError", "bind", "redacted", "start_metrics", "wait_for_redis"]

_log = structlog.get_logger("dizhu.server")
_FIRST_RETRY_S = 0.1
_MAX_RETRY_S = 5.0


class StartupError(Exception):
    """The referee cannot start; the message says why and what to change."""


def bind(server: grpc.aio.Server, address: str, credentials: grpc.ServerCredentials | None = None) -> int:
    """Listen on ``address`` (over TLS with ``credentials``); the port bound."""
    try:
        if credentials is None:
            port = server.add_insecure_port(address)
        else:
            port = server.add_secure_port(address, credentials)
    except RuntimeError:
        port = 0
    if port == 0:
        raise StartupError(f"cannot listen on {address}: the address is taken, or not one of this machine")
    return port


def start_metrics(port: int) -> None:
    """Serve Prometheus ``/metrics`` on ``port``."""
    try:
        prometheus_client.start_http_server(port)
    except OSError as error:
        raise StartupError(f"cannot serve metrics on port {port}: {error.strerror or error}") from None


def redacted(url: str) -> str:
    """``url`` (or comma-separated URLs) without its password, for messages and logs."""
    if "," in url:
        return ",".join(redacted(item) for item in url.split(","))
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


async def wait_for_redis(redis: StoreClient, url: str, within_s: float) -> None:
    """Return once ``redis`` answers PING, retrying with backoff for up to ``within_s`` seconds.

    A client of one server pointed at a node of a Redis Cluster, or a cluster client pointed at
    a server that is not one, is a :class:`StartupError` saying which flag to change.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    delay = _FIRST_RETRY_S
    while True:
        try:
            await asyncio.wait_for(redis.ping(), max(deadline - loop.time(), _FIRST_RETRY_S))
        except AuthenticationError as error:
            raise StartupError(f"Redis at {redacted(url)} refused the credentials: {error}") from None
        except Exception as error:
            if isinstance(error, RedisClusterException) and not is_unavailable(error):
                raise StartupError(
                    f"Redis at {redacted(url)} cannot serve as a Redis Cluster ({error}): is --redis-cluster meant?"
                ) from None
            if not is_unavailable(error):  # OSError, and so TimeoutError, is unavailable too
                raise
            left = deadline - loop.time()
            if left <= 0:
                raise StartupError(
                    f"Redis at {redacted(url)} did not answer within {within_s:g} s ({error or type(error).__name__}); "
                    "check --redis-url / REDIS_URL, or allow more time with --redis-wait"
                ) from None
            _log.warning("redis_unreachable", url=redacted(url), retry_in_s=round(min(delay, left), 3))
            await asyncio.sleep(min(delay, left))
            delay = min(delay * 2, _MAX_RETRY_S)
        else:
            break
    if not is_cluster(redis) and int((await redis.info("cluster")).get("cluster_enabled", 0)):
        raise StartupError(f"Redis at {redacted(url)} is a node of a Redis Cluster: start with --redis-cluster")
