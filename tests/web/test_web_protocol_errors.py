"""Protocol errors of HTTP clients: answered precisely, never INTERNAL, and nothing read after a
request whose length is ambiguous.

- A frame flagged compressed on a call that names no encoding -- a later frame as well as the
  first -- is no INTERNAL error (the library's "protocol error: sent compressed message").
- A request with both ``Content-Length`` and ``Transfer-Encoding`` is answered, then its
  connection closed (RFC 9112 section 6.3: request smuggling behind a proxy that trusts the length).
"""

from __future__ import annotations

import asyncio
import gzip
import http.client
import socket
from urllib.parse import unquote

import pytest

from dizhu.v1 import table_service_pb2 as pb
from tests.support.web import SOON_S, WebReferee
from tests.support.web_protocols import GET_TABLE, WATCH_TABLE, grpc_web_frame, read_until_closed, refusal_status

_REQUEST = pb.GetTableRequest(table_id="no-such-table").SerializeToString()
_FLAGGED = grpc_web_frame(gzip.compress(_REQUEST), flags=1)


class TestLaterFramesFlaggedCompressed:
    @pytest.mark.parametrize(
        ("protocol", "path", "content_type"),
        [
            ("grpc-web", GET_TABLE, "application/grpc-web+proto"),
            ("grpc-web", WATCH_TABLE, "application/grpc-web+proto"),
            ("connect stream", WATCH_TABLE, "application/connect+proto"),
        ],
    )
    async def test_a_second_frame_is_refused_as_a_second_request_not_internal(
        self, web_referee: WebReferee, protocol: str, path: str, content_type: str
    ) -> None:
        status, headers, answer = await web_referee.http(
            "POST", path, grpc_web_frame(_REQUEST) + _FLAGGED, {"content-type": content_type}
        )
        assert status == 200, answer
        refusal = refusal_status(protocol, headers, answer)
        # A call takes one request message: the library refuses a second, whatever its flags.
        assert (refusal.code, unquote(refusal.message)) == (12, "unary request has multiple messages"), refusal


def _get_table(headers: str, body: bytes) -> bytes:
    return (
        f"POST {GET_TABLE} HTTP/1.1\r\nhost: referee\r\ncontent-type: application/proto\r\n{headers}\r\n".encode()
        + body
    )


def _exchange(port: int, request: bytes) -> bytes:
    """Send ``request`` on a connection of its own; all the server answers until it closes the
    connection (fails if it stays open, ``SOON_S``)."""
    with socket.create_connection(("127.0.0.1", port), timeout=SOON_S) as sock:
        sock.sendall(request)
        return read_until_closed(sock)


class TestAmbiguousLength:
    async def test_a_request_with_both_lengths_is_answered_then_closed(self, web_referee: WebReferee) -> None:
        chunked = f"{len(_REQUEST):x}\r\n".encode() + _REQUEST + b"\r\n0\r\n\r\n"
        request = _get_table("content-length: 4\r\ntransfer-encoding: chunked\r\n", chunked)
        answer = await asyncio.to_thread(_exchange, web_referee.http_port, request)
        assert answer.startswith(b"HTTP/1.1 404 "), answer  # read by its chunks: the table does not exist
        assert answer.count(b"HTTP/1.1") == 1, answer

    async def test_a_request_with_one_length_keeps_its_connection(self, web_referee: WebReferee) -> None:
        statuses, same_connection = await asyncio.to_thread(_two_requests, web_referee.http_port)
        assert statuses == [404, 404]
        assert same_connection


def _two_requests(port: int) -> tuple[list[int], bool]:
    """Two GetTable over Connect on one keep-alive connection: their statuses, and whether the
    second went on the first's connection."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=SOON_S)
    statuses, sockets = [], []
    try:
        for _ in range(2):
            connection.request("POST", GET_TABLE, body=_REQUEST, headers={"content-type": "application/proto"})
            response = connection.getresponse()
            response.read()
            statuses.append(response.status)
            sockets.append(connection.sock)
    finally:
        connection.close()
    return statuses, sockets[0] is not None and sockets[0] is sockets[1]
