"""The HTTP port closes idle and slow connections and holds a bounded number, over raw sockets.

Each referee here runs with timeouts of half a second, so that a connection the port should
close is closed long before the tests' hang guard (``SOON_S``); the tests assert that it
closes, and what it answered, never how soon.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import AsyncIterator

import pytest

from dizhu.v1 import table_service_pb2 as pb
from tests.support.web import SOON_S, WebReferee, start_web_referee
from tests.support.web_protocols import read_until_closed

SHORT_S = 0.5
TRICKLE_S = 0.05


@pytest.fixture
async def strict_referee(redis_url: str) -> AsyncIterator[WebReferee]:
    """A referee whose HTTP port allows half a second for headers, bodies and idleness."""
    async with start_web_referee(
        redis_url, http_header_timeout_s=SHORT_S, http_body_timeout_s=SHORT_S, http_idle_timeout_s=SHORT_S
    ) as started:
        yield started


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=SOON_S)


def _trickle_until_closed(sock: socket.socket, head: bytes, drip: bytes) -> bytes:
    """Send ``head``, then ``drip`` every ``TRICKLE_S`` until the server closes; what it answered."""
    sock.sendall(head)
    stop = threading.Event()

    def drip_forever() -> None:
        while not stop.wait(TRICKLE_S):
            try:
                sock.sendall(drip)
            except OSError:
                return

    dripping = threading.Thread(target=drip_forever)
    dripping.start()
    try:
        return read_until_closed(sock)
    finally:
        stop.set()
        dripping.join()


def _get(sock: socket.socket, path: str = "/") -> bytes:
    """One keep-alive GET: the whole response (b"" if the server closed the connection instead)."""
    sock.sendall(f"GET {path} HTTP/1.1\r\nhost: referee\r\n\r\n".encode())
    response = b""
    while b"\r\n\r\n" not in response:
        chunk = sock.recv(65536)
        if not chunk:
            return response
        response += chunk
    head, _, body = response.partition(b"\r\n\r\n")
    lengths = [line.split(b":")[1] for line in head.lower().split(b"\r\n") if line.startswith(b"content-length:")]
    while len(body) < int(lengths[0]):
        body += sock.recv(65536)
    return response


class TestTimeouts:
    async def test_a_connection_that_sends_nothing_is_closed(self, strict_referee: WebReferee) -> None:
        with _connect(strict_referee.http_port) as sock:
            assert await asyncio.to_thread(read_until_closed, sock) == b""

    async def test_a_connection_idle_after_its_request_is_closed(self, strict_referee: WebReferee) -> None:
        with _connect(strict_referee.http_port) as sock:
            assert (await asyncio.to_thread(_get, sock)).startswith(b"HTTP/1.1 200")
            await asyncio.to_thread(read_until_closed, sock)

    async def test_headers_trickled_byte_by_byte_are_cut_off_with_408(self, strict_referee: WebReferee) -> None:
        # Each drip comes sooner than the idle timeout: only the headers' deadline can end it.
        with _connect(strict_referee.http_port) as sock:
            answer = await asyncio.to_thread(
                _trickle_until_closed, sock, b"GET / HTTP/1.1\r\nhost: referee\r\n", b"x-slow: 1\r\n"
            )
        assert answer.startswith(b"HTTP/1.1 408"), answer

    async def test_a_body_trickled_is_cut_off_with_408(self, strict_referee: WebReferee) -> None:
        head = (
            b"POST /dizhu.v1.TableService/GetTable HTTP/1.1\r\nhost: referee\r\n"
            b"content-type: application/proto\r\ncontent-length: 100000\r\n\r\n"
        )
        with _connect(strict_referee.http_port) as sock:
            answer = await asyncio.to_thread(_trickle_until_closed, sock, head, b"\0")
        assert answer.startswith(b"HTTP/1.1 408"), answer

    async def test_requests_in_time_are_answered_on_one_connection(self, strict_referee: WebReferee) -> None:
        with _connect(strict_referee.http_port) as sock:
            for _ in range(3):
                assert (await asyncio.to_thread(_get, sock)).startswith(b"HTTP/1.1 200")

    async def test_a_stream_outlives_the_timeouts(self, strict_referee: WebReferee) -> None:
        # Heartbeats come every second: two of them span four idle, header and body timeouts.
        async with strict_referee.native() as creator, strict_referee.web() as web:
            created = await creator.create_table(player_names=["a", "b", "c"], round_limit=1)
            stream = web.stream("TableService", "WatchTable", pb.WatchTableRequest(table_id=created.table_id))
            heartbeats = 0
            async with asyncio.timeout(SOON_S):
                async for event in stream:
                    heartbeats += event.event.HasField("heartbeat")
                    if heartbeats == 2:
                        break
            assert heartbeats == 2


class TestConnectionCap:
    CAP = 4

    async def test_connections_beyond_the_cap_are_refused_while_grpc_works(self, redis_url: str) -> None:
        async with start_web_referee(redis_url, http_max_connections=self.CAP) as referee:
            held = [_connect(referee.http_port) for _ in range(self.CAP)]
            try:
                for sock in held:  # each answered once, then kept alive: all four are open
                    assert (await asyncio.to_thread(_get, sock)).startswith(b"HTTP/1.1 200")
                with _connect(referee.http_port) as extra:
                    refused = await asyncio.to_thread(read_until_closed, extra)
                assert refused.startswith(b"HTTP/1.1 503"), refused
                async with referee.native() as client:
                    created = await client.create_table(player_names=["a", "b", "c"], round_limit=1)
                    assert created.table_id
                held.pop().close()
                async with asyncio.timeout(SOON_S):  # once the port has seen it close, there is room again
                    while True:
                        with _connect(referee.http_port) as again:
                            answer = await asyncio.to_thread(_get, again)
                        if answer.startswith(b"HTTP/1.1 200"):
                            break
                        assert answer.startswith(b"HTTP/1.1 503") or answer == b"", answer
                        await asyncio.sleep(0.05)
            finally:
                for sock in held:
                    sock.close()

    async def test_the_default_cap_is_half_the_open_file_limit(self) -> None:
        import resource

        from dizhu.web import ConnectionLimits

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        assert soft != resource.RLIM_INFINITY
        assert ConnectionLimits().connection_cap() == soft // 2
        assert ConnectionLimits(max_connections=7).connection_cap() == 7
