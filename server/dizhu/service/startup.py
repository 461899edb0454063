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
from redis.asyncio import Redis
from redis.exceptions import AuthenticationError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = ["StartupError", "bind", "redacted", "start_metrics", "wait_for_redis"]

_log = structlog.get_logger("dizhu.server")
_FIRST_RETRY_S = 0.1
_MAX_RETRY_S = 5.0


class StartupError(Exception):
    """The referee cannot start; the message says why and what to change."""


def bind(server: grpc.aio.Server, address: str) -> int:
    """Listen on ``address``; the port bound."""
    try:
        port = server.add_insecure_port(address)
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
    """``url`` without its password, for messages and logs."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


async def wait_for_redis(redis: Redis, url: str, within_s: float) -> None:
    """Return once ``redis`` answers PING, retrying with backoff for up to ``within_s`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    delay = _FIRST_RETRY_S
    while True:
        try:
            await asyncio.wait_for(redis.ping(), max(deadline - loop.time(), _FIRST_RETRY_S))
        except AuthenticationError as error:
            raise StartupError(f"Redis at {redacted(url)} refused the credentials: {error}") from None
        except (RedisConnectionError, RedisTimeoutError, OSError) as error:  # OSError: TimeoutError too
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
            return
