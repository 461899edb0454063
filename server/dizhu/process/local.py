"""A referee on this machine's loopback, in this event loop, with a throw-away embedded Redis."""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

from dizhu.config import ServerConfig
from dizhu.process.assembly import running_referee

__all__ = ["local_referee"]


@contextlib.asynccontextmanager
async def local_referee(
    *,
    redis_url: str | None = None,
    api_keys: tuple[str, ...] = (),
    log_level: str | None = "warning",
    grace_s: float = 1.0,
    port: int = 0,
    key_prefix: str | None = None,
    heartbeat_s: float | None = None,
) -> AsyncIterator[str]:
    """A referee on ``127.0.0.1:<port>`` for the duration of the block; yields its target.

    ``redis_url``: an existing Redis to use (default: an embedded one, in a temporary
    directory, without persistence beyond the block). ``api_keys``: keys ``CreateTable``
    will require. ``log_level``: configure structlog (console format, on stderr) at this
    level; None leaves logging as it is. ``grace_s``: how long calls in flight (streams
    included) may go on once the block ends. ``port``: where to listen (0: a free port).
    ``key_prefix``: the Redis key prefix (default: ``"dizhu"`` with the embedded Redis, a
    fresh one with ``redis_url``); give two referees on one Redis the same prefix to make
    them serve the same tables. ``heartbeat_s``: the idle time after which an event stream
    carries a heartbeat (default: the server's).
    """
    if log_level is not None:
        from dizhu.logs import configure_logging

        configure_logging("console", log_level)
    with tempfile.TemporaryDirectory(prefix="dizhu-referee-") as data_dir:
        if key_prefix is None:
            key_prefix = "dizhu" if redis_url is None else f"dizhu-test-{uuid.uuid4().hex[:8]}"
        config = ServerConfig(
            address=f"127.0.0.1:{port}",
            redis_url=redis_url,
            data_dir=Path(data_dir),
            api_keys=api_keys,
            grace_s=grace_s,
            key_prefix=key_prefix,
        )
        if heartbeat_s is not None:
            config = dataclasses.replace(config, heartbeat_s=heartbeat_s)
        async with running_referee(config) as referee:
            yield f"127.0.0.1:{referee.port}"
