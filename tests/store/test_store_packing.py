"""Commands packed by hiredis: the same bytes as redis-py's packer, and its refusals where it refuses."""

from __future__ import annotations

from typing import Any

import pytest
import redis.exceptions
from redis.asyncio.connection import Connection, UnixDomainSocketConnection

from dizhu.store.connection import connect
from dizhu.store.packing import hiredis_packing

#: Commands as the store sends them: names, keys, ints, text, bytes (a state, an answer).
_COMMANDS: list[tuple[Any, ...]] = [
    ("EVALSHA", "a" * 40, 2, "dizhu:{t:x}:state", "dizhu:{t:x}:answers", "0123456789abcdef"),
    ("EVALSHA", "b" * 40, 1, "k", 12, 13, b"\x00\xff" * 2000, 10_000, "", "0", b"", -1, 2**70),
    ("HMGET", "dizhu:{t:x}:state", "version", "data", "seq", "presence"),
    ("SET", "k", 1.5),
    ("SET", "k", 0.1),
    ("SET", "k", "\u98de\u673a"),  # non-ASCII text, UTF-8
    ("SET", "k", memoryview(b"abc")),
    ("SET", "k", bytearray(b"ab")),  # hiredis takes no bytearray: redis-py's packer does
    ("SCRIPT LOAD", "return 1"),  # several words in the first argument: redis-py splits them
    (b"SCRIPT LOAD", "return 1"),
]


def _packed(connection: Connection, command: tuple[Any, ...]) -> bytes:
    return b"".join(bytes(chunk) for chunk in connection.pack_command(*command))


class TestHiredisPacking:
    @pytest.mark.parametrize("command", _COMMANDS, ids=lambda command: str(command[0]))
    def test_the_bytes_are_redis_pys(self, command: tuple[Any, ...]) -> None:
        assert _packed(hiredis_packing(Connection)(), command) == _packed(Connection(), command)

    @pytest.mark.parametrize("value", [None, True, object()])
    def test_what_redis_py_refuses_is_refused_alike(self, value: object) -> None:
        with pytest.raises(redis.exceptions.DataError):
            hiredis_packing(Connection)().pack_command("SET", "k", value)

    def test_another_encoding_is_left_to_redis_py(self) -> None:
        command = ("SET", "k", "\u00e9")
        latin = hiredis_packing(Connection)(encoding="latin-1")
        expected = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\n\xe9\r\n"
        assert _packed(latin, command) == _packed(Connection(encoding="latin-1"), command) == expected

    def test_each_connection_class_is_wrapped_once(self) -> None:
        assert hiredis_packing(Connection) is hiredis_packing(Connection)
        assert hiredis_packing(hiredis_packing(Connection)) is hiredis_packing(Connection)
        unix = hiredis_packing(UnixDomainSocketConnection)
        assert issubclass(unix, UnixDomainSocketConnection)
        assert unix is not hiredis_packing(Connection)

    @pytest.mark.parametrize("waiting", [True, False])
    async def test_the_store_client_packs_with_hiredis_and_works(self, redis_url: str, waiting: bool) -> None:
        client = connect(redis_url, cluster=False, max_connections=4, wait_for_connection=waiting)
        try:
            assert client.connection_pool.connection_class is hiredis_packing(Connection)
            await client.set("packing-test", b"\x00\xff" * 3000)
            assert await client.get("packing-test") == b"\x00\xff" * 3000
            assert await client.script_load("return 1")  # "SCRIPT LOAD": redis-py's packer
        finally:
            await client.delete("packing-test")
            await client.aclose()
