"""How the HTTP side decodes requests: as the gRPC side does, never raising.

The Connect library decodes a request before any handler runs and turns a parser's exception
into an error of its own, without the referee's ``ErrorInfo`` and with the parser's words in
the message, and it reads requests of up to 4 MB. The codecs here decode with the gRPC side's
deserializer (:func:`dizhu.service.registration.decode_request`): bytes that are no valid
request, or more than ``max_request_bytes`` of them, become its marker, which the handler
refuses with INVALID_ARGUMENT, ``ErrorInfo`` and ``BadRequest``, exactly as over gRPC. A
request in protobuf's JSON form is parsed, then held to the same limit by its binary size.
"""

from __future__ import annotations

from typing import Any

from connectrpc.codec import Codec
from google.protobuf import json_format
from google.protobuf.message import Message

from dizhu.service.registration import Undecodable, decode_request, too_large

__all__ = ["request_codecs"]


class _Requests:
    """A codec of requests held to ``max_request_bytes``."""

    def __init__(self, max_request_bytes: int) -> None:
        self._max_bytes = max_request_bytes


class _BinaryRequests(_Requests):
    """Protobuf's binary form."""

    def name(self) -> str:
        return "proto"

    def encode(self, message: Message) -> bytes:
        return message.SerializeToString()

    def decode(self, data: bytes | bytearray, message_class: type[Message]) -> Message | Undecodable:
        return decode_request(message_class, bytes(data), self._max_bytes)


class _JsonRequests(_Requests):
    """Protobuf's JSON form (unknown fields ignored, as the binary form's are)."""

    def name(self) -> str:
        return "json"

    def encode(self, message: Message) -> bytes:
        return json_format.MessageToJson(message).encode()

    def decode(self, data: bytes | bytearray, message_class: type[Message]) -> Message | Undecodable:
        message = message_class()
        try:
            json_format.Parse(bytes(data), message, ignore_unknown_fields=True)
        except Exception:  # whatever the parser objects to, the caller sent no valid message
            return Undecodable(f"the body is no valid {message_class.DESCRIPTOR.full_name} (protobuf JSON form)", {})
        # Held to the gRPC side's limit by the size the request has there.
        size = message.ByteSize()
        return too_large(size, self._max_bytes) if size > self._max_bytes else message


def request_codecs(max_request_bytes: int) -> list[Codec[Any, Any]]:
    """The HTTP side's codecs: binary and JSON, requests decoded as over gRPC (see the module docstring)."""
    return [_BinaryRequests(max_request_bytes), _JsonRequests(max_request_bytes)]
