"""Fixtures of the live-table tests: real referees (port 0) over the real test Redis.

``referees`` starts any number of in-process referees, each with its own ``ServerConfig``
(short heartbeats, a fast turn clock, a small event log) and, on request, its own Redis
connection and ``TableStore``, as a separate referee process would have. Every referee and
channel is stopped at the end of the test. Nothing is mocked.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import redis.asyncio

from tests.support.live import Referees


@pytest.fixture
async def referees(store_url: str, store_kind: str, redis_client: redis.asyncio.Redis) -> AsyncIterator[Referees]:
    """A factory of started referees over the test's flushed store, all stopped afterwards."""
    started = Referees(store_url, redis_client, store_kind)
    try:
        yield started
    finally:
        await started.aclose()
