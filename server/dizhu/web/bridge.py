"""gRPC-Web and Connect from the very servicers, and interceptors, that the gRPC server runs.

The servicers are registered a second time, with their generated ``add_*_to_server``
function, into a collector instead of a gRPC server: that yields the same method handlers
gRPC calls. The Connect library (``connectrpc``) speaks the browser protocols -- gRPC-Web
and Connect, over HTTP/1.1 -- decodes each request into the generated message class and
calls an endpoint here, which runs the server's interceptors (metrics, ...) around the
handler exactly as gRPC does, with a :class:`WebServicerContext` standing in for gRPC's
context: ``invocation_metadata()`` gives the request's headers, and ``abort_with_status``
becomes a ``ConnectError`` carrying the same code, message and ``google.rpc`` details
(the ``grpc-status-details-bin`` a native client reads). No method is implemented twice.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, NoReturn

import grpc
from connectrpc.code import Code
from connectrpc.errors import ConnectError, ErrorDetail
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.request import RequestContext
from connectrpc.server import ConnectASGIApplication, Endpoint
from google.protobuf import descriptor, descriptor_pb2, message_factory
from google.rpc import status_pb2
from protobuf.wkt import Any as AnyDetail

from dizhu.service.registration import DEFAULT_MAX_REQUEST_BYTES, Encoded, transport_cap
from dizhu.web.codecs import request_codecs
from dizhu.web.encodings import announced_compression_only, request_compressions

__all__ = ["Registration", "WebServicerContext", "connect_application", "method_info"]

_MetadataLike = grpc.aio.Metadata | Sequence[tuple[str, str | bytes]]
#: A servicer and the generated function that registers it on a gRPC server.
Registration = tuple[Callable[[Any, Any], None], object]
_STATUS_DETAILS = "grpc-status-details-bin"
_CODES = {code.name: code for code in Code} | {"CANCELLED": Code.CANCELED}
_IDEMPOTENCY = {
    descriptor_pb2.MethodOptions.NO_SIDE_EFFECTS: IdempotencyLevel.NO_SIDE_EFFECTS,
    descriptor_pb2.MethodOptions.IDEMPOTENT: IdempotencyLevel.IDEMPOTENT,
}


class _Collector:
    """What a generated ``add_*_to_server`` needs of a server: it keeps the method handlers."""

    def __init__(self) -> None:
        self.handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}

    def add_generic_rpc_handlers(self, handlers: Iterable[grpc.GenericRpcHandler]) -> None:
        """Unused: the registered handlers below carry the same methods."""

    def add_registered_method_handlers(self, service: str, handlers: Mapping[str, Any]) -> None:
        for name, handler in handlers.items():
            self.handlers[f"/{service}/{name}"] = handler


@dataclasses.dataclass(frozen=True, slots=True)
class _CallDetails(grpc.HandlerCallDetails):
    method: str
    invocation_metadata: tuple[tuple[str, str | bytes], ...]


def _status_code(code: grpc.StatusCode) -> Code:
    return _CODES.get(code.name, Code.UNKNOWN)


class _Aborted(ConnectError, grpc.aio.AbortError):
    """An aborted call: a ``ConnectError`` for the library, an ``AbortError`` for gRPC-minded code."""


class WebServicerContext(grpc.aio.ServicerContext[Any, Any]):
    """gRPC's servicer context for a call that came over HTTP (gRPC-Web or Connect).

    What the referee's handlers and interceptors use behaves as in gRPC: the call's
    metadata (HTTP headers, ``-bin`` ones base64-decoded), aborting with a status and
    its details, the status code and details, the peer and the deadline. Reading or
    writing messages by hand is not supported (the handlers take and yield messages).
    """

    def __init__(self, request: RequestContext[Any, Any]) -> None:
        self._request = request
        self._code: grpc.StatusCode | None = None
        self._details = ""
        self._trailing = grpc.aio.Metadata()
        metadata: list[tuple[str, str | bytes]] = []
        for key, value in request.request_headers.allitems():
            if key.endswith("-bin"):
                with contextlib.suppress(ValueError):
                    metadata.append((key, base64.b64decode(value + "==")))
            else:
                metadata.append((key, value))
        self._metadata = tuple(metadata)

    def invocation_metadata(self) -> grpc.aio.Metadata:
        return grpc.aio.Metadata(*self._metadata)

    async def abort(self, code: grpc.StatusCode, details: str = "", trailing_metadata: _MetadataLike = ()) -> NoReturn:
        self._code, self._details = code, details
        error_details: list[ErrorDetail] = []
        for key, value in trailing_metadata:
            if key == _STATUS_DETAILS and isinstance(value, bytes):
                status = status_pb2.Status.FromString(value)
                error_details += [ErrorDetail(AnyDetail(type_url=d.type_url, value=d.value)) for d in status.details]
        raise _Aborted(_status_code(code), details, error_details)

    async def abort_with_status(self, status: grpc.Status) -> NoReturn:
        await self.abort(status.code, status.details, status.trailing_metadata)

    def set_code(self, code: grpc.StatusCode) -> None:
        self._code = code

    def code(self) -> grpc.StatusCode:
        """The status set so far (OK until a handler sets or aborts with another)."""
        return self._code or grpc.StatusCode.OK

    def set_details(self, details: str) -> None:
        self._details = details or ""

    def details(self) -> str:
        return self._details

    def set_trailing_metadata(self, trailing_metadata: _MetadataLike) -> None:
        self._trailing = grpc.aio.Metadata(*trailing_metadata)

    def trailing_metadata(self) -> grpc.aio.Metadata:
        return self._trailing

    async def send_initial_metadata(self, initial_metadata: _MetadataLike) -> None:
        for key, value in initial_metadata:
            text = base64.b64encode(value).decode() if isinstance(value, bytes) else value
            self._request.response_headers.add(key, text)

    def peer(self) -> str:
        """``ipv4:host:port`` of the HTTP client, as gRPC names peers (``unknown`` if the server did not say)."""
        address = self._request.client_address
        return f"ipv4:{address}" if address else "unknown"

    def time_remaining(self) -> float:
        """Seconds before the call's deadline; infinity without one."""
        remaining = self._request.timeout_ms
        return math.inf if remaining is None else max(remaining / 1000, 0.0)

    def peer_identities(self) -> None:
        return None

    def peer_identity_key(self) -> None:
        return None

    def auth_context(self) -> dict[str, Iterable[bytes]]:
        return {}

    def set_compression(self, compression: grpc.Compression) -> None:
        """The HTTP server negotiates compression itself."""

    def disable_next_message_compression(self) -> None:
        """The HTTP server negotiates compression itself."""

    async def read(self) -> NoReturn:
        raise NotImplementedError("handlers over HTTP take their request as an argument")

    async def write(self, message: Any) -> NoReturn:
        raise NotImplementedError("handlers over HTTP yield their responses")

    def add_callback(self, callback: Callable[[], None]) -> bool:
        return False

    def cancel(self) -> bool:
        return False

    def is_active(self) -> bool:
        return True

    def done(self) -> bool:
        return False

    def cancelled(self) -> bool:
        return False


