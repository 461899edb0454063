"""Two referees on one Redis, the first to be stopped mid-test: what a failover test stands on."""

from __future__ import annotations

import contextlib
import uuid

from dizhu.testing import local_referee


async def two_referees(stack: contextlib.AsyncExitStack, redis_url: str) -> tuple[str, contextlib.AsyncExitStack]:
    """A target naming both (pick_first: the first while it is up) and the stack that stops the first.

    The second lives as long as ``stack``; closing the returned stack ends the first's streams
    (after a 0.2 s grace) and closes its port."""
    prefix = f"failover-{uuid.uuid4().hex[:8]}"
    second = await stack.enter_async_context(local_referee(redis_url=redis_url, key_prefix=prefix, log_level=None))
    first_referee = contextlib.AsyncExitStack()
    first = await first_referee.enter_async_context(
        local_referee(redis_url=redis_url, key_prefix=prefix, log_level=None, grace_s=0.2)
    )
    return "ipv4:" + ",".join((first, second)), first_referee
