"""How the HTTP side reads compressed requests: bounded work, never inflating more than the request limit.

The Connect library decompresses a request before any codec sees it, up to the 1 MiB the
transport reads: a 3 KB gzip body became 1 MB of JSON, parsed in full on the event loop (2 s)
before the 64 KiB limit applied; and its gzip loop copies all the input left at the end of each
gzip member, so 1 MiB of 52,000 empty members held the event loop for 0.4 s or more while
producing nothing. Here gzip is read by :func:`inflate`, whatever the protocol -- a Connect unary
body, a Connect stream's envelope, a gRPC-Web frame, first or later -- with its work bounded
before and while it runs:

- **input**: a compressed message longer than ``max_request_bytes`` plus deflate's own bound on
  what incompressible data grows to (:func:`compressed_bound`) is refused before any of it is
  inflated -- no valid request takes that much, and zlib's work is linear in its input;
- **members**: at most ``MAX_GZIP_MEMBERS`` gzip members (a compressor writes one per message);
- **output**: at most ``max_request_bytes`` are inflated (plus one, to tell).

A body that goes past a bound, or that is no gzip, is handed to the codecs as an
:class:`Unreadable`: they answer it as the referee answers any request it cannot read
(INVALID_ARGUMENT, ``ErrorInfo`` and ``BadRequest``), through admission and the interceptors.

A frame flagged compressed on a call that names no encoding is a protocol error (gRPC's
PROTOCOL-HTTP2.md: without ``grpc-encoding`` the flag must be 0), which the library answers
INTERNAL before any of our code runs. :func:`announced_compression_only` routes every frame of
such a call that is flagged so -- the first or a later one -- to the decompressor here instead,
which refuses it the same way, saying which header was missing.
"""

from __future__ import annotations

import contextvars
import zlib
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final

from connectrpc.compression.gzip import GzipCompression

from dizhu.service.registration import Undecodable

__all__ = [
    "MAX_GZIP_MEMBERS",
    "Unreadable",
    "announced_compression_only",
    "compressed_bound",
    "inflate",
    "request_compressions",
]

_Scope = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
_Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
_ASGIApp = Callable[[_Scope, _Receive, _Send], Awaitable[None]]

#: The most gzip members a message may be made of. Every compressor writes one per message;
#: each member costs a fresh inflater and a copy of the input left after it (zlib's ``unused_data``).
MAX_GZIP_MEMBERS: Final = 16
#: Room for a gzip header's optional name, comment and extra field (none is needed; 1 KiB is plenty).
_GZIP_HEADER_ROOM: Final = 1024
#: The header naming a request message's encoding, by the content types that frame messages
#: (``application/grpc-web`` and ``application/grpc-web+proto``, ``application/connect+json``...).
_ENCODING_HEADERS = ((b"application/grpc-web", b"grpc-encoding"), (b"application/connect", b"connect-content-encoding"))
#: Set, for one request, when it frames its messages and names no encoding: a frame flagged
#: compressed is then a protocol error.
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


def compressed_bound(max_bytes: int) -> int:
    """The longest gzip body a message of ``max_bytes`` can need: deflate's bound on stored
    (incompressible) data -- 5 bytes a 16 KiB block at most, which ``max_bytes // 1024`` covers --
    gzip's header and trailer, and room for the header's optional fields."""
    return max_bytes + max_bytes // 1024 + _GZIP_HEADER_ROOM


def _too_large(max_bytes: int, sent: int, how: str) -> Unreadable:
    return Unreadable(
        Undecodable(
            f"the request is more than {max_bytes} bytes {how} ({sent} bytes sent); at most {max_bytes} are accepted",
            {"max_bytes": str(max_bytes)},
        )
    )


_NO_GZIP = Unreadable(Undecodable("the message is no valid gzip (as its encoding says)", {}))


def inflate(data: bytes | bytearray | memoryview, max_bytes: int) -> bytes:
    """``data`` (gzip) inflated, or an :class:`Unreadable` saying which bound it passes (see the
    module's docstring): the work is linear in at most ``compressed_bound(max_bytes)`` bytes."""
    if len(data) > compressed_bound(max_bytes):
        return _too_large(max_bytes, len(data), "even compressed")
    view = memoryview(data)
    parts: list[bytes] = []
    inflated = offset = 0
    try:
        for _ in range(MAX_GZIP_MEMBERS):
            member = zlib.decompressobj(wbits=31)
            # At most what is left of the limit, plus one to tell (zlib's max_length).
            part = member.decompress(view[offset:], max_bytes + 1 - inflated)
            inflated += len(part)
            if inflated > max_bytes:
                return _too_large(max_bytes, len(data), "once decompressed")
            parts.append(part)
            if not member.eof:
                return _NO_GZIP  # the input ended inside a member
            offset = len(data) - len(member.unused_data)
            if offset == len(data):
                return b"".join(parts)
    except zlib.error:
        return _NO_GZIP
    return Unreadable(
        Undecodable(
            f"the message is more than {MAX_GZIP_MEMBERS} gzip members; at most {MAX_GZIP_MEMBERS} are accepted",
            {"max_gzip_members": str(MAX_GZIP_MEMBERS)},
        )
    )


class _BoundedGzip:
    """gzip, requests read by :func:`inflate`; responses compressed as the library does."""

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
        return inflate(data, self._max_bytes if read_max_bytes is None else min(self._max_bytes, read_max_bytes))


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
    """``app``, refusing any frame flagged compressed on a call that names no encoding as an
    unreadable request (INVALID_ARGUMENT) rather than the library's INTERNAL."""

    async def guarded(scope: _Scope, receive: _Receive, send: _Send) -> None:
        header = _unnamed_encoding_header(scope) if scope["type"] == "http" else None
        if header is None:
            await app(scope, receive, send)
            return
        # The library hands a frame flagged compressed to the call's decompressor, and only such a
        # frame: named gzip here, the decompressor refuses it (see the module's docstring).
        headers = [(name, value) for name, value in scope["headers"] if name != header] + [(header, b"gzip")]
        token = _UNANNOUNCED.set(header.decode())
        try:
            await app({**scope, "headers": headers}, receive, send)
        finally:
            _UNANNOUNCED.reset(token)

    return guarded
