"""How the HTTP side reads compressed requests: never inflating more than the request limit.

The Connect library decompresses a request before any codec sees it, up to the 1 MiB the
transport reads: a 3 KB gzip body became 1 MB of JSON, parsed in full on the event loop (2 s)
before the 64 KiB limit applied. Here gzip inflates at most ``max_request_bytes`` (plus one, to
tell), whatever the protocol -- a Connect unary body, a Connect stream's envelope, a gRPC-Web
frame -- and a body that goes past it, or that is no gzip, is handed to the codecs as an
:class:`Unreadable`: they answer it as the referee answers any request it cannot read
(INVALID_ARGUMENT, ``ErrorInfo`` and ``BadRequest``), through admission and the interceptors.

A frame flagged compressed on a call that names no encoding is a protocol error (gRPC's
PROTOCOL-HTTP2.md: without ``grpc-encoding`` the flag must be 0), which the library answers
INTERNAL before any of our code runs. :func:`announced_compression_only` routes such a frame to
the decompressor here instead, which refuses it the same way, saying which header was missing.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from connectrpc.code import Code
from connectrpc.compression.gzip import GzipCompression
from connectrpc.errors import ConnectError

from dizhu.service.registration import Undecodable

__all__ = ["Unreadable", "announced_compression_only", "request_compressions"]

_Scope = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
_Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
_ASGIApp = Callable[[_Scope, _Receive, _Send], Awaitable[None]]

#: The header naming a request message's encoding, by the content types that frame messages
#: (``application/grpc-web`` and ``application/grpc-web+proto``, ``application/connect+json``...).
_ENCODING_HEADERS = ((b"application/grpc-web", b"grpc-encoding"), (b"application/connect", b"connect-content-encoding"))
#: Set, for one request, when its first frame is flagged compressed and the call names no encoding.
_UNANNOUNCED: contextvars.ContextVar[str | None] = contextvars.ContextVar("unannounced_compression", default=None)


class Unreadable(bytes):
    """What the decompressor hands the codecs instead of a message's bytes: why there are none.

    A ``bytes`` (the library passes it on as the decompressed message) that is itself no valid
    message in either form, should anything but the codecs read it.
    """

    reason: Undecodable

    def __new__(cls, reason: Undecodable) -> Unreadable:
        unreadable = super().__new__(cls, b"\xff")
        unreadable.reason = reason
        return unreadable


def _inflated_too_far(max_bytes: int, sent: int) -> Unreadable:
    return Unreadable(
        Undecodable(
            f"the request is more than {max_bytes} bytes once decompressed ({sent} bytes sent); "
            f"at most {max_bytes} are accepted",
            {"max_bytes": str(max_bytes)},
        )
    )


class _BoundedGzip:
    """gzip, inflating a request at most to ``max_bytes``; responses compressed as the library does."""

    def __init__(self, max_bytes: int) -> None:
        self._max_bytes = max_bytes
        self._gzip = GzipCompression()

    def name(self) -> str:
        return "gzip"

    def compress(self, data: bytes | bytearray | memoryview) -> bytes:
        return self._gzip.compress(data)

    def decompress(self, data: bytes | bytearray | memoryview, read_max_bytes: int | None = None) -> bytes:
        if (header := _UNANNOUNCED.get()) is not None:
            return Unreadable(Undecodable(f"the message is flagged compressed but the call names no {header}", {}))
        limit = self._max_bytes if read_max_bytes is None else min(self._max_bytes, read_max_bytes)
        try:
            # The library's loop inflates in steps of at most what is left of the limit (zlib's
            # max_length), so no more than limit + 1 bytes are ever produced.
            return self._gzip.decompress(data, limit)
        except ConnectError as error:
            if error.code is not Code.RESOURCE_EXHAUSTED:
                raise
            return _inflated_too_far(self._max_bytes, len(data))
        except Exception:  # whatever zlib objects to, the caller sent no gzip
            return Unreadable(Undecodable("the message is no valid gzip (as its encoding says)", {}))


def request_compressions(max_request_bytes: int) -> list[Any]:
    """The request encodings the HTTP side accepts (gzip), none inflated past ``max_request_bytes``."""
    return [_BoundedGzip(max_request_bytes)]


def _unnamed_encoding_header(scope: _Scope) -> bytes | None:
    """The encoding header a framed request names none in (absent, empty or identity), else None."""
    headers = dict(scope.get("headers", ()))
    content_type = headers.get(b"content-type", b"").lower()
    for framed, header in _ENCODING_HEADERS:
        if content_type == framed or content_type.startswith(framed + b"+"):
            return header if headers.get(header, b"identity") in (b"", b"identity") else None
    return None


def announced_compression_only(app: _ASGIApp) -> _ASGIApp:
    """``app``, refusing a first frame flagged compressed on a call that names no encoding
    as an unreadable request (INVALID_ARGUMENT) rather than the library's INTERNAL."""

    async def guarded(scope: _Scope, receive: _Receive, send: _Send) -> None:
        header = _unnamed_encoding_header(scope) if scope["type"] == "http" else None
        if header is None:
            await app(scope, receive, send)
            return
        received: list[MutableMapping[str, Any]] = []
        while True:  # up to the first byte of the body: its first frame's flags
            message = await receive()
            received.append(message)
            if message["type"] != "http.request" or message.get("body") or not message.get("more_body"):
                break
        body = received[-1].get("body", b"")
        flagged = bool(body) and bool(body[0] & 0x01)

        async def replay() -> MutableMapping[str, Any]:
            return received.pop(0) if received else await receive()

        if not flagged:
            await app(scope, replay, send)
            return
        # The library then hands the frame to the decompressor, which refuses it (see the module's docstring).
        headers = [(name, value) for name, value in scope["headers"] if name != header] + [(header, b"gzip")]
        token = _UNANNOUNCED.set(header.decode())
        try:
            await app({**scope, "headers": headers}, replay, send)
        finally:
            _UNANNOUNCED.reset(token)

    return guarded
