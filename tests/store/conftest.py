"""Fixtures of the store tests: a :class:`TableStore` factory over the flushed ``redis_client``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import redis.asyncio

from dizhu.store import TableStore
from tests.support.redis_servers import redis_of_each_version

StoreFactory = Callable[..., TableStore]


@pytest.fixture
def make_store(redis_client: redis.asyncio.Redis) -> StoreFactory:
    """``make_store(**options)``: a TableStore over the test's client with those options."""

    def make(**options: Any) -> TableStore:
        return TableStore(redis_client, **options)

    return make


@pytest.fixture
def store(make_store: StoreFactory) -> TableStore:
    """A TableStore with the default options."""
    return make_store()


@pytest.fixture
async def second_client(redis_url: str) -> AsyncIterator[redis.asyncio.Redis]:
    """Another client with its own connections, as a second referee process would have."""
    client = redis.asyncio.Redis.from_url(redis_url)
    yield client
    await client.aclose()


#: Every store test runs against each supported Redis version.
redis_url = redis_of_each_version()
