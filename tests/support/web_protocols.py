"""Calls of the web side's protocols as a hostile or careless client makes them: gRPC-Web and Connect
frames, the statuses they answer with, a connection read until the server closes it.
"""

from __future__ import annotations

import base64
import json
import socket
import struct
import time

from google.rpc import error_details_pb2, status_pb2

from tests.support.web import SOON_S

LIMIT = 64 * 1024
GET_TABLE = "/dizhu.v1.TableService/GetTable"
WATCH_TABLE = "/dizhu.v1.TableService/WatchTable"


def grpc_web_frame(payload: bytes, flags: int = 0) -> bytes:
    return bytes([flags]) + struct.pack(">I", len(payload)) + payload


def _frames(body: bytes) -> list[tuple[int, bytes]]:
    frames, offset = [], 0
    while offset < len(body):
        flags, length = body[offset], struct.unpack(">I", body[offset + 1 : offset + 5])[0]
        frames.append((flags, body[offset + 5 : offset + 5 + length]))
        offset += 5 + length
    return frames


def rich_error_details(status: status_pb2.Status) -> tuple[error_details_pb2.ErrorInfo, error_details_pb2.BadRequest]:
    info, bad = error_details_pb2.ErrorInfo(), error_details_pb2.BadRequest()
    assert [detail.Unpack(info) or detail.Unpack(bad) for detail in status.details] == [True, True], status
    return info, bad


def grpc_web_status(headers: dict[str, str], body: bytes) -> status_pb2.Status:
    """The google.rpc.Status of a gRPC-Web answer (trailers-only, or its trailers frame)."""
    trailers = headers if "grpc-status" in headers else {}
    for flags, frame in _frames(body):
        if flags & 0x80:
            lines = frame.decode().strip().split("\r\n")
            trailers = {key.strip().lower(): value.strip() for key, value in (line.split(":", 1) for line in lines)}
    assert "grpc-status" in trailers, (headers, body)
    if "grpc-status-details-bin" not in trailers:
        return status_pb2.Status(code=int(trailers["grpc-status"]), message=trailers.get("grpc-message", ""))
    return status_pb2.Status.FromString(base64.b64decode(trailers["grpc-status-details-bin"] + "=="))


def connect_status(error: dict[str, object]) -> status_pb2.Status:
    """A Connect error (JSON) as a google.rpc.Status: its code by name, message and details."""
    codes = {"invalid_argument": 3, "not_found": 5, "resource_exhausted": 8, "internal": 13, "unimplemented": 12}
    status = status_pb2.Status(code=codes.get(str(error["code"]), -1), message=str(error.get("message", "")))
    for detail in error.get("details", []):  # type: ignore[attr-defined]
        status.details.add(
            type_url=f"type.googleapis.com/{detail['type']}", value=base64.b64decode(detail["value"] + "==")
        )
    return status


def connect_stream_status(body: bytes) -> status_pb2.Status:
    """The status in a Connect stream's end message (flag 0x02)."""
    ends = [json.loads(frame) for flags, frame in _frames(body) if flags & 0x02]
    assert len(ends) == 1, body
    return connect_status(ends[0]["error"])


def method_path(protocol: str) -> str:
    return WATCH_TABLE if protocol == "connect stream" else GET_TABLE


def refusal_status(protocol: str, headers: dict[str, str], answer: bytes) -> status_pb2.Status:
    """The status a call was refused with, whichever its protocol."""
    if protocol == "connect unary":
        return connect_status(json.loads(answer))
    if protocol == "connect stream":
        return connect_stream_status(answer)
    return grpc_web_status(headers, answer)


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a hang guard of ``SOON_S``)."""
    received = b""
    deadline = time.monotonic() + SOON_S
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return received
        except TimeoutError:
            break
        if not chunk:
            return received
        received += chunk
    raise AssertionError(f"the connection is still open after {SOON_S} s; received {received!r}")
