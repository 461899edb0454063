"""Prometheus metrics: calls by method and status, latency, open streams, clock timeouts and
failures, refusals by limit, tables closed as abandoned, failed rounds of the background loops.

Served on ``--metrics-port`` (``/metrics``); with several workers, worker n serves on
``metrics_port + n``.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from prometheus_client import Counter, Gauge, Histogram

__all__ = [
    "ABANDONED",
    "BACKGROUND_FAILURES",
    "CALLS",
    "CLOCK_FAILURES",
    "LATENCY",
    "OPEN_STREAMS",
    "QUARANTINED",
    "REFUSED_ADMISSIONS",
    "TIMEOUTS",
    "MetricsInterceptor",
]

CALLS = Counter("dizhu_rpc_calls_total", "RPCs handled, by method and status code", ["method", "code"])
LATENCY = Histogram(
    "dizhu_rpc_duration_seconds",
    "Time to answer a unary RPC, by method",
    ["method"],
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)
OPEN_STREAMS = Gauge("dizhu_open_streams", "WatchTable streams open in this process")
TIMEOUTS = Counter("dizhu_clock_timeouts_total", "Decisions the turn clock made for a seat")
CLOCK_FAILURES = Counter(
    "dizhu_clock_failures_total", "Times the turn clock could not apply a table's timeout (the table is quarantined)"
)
QUARANTINED = Gauge("dizhu_clock_quarantined_tables", "Tables whose timeout failed here, to be retried later")
REFUSED_ADMISSIONS = Counter(
    "dizhu_refused_admissions_total", "Calls refused by a rate limit or a stream cap, by limit", ["limit"]
)
ABANDONED = Counter("dizhu_tables_abandoned_total", "Tables closed because nobody acted at them any more")
BACKGROUND_FAILURES = Counter(
    "dizhu_background_failures_total",
    "Rounds of a background loop that failed (the store out of reach), by loop",
    ["loop"],
)


def _code(context: grpc.aio.ServicerContext[Any, Any]) -> str:
    code = context.code()
    return code.name if isinstance(code, grpc.StatusCode) else "OK"


class _Recorder:
    """One method's metrics, with the labelled children looked up once rather than per call."""

    def __init__(self, method: str) -> None:
        self.latency = LATENCY.labels(method)
        self._method = method
        self._calls: dict[str, Any] = {}

    def count(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        code = _code(context)
        counter = self._calls.get(code)
        if counter is None:
            counter = self._calls[code] = CALLS.labels(self._method, code)
        counter.inc()


class MetricsInterceptor(grpc.aio.ServerInterceptor):
    """Counts and times every call of the referee's services.

    The wrapped handler of each method is made once and reused for every call (gRPC hands
    over the same registered handler each time), so a call pays for its metrics only.
    """

    def __init__(self) -> None:
        self._wrapped: dict[str, tuple[Any, Any]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        # The aio handlers' behaviours are coroutines, which the (synchronous) stubs do not describe.
        handler: Any = await continuation(handler_call_details)
        if handler is None:
            return handler
        known = self._wrapped.get(handler_call_details.method)
        if known is not None and known[0] is handler:
            return known[1]  # type: ignore[no-any-return]
        wrapped = _wrap(handler, _Recorder(handler_call_details.method.rsplit("/", 1)[-1]))
        self._wrapped[handler_call_details.method] = (handler, wrapped)
        return wrapped  # type: ignore[no-any-return]


def _wrap(handler: Any, recorder: _Recorder) -> Any:
    if handler.unary_unary is not None:
        inner = handler.unary_unary

        async def unary(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            start = time.perf_counter()
            try:
                return await inner(request, context)
            finally:
                recorder.latency.observe(time.perf_counter() - start)
                recorder.count(context)

        return grpc.unary_unary_rpc_method_handler(
            unary, request_deserializer=handler.request_deserializer, response_serializer=handler.response_serializer
        )
    if handler.unary_stream is not None:
        stream_inner = handler.unary_stream

        async def stream(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
            OPEN_STREAMS.inc()
            try:
                async for message in stream_inner(request, context):
                    yield message
            finally:
                OPEN_STREAMS.dec()
                recorder.count(context)

        return grpc.unary_stream_rpc_method_handler(
            stream, request_deserializer=handler.request_deserializer, response_serializer=handler.response_serializer
        )
    return handler
