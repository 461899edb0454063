"""What the gRPC port answers to compressed requests, sent as raw HTTP/2 frames (no gRPC client
library sends the malformed ones).

gRPC core inflates a request before the referee's deserializer sees it. What it accepts reaches
the referee; three protocol errors it answers itself with ``INTERNAL`` before any of the
referee's code runs, and no server setting changes that (docs/security.md, "What gRPC core
answers before the referee"). These tests pin those answers: if a gRPC release changes them,
the documentation must change with it.
"""

from __future__ import annotations

import asyncio
import gzip
import socket
import struct
import zlib

import h2.config
import h2.connection
import h2.events
import pytest

from dizhu.v1 import table_service_pb2 as pb
from tests.support.safety import Servers

GET_TABLE = "/dizhu.v1.TableService/GetTable"
_REQUEST = pb.GetTableRequest(table_id="no-such-table").SerializeToString()
_TIMEOUT_S = 15.0


def _grpc_call(port: int, message: bytes, *, flags: int, encoding: str | None) -> dict[str, str]:
    """One unary call of ``GetTable`` with ``message`` framed with ``flags``, as raw HTTP/2: the
    response's headers and trailers (``grpc-status``, ``grpc-message``...)."""
    config = h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
    connection = h2.connection.H2Connection(config)
    connection.initiate_connection()
    headers = [(":method", "POST"), (":scheme", "http"), (":path", GET_TABLE), (":authority", "referee")]
    headers += [("content-type", "application/grpc"), ("te", "trailers")]
    headers += [("grpc-encoding", encoding)] if encoding else []
    stream = connection.get_next_available_stream_id()
    connection.send_headers(stream, headers)
    connection.send_data(stream, bytes([flags]) + struct.pack(">I", len(message)) + message, end_stream=True)
    answered: dict[str, str] = {}
    with socket.create_connection(("127.0.0.1", port), timeout=_TIMEOUT_S) as sock:
        sock.sendall(connection.data_to_send())
        while chunk := sock.recv(65536):
            for event in connection.receive_data(chunk):
                if isinstance(event, h2.events.ResponseReceived | h2.events.TrailersReceived):
                    answered |= dict(event.headers)
                if isinstance(event, h2.events.StreamEnded | h2.events.StreamReset):
                    return answered
            sock.sendall(connection.data_to_send())
    raise AssertionError(f"the connection closed before the call ended: {answered}")


async def _answer(servers: Servers, message: bytes, *, flags: int, encoding: str | None) -> tuple[str, str]:
    server = await servers.start()
    answered = await asyncio.to_thread(_grpc_call, server.referee.port, message, flags=flags, encoding=encoding)
    return answered["grpc-status"], answered.get("grpc-message", "")


class TestWhatReachesTheReferee:
    @pytest.mark.parametrize(
        ("message", "flags", "encoding"),
        [
            (_REQUEST, 0, None),
            (gzip.compress(_REQUEST), 1, "gzip"),
            (zlib.compress(_REQUEST), 1, "deflate"),
            (_REQUEST, 0, "gzip"),  # an encoding named, this message not compressed
        ],
        ids=["plain", "gzip", "deflate", "gzip named, not used"],
    )
    async def test_is_read_and_answered_by_the_referee(
        self, servers: Servers, message: bytes, flags: int, encoding: str | None
    ) -> None:
        assert await _answer(servers, message, flags=flags, encoding=encoding) == ("5", "no table no-such-table")

    async def test_a_gzip_bomb_is_refused_by_its_inflated_size(self, servers: Servers) -> None:
        bomb = gzip.compress(b"\0" * (16 << 20))  # 16 MiB in 16 KB
        code, message = await _answer(servers, bomb, flags=1, encoding="gzip")
        assert (code, message) == ("8", "Decompressed message larger than max")  # RESOURCE_EXHAUSTED


class TestWhatGrpcCoreAnswersItself:
    async def test_a_flag_without_an_encoding(self, servers: Servers) -> None:
        code, message = await _answer(servers, gzip.compress(_REQUEST), flags=1, encoding=None)
        assert (code, message) == ("13", "Compression bit set but no encoding configured")

    async def test_gzip_of_more_than_one_member(self, servers: Servers) -> None:
        body = gzip.compress(_REQUEST) + gzip.compress(b"")
        code, message = await _answer(servers, body, flags=1, encoding="gzip")
        assert (code, message) == ("13", "Decompression failed due to not all input consumed")

    async def test_an_encoding_core_does_not_know(self, servers: Servers) -> None:
        code, message = await _answer(servers, _REQUEST, flags=1, encoding="snappy")
        assert (code, message) == ("13", "Error parsing 'grpc-encoding' metadata")