def _unanswered(context: WebServicerContext) -> ConnectError:
    """A handler that returned without an answer: the status it set, as gRPC would report it."""
    code = context.code()
    code = grpc.StatusCode.UNKNOWN if code is grpc.StatusCode.OK else code
    return ConnectError(_status_code(code), context.details() or "the handler returned no response")


class _Methods:
    """Every method of the registered services, each run through the interceptors."""

    def __init__(
        self,
        registrations: Sequence[Registration],
        interceptors: Sequence[grpc.aio.ServerInterceptor],
        stopping: asyncio.Event,
    ) -> None:
        collector = _Collector()
        for add, servicer in registrations:
            add(servicer, collector)
        self._handlers = collector.handlers
        self._interceptors = tuple(interceptors)
        self._stopping = stopping

    async def _handler(self, path: str, context: WebServicerContext) -> Any:
        async def handler_of(details: grpc.HandlerCallDetails) -> Any:
            return self._handlers.get(details.method)

        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Any]] = handler_of
        for interceptor in reversed(self._interceptors):
            continuation = _chained(interceptor, continuation)
        handler = await continuation(_CallDetails(path, tuple(context.invocation_metadata())))
        if handler is None:
            raise ConnectError(Code.UNIMPLEMENTED, f"no method {path}")
        return handler

    def unary(self, path: str) -> Callable[[Any, RequestContext[Any, Any]], Awaitable[Any]]:
        async def call(request: Any, request_context: RequestContext[Any, Any]) -> Any:
            context = WebServicerContext(request_context)
            handler = await self._handler(path, context)
            response = await handler.unary_unary(request, context)
            if response is None:
                raise _unanswered(context)
            if isinstance(response, Encoded):  # the HTTP side's codecs encode messages
                return response.message()
            return response

        return call

    def server_stream(self, path: str) -> Callable[[Any, RequestContext[Any, Any]], AsyncIterator[Any]]:
        async def call(request: Any, request_context: RequestContext[Any, Any]) -> AsyncIterator[Any]:
            context = WebServicerContext(request_context)
            handler = await self._handler(path, context)
            task = asyncio.current_task()
            stopped = False

            def stop(waited: asyncio.Future[Any]) -> None:
                nonlocal stopped
                if not waited.cancelled() and task is not None:
                    stopped = True
                    task.cancel()

            # The server is going away: end the stream as gRPC does (UNAVAILABLE), so the client resumes elsewhere.
            waiter = asyncio.ensure_future(self._stopping.wait())
            waiter.add_done_callback(stop)
            try:
                async for message in handler.unary_stream(request, context):
                    yield message
            except asyncio.CancelledError:
                if not stopped or task is None:
                    raise
                task.uncancel()
                raise ConnectError(Code.UNAVAILABLE, "the server is shutting down; resume elsewhere") from None
            finally:
                waiter.cancel()

        return call


