"""How the HTTP side decodes requests: as the gRPC side does, never raising.

The Connect library decodes a request before any handler runs and turns a parser's exception
into an error of its own, without the referee's ``ErrorInfo`` and with the parser's words in
the message, and it reads requests of up to 4 MB. The codecs here decode with the gRPC side's
deserializer (:func:`dizhu.service.registration.decode_request`): bytes that are no valid
request, or more than ``max_request_bytes`` of them, become its marker, which the handler
refuses with INVALID_ARGUMENT, ``ErrorInfo`` and ``BadRequest``, exactly as over gRPC.

A request in protobuf's JSON form costs far more to parse than its binary form (protobuf's
JSON parser is Python: ~10 us a value), so it is bounded before it is parsed: its text to
``max_request_bytes`` and its values (objects, arrays, strings, numbers...) to
``MAX_JSON_VALUES``, twice what the largest valid request holds (a CreateTable with 1,024
seeds); then its binary size to the same limit. A body the decompressor refused
(:class:`dizhu.web.encodings.Unreadable`) is refused alike.
"""

from __future__ import annotations

import json
from typing import Any, Final

from connectrpc.codec import Codec
from google.protobuf import json_format
from google.protobuf.message import Message

from dizhu.service.registration import Undecodable, decode_request, too_large
from dizhu.web.encodings import Unreadable

__all__ = ["MAX_JSON_VALUES", "request_codecs"]

#: The most values a JSON request may hold; the largest valid one holds about 1,060.
MAX_JSON_VALUES: Final = 2048


def _more_values_than(document: Any, limit: int) -> bool:
    """Whether the parsed JSON ``document`` holds more than ``limit`` values (stops once it does)."""
    pending, seen = [document], 0
    while pending:
        value = pending.pop()
        seen += 1
        if seen > limit:
            return True
        if isinstance(value, dict):
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return False


def _without_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's members; a key twice is no valid JSON request (as protobuf's own parser says)."""
    members = dict(pairs)
    if len(members) != len(pairs):
        raise ValueError("a key appears twice")
    return members


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
        if isinstance(data, Unreadable):
            return data.reason
        return decode_request(message_class, bytes(data), self._max_bytes)


class _JsonRequests(_Requests):
    """Protobuf's JSON form (unknown fields ignored, as the binary form's are)."""

    def name(self) -> str:
        return "json"

    def encode(self, message: Message) -> bytes:
        return json_format.MessageToJson(message).encode()

    def decode(self, data: bytes | bytearray, message_class: type[Message]) -> Message | Undecodable:
        if isinstance(data, Unreadable):
            return data.reason
        if len(data) > self._max_bytes:
            return too_large(len(data), self._max_bytes)
        invalid = Undecodable(f"the body is no valid {message_class.DESCRIPTOR.full_name} (protobuf JSON form)", {})
        try:
            document = json.loads(data, object_pairs_hook=_without_duplicate_keys)
        except (ValueError, RecursionError):
            return invalid
        if _more_values_than(document, MAX_JSON_VALUES):
            return Undecodable(
                f"the request holds more than {MAX_JSON_VALUES} JSON values", {"max_values": str(MAX_JSON_VALUES)}
            )
        message = message_class()
        try:
            json_format.ParseDict(document, message, ignore_unknown_fields=True)
        except Exception:  # whatever the parser objects to, the caller sent no valid message
            return invalid
        # Held to the gRPC side's limit by the size the request has there too.
        size = message.ByteSize()
        return too_large(size, self._max_bytes) if size > self._max_bytes else message


def request_codecs(max_request_bytes: int) -> list[Codec[Any, Any]]:
    """The HTTP side's codecs: binary and JSON, requests decoded as over gRPC (see the module docstring)."""
    return [_BinaryRequests(max_request_bytes), _JsonRequests(max_request_bytes)]
