"""The one place where refusals become gRPC statuses with ``google.rpc`` details (AIP-193).

Every refusal carries a ``google.rpc.ErrorInfo`` (reason, domain ``dizhu.v1``, metadata);
INVALID_ARGUMENT adds a ``BadRequest`` naming the fields, RESOURCE_EXHAUSTED a ``RetryInfo``
(and, for a quota, a ``QuotaFailure``). Anything unexpected becomes INTERNAL with a generic
message and an incident id; the details go to the log only, under that id.

Logs never carry a request id (the request id of CreateTable and JoinTable is a secret its
caller holds: docs/security.md): each call is logged under a ``call_id`` of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc
import structlog
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status
from redis.exceptions import OutOfMemoryError as RedisOutOfMemoryError
from redis.exceptions import ResponseError as RedisResponseError

from dizhu.referee.errors import (
    Internal,
    QuotaExceeded,
    RefereeError,
    ResourceExhausted,
    StoreFull,
    Unavailable,
)
from dizhu.store.connection import NotReplicated, is_unavailable
from dizhu.store.keys import validate_table_id

__all__ = [
    "DOMAIN",
    "ServicerContext",
    "abort",
    "guarded",
    "guarded_stream",
    "is_store_full",
    "is_store_trouble",
    "to_status",
]

DOMAIN = "dizhu.v1"
_log = structlog.get_logger("dizhu.service")

#: The context of any of our handlers (request and response types do not matter here).
ServicerContext = grpc.aio.ServicerContext[Any, Any]
Servicer = TypeVar("Servicer")
Request = TypeVar("Request")
Response = TypeVar("Response")


#: How long a caller should wait before retrying a change the full store refused.
_STORE_FULL_RETRY_MS = 1000


def _pack(message: Any) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed


def is_store_full(error: BaseException) -> bool:
    """Whether Redis refused a write for want of memory (``maxmemory`` with ``noeviction``).

    Redis 7 reports it as an ``OOM`` error (redis-py's ``OutOfMemoryError``, whose message
    lacks the ``OOM`` prefix); Redis 6.2 wraps it in a script error.
    """
    if isinstance(error, RedisOutOfMemoryError):
        return True
    return isinstance(error, RedisResponseError) and "OOM command not allowed" in str(error)


def is_store_trouble(error: BaseException) -> bool:
    """Whether ``error`` is the store's -- unreachable, failing over, full -- rather than a request's or a table's."""
    return is_unavailable(error) or is_store_full(error)


def to_status(error: RefereeError) -> grpc.Status:
    """``error`` as a gRPC status whose details hold ErrorInfo (and BadRequest)."""
    details = [_pack(error_details_pb2.ErrorInfo(reason=error.reason, domain=DOMAIN, metadata=error.metadata))]
    if isinstance(error, ResourceExhausted):
        retry = error_details_pb2.RetryInfo()
        retry.retry_delay.FromMilliseconds(error.retry_after_ms)
        details.append(_pack(retry))
    if isinstance(error, QuotaExceeded):
        # Every quota refusal names its limit (errors.proto): the violation's subject.
        violation = error_details_pb2.QuotaFailure.Violation(subject=error.metadata["limit"])
        violation.description = error.message
        details.append(_pack(error_details_pb2.QuotaFailure(violations=[violation])))
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


def _as_referee_error(error: Exception, call_id: str, request_id: str) -> RefereeError:
    if isinstance(error, RefereeError):
        return error
    if is_store_full(error):
        _log.warning("store_full")
        return StoreFull(
            "the table store is full; retry later with the same request_id", retry_after_ms=_STORE_FULL_RETRY_MS
        )
    if isinstance(error, NotReplicated):
        _log.warning("store_not_replicated", error=str(error))
        return Unavailable("the change is not yet on a replica of the table store; retry with the same request_id")
    if is_unavailable(error):
        _log.warning("store_unavailable", error=str(error) or type(error).__name__)
        return Unavailable("the table store is unavailable; retry with the same request_id")
    _log.exception("unexpected_error")
    metadata = {"incident_id": call_id, **({"request_id": request_id} if request_id else {})}
    return Internal(f"internal error (incident {call_id})", metadata=metadata)


async def abort(context: ServicerContext, error: RefereeError) -> None:
    """End the call with ``error``'s status (raises, as ``abort_with_status`` does)."""
    await context.abort_with_status(to_status(error))
    raise AssertionError("abort_with_status returned")


def _concerning(refusal: RefereeError, request: object) -> RefereeError:
    """``refusal`` naming the request's table in its metadata, as the contract promises whenever
    a table is concerned (a malformed table id concerns no table)."""
    table_id = getattr(request, "table_id", "")
    if table_id and "table_id" not in refusal.metadata:
        with contextlib.suppress(ValueError):
            refusal.metadata["table_id"] = validate_table_id(table_id)
    return refusal


def _call_id() -> str:
    """A call's id in the logs: 16 random hex digits (a fifth of a UUID's cost)."""
    return os.urandom(8).hex()


def guarded(
    handler: Callable[[Servicer, Request, ServicerContext], Awaitable[Response]],
) -> Callable[[Servicer, Request, ServicerContext], Awaitable[Response]]:
    """Wrap a unary handler: refusals abort with their status, nothing else escapes."""

    @functools.wraps(handler)
    async def wrapper(self: Servicer, request: Request, context: ServicerContext) -> Response:
        call_id = _call_id()
        bound = structlog.contextvars.bind_contextvars(
            method=handler.__name__, call_id=call_id, table_id=getattr(request, "table_id", None) or None
        )
        try:
            return await handler(self, request, context)
        except grpc.aio.AbortError:
            raise
        except Exception as error:
            refusal = _concerning(_as_referee_error(error, call_id, getattr(request, "request_id", "")), request)
            if not isinstance(refusal, Internal | Unavailable | StoreFull):
                _log.info("refused", reason=refusal.reason, message=refusal.message)
            await abort(context, refusal)
            raise AssertionError("abort returned") from None
        finally:
            structlog.contextvars.reset_contextvars(**bound)

    return wrapper


def guarded_stream(
    handler: Callable[[Servicer, Request, ServicerContext], AsyncIterator[Response]],
) -> Callable[[Servicer, Request, ServicerContext], AsyncIterator[Response]]:
    """Wrap a server-streaming handler like ``guarded`` wraps a unary one."""

    @functools.wraps(handler)
    async def wrapper(self: Servicer, request: Request, context: ServicerContext) -> AsyncIterator[Response]:
        call_id = _call_id()
        bound = structlog.contextvars.bind_contextvars(
            method=handler.__name__, call_id=call_id, table_id=getattr(request, "table_id", None) or None
        )
        try:
            async for message in handler(self, request, context):
                yield message
        except (grpc.aio.AbortError, asyncio.CancelledError):
            raise
        except Exception as error:
            await abort(context, _concerning(_as_referee_error(error, call_id, ""), request))
        finally:
            # A stream the client left may be finalised by the event loop from another task,
            # whose context never had these bindings: there is nothing to reset there.
            with contextlib.suppress(ValueError):
                structlog.contextvars.reset_contextvars(**bound)

    return wrapper