def _chained(
    interceptor: grpc.aio.ServerInterceptor, continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Any]]
) -> Callable[[grpc.HandlerCallDetails], Awaitable[Any]]:
    async def intercepted(details: grpc.HandlerCallDetails) -> Any:
        return await interceptor.intercept_service(continuation, details)

    return intercepted


def method_info(method: descriptor.MethodDescriptor) -> MethodInfo[Any, Any]:
    """What the Connect library needs to know of a method, from its descriptor (and its idempotency option)."""
    return MethodInfo(
        name=method.name,
        service_name=method.containing_service.full_name,
        input=message_factory.GetMessageClass(method.input_type),
        output=message_factory.GetMessageClass(method.output_type),
        idempotency_level=_IDEMPOTENCY.get(method.GetOptions().idempotency_level, IdempotencyLevel.UNKNOWN),
        stream_type=StreamType.SERVER_STREAM if method.server_streaming else StreamType.UNARY,
    )


class _ConnectApplication(ConnectASGIApplication[_Methods]):
    @property
    def path(self) -> str:
        return "/"


def connect_application(
    registrations: Sequence[Registration],
    services: Sequence[descriptor.ServiceDescriptor],
    interceptors: Sequence[grpc.aio.ServerInterceptor],
    stopping: asyncio.Event,
    *,
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
) -> Callable[..., Awaitable[None]]:
    """An ASGI application serving ``services`` over gRPC-Web and Connect.

    ``registrations`` are the servicers and their generated ``add_*_to_server`` functions,
    ``interceptors`` the gRPC server's. Once ``stopping`` is set, open streams end with
    UNAVAILABLE (clients resume elsewhere). Requests are decoded and limited to
    ``max_request_bytes`` as on the gRPC side (:mod:`dizhu.web.codecs`), and never
    decompressed past it (:mod:`dizhu.web.encodings`).
    """
    methods = _Methods(registrations, interceptors, stopping)

    def endpoints(methods: _Methods) -> dict[str, Any]:
        table: dict[str, Any] = {}
        for service in services:
            for method in service.methods:
                path = f"/{service.full_name}/{method.name}"
                info = method_info(method)
                if method.client_streaming:
                    continue  # no browser protocol over HTTP/1.1 streams requests; the contract has none
                if method.server_streaming:
                    table[path] = Endpoint.server_stream(info, methods.server_stream(path))
                else:
                    table[path] = Endpoint.unary(info, methods.unary(path))
        return table

    application = _ConnectApplication(
        service=methods,
        endpoints=endpoints,
        codecs=request_codecs(max_request_bytes),
        compressions=request_compressions(max_request_bytes),
        read_max_bytes=transport_cap(max_request_bytes),
    )
    return announced_compression_only(application)
