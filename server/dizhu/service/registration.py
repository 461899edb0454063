"""Registering the services with gRPC so that every call is admitted and every request decodes.

The stubs' generated ``add_*Servicer_to_server`` let gRPC decode each request before any of our
code runs: bytes that are no valid message then fail the call with UNKNOWN and a Python class
name. The handlers registered here decode with a deserializer that never raises -- too many
bytes, or bytes that are no valid message (truncated, invalid UTF-8 in a string, nested too
deep), become a marker -- and each call then runs, in order:

1. admission (``dizhu.service.admission``): RATE_LIMITED when the client is over its rate --
   answered after a short pause (the retry delay, at most ``RATE_LIMITED_PAUSE_S``), which costs
   an idle coroutine and slows a client that ignores RetryInfo down to a few calls per second
   per connection, instead of letting it make the process refuse thousands a second;
2. the marker, if the request did not decode: INVALID_ARGUMENT with ErrorInfo and BadRequest,
   and nothing internal in the message;
3. for a stream, a stream slot (QUOTA_EXCEEDED when a cap is reached), held until it ends;
4. the servicer's handler.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Final

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor
from google.protobuf.message import Message

from dizhu.referee.errors import InvalidArgument, RateLimited, RefereeError
from dizhu.service.admission import Admission
from dizhu.service.errors import ServicerContext, abort

__all__ = [
    "DEFAULT_MAX_REQUEST_BYTES",
    "MAX_CALLS_PER_CONNECTION",
    "RATE_LIMITED_PAUSE_S",
    "Encoded",
    "Undecodable",
    "add_services",
    "decode_request",
    "too_large",
    "transport_cap",
]

#: The largest request accepted by default: a CreateTable with 1,024 preset seeds fits.
DEFAULT_MAX_REQUEST_BYTES: Final = 64 * 1024
#: The longest a RATE_LIMITED answer is held back.
RATE_LIMITED_PAUSE_S: Final = 0.1
#: How many calls one connection may have in flight (HTTP/2 streams): it bounds what paused
#: answers and open WatchTable streams can hold per connection.
MAX_CALLS_PER_CONNECTION: Final = 256
#: How far above the request limit the transport still delivers a request to the deserializer
#: (which refuses it with INVALID_ARGUMENT and details); larger ones the transport refuses itself.
_TRANSPORT_CAP_FACTOR: Final = 16


def transport_cap(max_request_bytes: int) -> int:
    """The largest request the transport reads (gRPC's and HTTP's): refused with RESOURCE_EXHAUSTED above."""
    return max(1 << 20, _TRANSPORT_CAP_FACTOR * max_request_bytes)


async def _refuse(context: ServicerContext, refusal: RefereeError) -> None:
    if isinstance(refusal, RateLimited):
        await asyncio.sleep(min(refusal.retry_after_ms / 1000, RATE_LIMITED_PAUSE_S))
    await abort(context, refusal)


@dataclasses.dataclass(frozen=True, slots=True)
class Undecodable:
    """What the deserializer returns instead of raising: why the bytes are no request."""

    description: str
    metadata: dict[str, str]

    def error(self) -> InvalidArgument:
        # The whole request is at fault: the field path is the request itself ("").
        return InvalidArgument("", self.description, metadata=self.metadata)


def too_large(size: int, max_bytes: int) -> Undecodable:
    """Why a request of ``size`` bytes (protobuf's binary form), more than ``max_bytes``, is refused."""
    return Undecodable(f"the request is {size} bytes; at most {max_bytes} are accepted", {"max_bytes": str(max_bytes)})


def decode_request(request_type: type[Message], data: bytes, max_bytes: int) -> Message | Undecodable:
    """The request ``data`` encodes (protobuf's binary form), or why it is none: never raises."""
    if len(data) > max_bytes:
        return too_large(len(data), max_bytes)
    try:
        return request_type.FromString(data)
    except Exception:  # whatever the parser objects to, the caller sent no valid message
        return Undecodable(
            f"the bytes are no valid {request_type.DESCRIPTOR.full_name} (protobuf wire format, UTF-8 strings)", {}
        )


@dataclasses.dataclass(frozen=True, slots=True)
class Encoded:
    """A response a handler returns already in protobuf's binary form: gRPC sends the bytes as
    they are, without a message built from them and serialised again (the largest answers)."""

    message_type: type[Message]
    data: bytes

    def message(self) -> Message:
        return self.message_type.FromString(self.data)


def _serializer(response_type: type[Message]) -> Callable[[Any], bytes]:
    serialize = response_type.SerializeToString

    def encode(response: Any) -> bytes:
        return response.data if type(response) is Encoded else serialize(response)

    return encode


def _deserializer(method: MethodDescriptor, max_bytes: int) -> Callable[[bytes], Message | Undecodable]:
    request_type: type[Message] = message_factory.GetMessageClass(method.input_type)
    return functools.partial(decode_request, request_type, max_bytes=max_bytes)


Unary = Callable[[Any, ServicerContext], Awaitable[Any]]
Streaming = Callable[[Any, ServicerContext], AsyncIterator[Any]]


def _unary(behaviour: Unary, admission: Admission, creates: bool) -> Unary:
    async def handle(request: Any, context: ServicerContext) -> Any:
        try:
            admission.admit(context, creates=creates)
            if isinstance(request, Undecodable):
                raise request.error()
        except RefereeError as refusal:
            await _refuse(context, refusal)
        return await behaviour(request, context)

    return handle


def _streaming(behaviour: Streaming, admission: Admission) -> Streaming:
    async def handle(request: Any, context: ServicerContext) -> AsyncIterator[Any]:
        try:
            admission.admit(context, creates=False)
            if isinstance(request, Undecodable):
                raise request.error()
            close = admission.open_stream(context)
        except RefereeError as refusal:
            await _refuse(context, refusal)
            return
        try:
            async for message in behaviour(request, context):
                yield message
        finally:
            close()

    return handle


def add_services(
    server: grpc.aio.Server,
    services: dict[ServiceDescriptor, object],
    admission: Admission,
    *,
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
) -> None:
    """Register each servicer under its service (see the module docstring)."""
    for service, servicer in services.items():
        handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
        for method in service.methods:
            serialize = _serializer(message_factory.GetMessageClass(method.output_type))
            behaviour = getattr(servicer, method.name)
            deserialize = _deserializer(method, max_request_bytes)
            if method.server_streaming:
                handlers[method.name] = grpc.unary_stream_rpc_method_handler(
                    _streaming(behaviour, admission),
                    request_deserializer=deserialize,
                    response_serializer=serialize,
                )
            else:
                handlers[method.name] = grpc.unary_unary_rpc_method_handler(
                    _unary(behaviour, admission, creates=method.name == "CreateTable"),
                    request_deserializer=deserialize,
                    response_serializer=serialize,
                )
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service.full_name, handlers),))
        server.add_registered_method_handlers(service.full_name, handlers)
