"""Fixtures of the safety tests: referees with their own limits over the real test Redis.

``servers`` starts in-process referees (port 0), each with its own ``ServerConfig`` and
``TableStore`` options, and stops them at the end of the test. Nothing is mocked.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import redis.asyncio

from tests.support.safety import Servers


@pytest.fixture
async def servers(redis_url: str, redis_client: redis.asyncio.Redis) -> AsyncIterator[Servers]:
    """A factory of started referees over the test's flushed Redis, all stopped afterwards."""
    started = Servers(redis_url, redis_client)
    try:
        yield started
    finally:
        await started.aclose()
