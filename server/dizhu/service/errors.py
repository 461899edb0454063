"""The one place where refusals become gRPC statuses with ``google.rpc`` details (AIP-193).

Every refusal carries a ``google.rpc.ErrorInfo`` (reason, domain ``dizhu.v1``, metadata);
INVALID_ARGUMENT adds a ``BadRequest`` naming the fields. Anything unexpected becomes
INTERNAL with a generic message and the request id; the details go to the log only.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc
import structlog
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from dizhu.referee.errors import Internal, RefereeError, Unavailable
from dizhu.store.keys import validate_table_id

__all__ = ["DOMAIN", "ServicerContext", "guarded", "guarded_stream", "to_status"]

DOMAIN = "dizhu.v1"
_log = structlog.get_logger("dizhu.service")

#: The context of any of our handlers (request and response types do not matter here).
ServicerContext = grpc.aio.ServicerContext[Any, Any]
Servicer = TypeVar("Servicer")
Request = TypeVar("Request")
Response = TypeVar("Response")


def _pack(message: error_details_pb2.ErrorInfo | error_details_pb2.BadRequest) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed


def to_status(error: RefereeError) -> grpc.Status:
    """``error`` as a gRPC status whose details hold ErrorInfo (and BadRequest)."""
    details = [_pack(error_details_pb2.ErrorInfo(reason=error.reason, domain=DOMAIN, metadata=error.metadata))]
    if error.violations:
        details.append(
            _pack(
                error_details_pb2.BadRequest(
                    field_violations=[
                        error_details_pb2.BadRequest.FieldViolation(field=field, description=description)
                        for field, description in error.violations
                    ]
                )
            )
        )
    status = status_pb2.Status(code=code_pb2.Code.Value(error.code), message=error.message, details=details)
    return rpc_status.to_status(status)


def _as_referee_error(error: Exception, request_id: str) -> RefereeError:
    if isinstance(error, RefereeError):
        return error
    if isinstance(error, RedisConnectionError | RedisTimeoutError | ConnectionError):
        _log.warning("store_unavailable", error=str(error), request_id=request_id)
        return Unavailable("the table store is unavailable; retry with the same request_id")
    _log.exception("unexpected_error", request_id=request_id)
    return Internal(f"internal error (request {request_id})", metadata={"request_id": request_id})


def _concerning(refusal: RefereeError, request: object) -> RefereeError:
    """``refusal`` naming the request's table in its metadata, as the contract promises whenever
    a table is concerned (a malformed table id concerns no table)."""
    table_id = getattr(request, "table_id", "")
    if table_id and "table_id" not in refusal.metadata:
        with contextlib.suppress(ValueError):
            refusal.metadata["table_id"] = validate_table_id(table_id)
    return refusal


def guarded(
    handler: Callable[[Servicer, Request, ServicerContext], Awaitable[Response]],
) -> Callable[[Servicer, Request, ServicerContext], Awaitable[Response]]:
    """Wrap a unary handler: refusals abort with their status, nothing else escapes."""

    @functools.wraps(handler)
    async def wrapper(self: Servicer, request: Request, context: ServicerContext) -> Response:
        request_id = getattr(request, "request_id", "") or uuid.uuid4().hex
        structlog.contextvars.bind_contextvars(
            method=handler.__name__, request_id=request_id, table_id=getattr(request, "table_id", None) or None
        )
        try:
            return await handler(self, request, context)
        except grpc.aio.AbortError:
            raise
        except Exception as error:
            refusal = _concerning(_as_referee_error(error, request_id), request)
            if not isinstance(refusal, Internal | Unavailable):
                _log.info("refused", reason=refusal.reason, message=refusal.message)
            await context.abort_with_status(to_status(refusal))
            raise AssertionError("abort_with_status returned") from None
        finally:
            structlog.contextvars.clear_contextvars()

    return wrapper


def guarded_stream(
    handler: Callable[[Servicer, Request, ServicerContext], AsyncIterator[Response]],
) -> Callable[[Servicer, Request, ServicerContext], AsyncIterator[Response]]:
    """Wrap a server-streaming handler like ``guarded`` wraps a unary one."""

    @functools.wraps(handler)
    async def wrapper(self: Servicer, request: Request, context: ServicerContext) -> AsyncIterator[Response]:
        request_id = uuid.uuid4().hex
        structlog.contextvars.bind_contextvars(
            method=handler.__name__, request_id=request_id, table_id=getattr(request, "table_id", None) or None
        )
        try:
            async for message in handler(self, request, context):
                yield message
        except (grpc.aio.AbortError, asyncio.CancelledError):
            raise
        except Exception as error:
            refusal = _concerning(_as_referee_error(error, request_id), request)
            await context.abort_with_status(to_status(refusal))
        finally:
            structlog.contextvars.clear_contextvars()

    return wrapper
