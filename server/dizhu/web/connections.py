"""How long the HTTP port holds a connection, and how many it holds at once.

uvicorn closes a connection only some seconds after a response (keep-alive): one that never
sends a request, that trickles its headers (slowloris) or its body, stays open for ever, and
1,100 idle ones exhausted a 1,024 file-descriptor limit until new gRPC connections failed. The
protocol here is uvicorn's own HTTP/1.1 protocol (h11) with four bounds:

- **idle**: a connection without a request in progress -- before its first, between two -- is
  closed after ``idle_timeout_s`` (uvicorn's keep-alive timer, armed at the connection's start too);
- **headers**: a request's line and headers must be complete ``header_timeout_s`` after their
  first byte, else ``408`` and the connection closed;
- **body**: its body must be complete ``body_timeout_s`` after its headers, else ``408`` (when
  no answer has begun) and the connection closed;
- **connections**: beyond ``max_connections`` open at once, a new connection is answered ``503``
  and closed as it comes, before it can hold a descriptor -- by default half the process's
  open-file limit, so that the gRPC port and Redis always have the other half.

A request being answered (a stream for hours) is never cut: the bounds are on what the client sends.

A request that gives both ``Content-Length`` and ``Transfer-Encoding`` is read by its
``Transfer-Encoding`` (h11) and answered, then its connection is closed, as RFC 9112 section 6.3
asks: a proxy in front that trusted the length would read what follows differently (request
smuggling), so nothing more is read from that connection.
"""

from __future__ import annotations

import asyncio
import dataclasses
import resource
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["ConnectionLimits", "limited_protocol"]

_TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"
_FULL = b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\nretry-after: 1\r\ncontent-length: 0\r\n\r\n"
#: The connection cap when the open-file limit is unlimited.
_UNLIMITED_FILES_CAP = 32_768


@dataclasses.dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """The HTTP port's bounds on connections (seconds, and a count; see the module's docstring)."""

    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    idle_timeout_s: float = 60.0
    #: None: half the process's open-file limit (soft), as it is when the server starts.
    max_connections: int | None = None

    def connection_cap(self) -> int:
        """How many connections may be open at once."""
        if self.max_connections is not None:
            return self.max_connections
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        return _UNLIMITED_FILES_CAP if soft == resource.RLIM_INFINITY else max(1, soft // 2)


class _LimitedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, bounded by ``limits`` (set on the subclass :func:`limited_protocol` makes)."""

    limits: ClassVar[ConnectionLimits]
    cap: ClassVar[int]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: The deadline of the request being received: its headers', then its body's.
        self._deadline: asyncio.TimerHandle | None = None
        self._receiving_body = False
        #: The request (its cycle) whose framing headers were checked last.
        self._checked: object = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        full = len(self.connections) >= self.cap
        super().connection_made(transport)
        if full:
            transport.write(_FULL)
            transport.close()
            return
        # Idle until a request's first byte: the keep-alive timer, which uvicorn cancels on data.
        self.timeout_keep_alive_task = self.loop.call_later(self.timeout_keep_alive, self.timeout_keep_alive_handler)

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_deadline()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._deadline is None and self.conn.their_state is h11.IDLE:
            self._deadline = self.loop.call_later(self.limits.header_timeout_s, self._timed_out)
        super().data_received(data)
        self._follow_request()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # may start the next request, read while this one was answered
        self._follow_request()

    def _follow_request(self) -> None:
        self._close_after_an_ambiguous_length()
        self._follow_deadline()

    def _close_after_an_ambiguous_length(self) -> None:
        """A new request framed by both its length and its transfer encoding: close after its answer."""
        cycle = self.cycle
        if cycle is None or cycle is self._checked:
            return
        self._checked = cycle
        names = {name for name, _ in cycle.scope["headers"]}
        if b"content-length" in names and b"transfer-encoding" in names:
            cycle.keep_alive = False  # its task has not run yet: no answer has begun

    def _follow_deadline(self) -> None:
        """The deadline that fits what the client is sending now: its head's, its body's, or none."""
        state = self.conn.their_state
        if self._deadline is not None and not self._receiving_body and state is not h11.IDLE:
            self._cancel_deadline()  # the head is complete
            if state is h11.SEND_BODY:
                self._receiving_body = True
                self._deadline = self.loop.call_later(self.limits.body_timeout_s, self._timed_out)
        elif self._receiving_body and state is not h11.SEND_BODY:
            self._cancel_deadline()  # the body is complete

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._receiving_body = False

    def _timed_out(self) -> None:
        receiving_body, self._deadline, self._receiving_body = self._receiving_body, None, False
        if self.transport.is_closing():
            return
        request = self.cycle if receiving_body else None  # while headers come, the cycle is the last request's
        if request is None or not request.response_started:
            self.transport.write(_TIMED_OUT)
        if request is not None:
            request.disconnected = True  # whatever the application answers now goes nowhere
        self.transport.close()


def limited_protocol(limits: ConnectionLimits) -> type[H11Protocol]:
    """uvicorn's HTTP/1.1 protocol bounded by ``limits``; give it to ``uvicorn.Config(http=...)``,
    with ``timeout_keep_alive`` set to ``limits.idle_timeout_s``."""
    return type("LimitedH11Protocol", (_LimitedH11Protocol,), {"limits": limits, "cap": limits.connection_cap()})
