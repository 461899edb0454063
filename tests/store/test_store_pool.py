"""The calls' connection pool: a call finding every connection in use waits for one (never fails at once)."""

from __future__ import annotations

import asyncio

import pytest
import redis.exceptions
from redis.asyncio import Redis

from dizhu.store.pool import WaitingConnectionPool


class TestWaitingConnectionPool:
    async def test_a_call_waits_for_a_connection_released_meanwhile(self, redis_url: str) -> None:
        client = Redis.from_pool(WaitingConnectionPool.from_url(redis_url, max_connections=1, timeout=10))
        try:
            held = await client.connection_pool.get_connection()
            waiting = asyncio.ensure_future(client.ping())
            await asyncio.sleep(0.2)
            assert not waiting.done()
            await client.connection_pool.release(held)
            assert await asyncio.wait_for(waiting, 10) is True
        finally:
            await client.aclose()

    async def test_a_call_gives_up_after_the_timeout(self, redis_url: str) -> None:
        client = Redis.from_pool(WaitingConnectionPool.from_url(redis_url, max_connections=1, timeout=0.2))
        try:
            held = await client.connection_pool.get_connection()
            with pytest.raises(redis.exceptions.ConnectionError, match="No connection available"):
                await client.ping()
            await client.connection_pool.release(held)
            assert await client.ping() is True
        finally:
            await client.aclose()

    async def test_many_calls_share_few_connections(self, redis_url: str) -> None:
        client = Redis.from_pool(WaitingConnectionPool.from_url(redis_url, max_connections=2, timeout=10))
        try:
            counts = await asyncio.gather(*(client.incr("pool-test-counter") for _ in range(50)))
            assert sorted(counts) == list(range(1, 51))
            assert int(await client.get("pool-test-counter") or 0) == 50
            assert len(client.connection_pool._in_use_connections) == 0
        finally:
            await client.delete("pool-test-counter")
            await client.aclose()
