"""Under pytest-xdist, no two workers share a Redis database, whatever ``$REDIS_URL`` names."""

from __future__ import annotations

import pytest
import redis.asyncio

from tests.support.redis_servers import with_worker_db


def _database(url: str) -> int:
    client = redis.asyncio.Redis.from_url(url)
    database: int = client.connection_pool.connection_kwargs.get("db", 0)
    return database


@pytest.mark.parametrize(
    ("url", "databases"),
    [
        ("redis://h:1", (0, 1, 2)),
        ("redis://h:1/0", (0, 1, 2)),
        ("redis://h:1/5", (5, 6, 7)),
        ("redis://h:1?db=3", (3, 4, 5)),
        ("rediss://user:pw@h:1/2?socket_timeout=5", (2, 3, 4)),
        ("unix:///tmp/redis.sock?db=4", (4, 5, 6)),
    ],
)
def test_each_worker_gets_the_named_database_plus_its_number(
    monkeypatch: pytest.MonkeyPatch, url: str, databases: tuple[int, ...]
) -> None:
    seen = []
    for worker in range(3):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", f"gw{worker}")
        seen.append(_database(with_worker_db(url)))
    assert tuple(seen) == databases


def test_without_xdist_the_url_is_used_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    assert with_worker_db("redis://h:1/7") == "redis://h:1/7"


def test_the_other_options_of_the_url_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    moved = redis.asyncio.Redis.from_url(with_worker_db("rediss://user:pw@h:1/2?socket_timeout=5"))
    assert moved.connection_pool.connection_kwargs["socket_timeout"] == 5
    assert moved.connection_pool.connection_kwargs["password"] == "pw"


async def test_a_worker_flushing_its_database_leaves_the_others_alone(
    monkeypatch: pytest.MonkeyPatch, redis_url: str
) -> None:
    base = redis_url.rsplit("/", 1)[0] + "/3"  # as a REDIS_URL naming database 3 would
    urls = []
    for worker in ("gw0", "gw1"):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
        urls.append(with_worker_db(base))
    first, second = (redis.asyncio.Redis.from_url(url) for url in urls)
    try:
        await first.set("kept", "yes")
        await second.flushdb()
        assert await first.get("kept") == b"yes"
    finally:
        await first.flushdb()
        await first.aclose()
        await second.aclose()
