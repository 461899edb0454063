"""A small Python client of the HTTP side (gRPC-Web or Connect), for tests and benchmarks.

Browsers use the generated TypeScript client (``web/``); Python programs should use gRPC
and :mod:`dizhu.client`. This one calls any method of the contract by name with the
generated messages, over the protocol chosen, with the same metadata a gRPC call carries::

    async with WebClient("http://127.0.0.1:8080") as web:
        view = await web.unary("TableService", "GetTable", GetTableRequest(table_id=t), token=seat_token)
        async for response in web.stream("TableService", "WatchTable", WatchTableRequest(table_id=t)):
            ...

Refusals raise ``connectrpc.errors.ConnectError`` with the code, message and details
(``google.rpc.ErrorInfo``, ...) the referee sent; :func:`error_info` reads the ErrorInfo.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any, Self

from connectrpc.client import ConnectClient
from connectrpc.compat import google_protobuf_binary_codec, google_protobuf_json_codec
from connectrpc.errors import ConnectError
from connectrpc.protocol import ProtocolType
from google.protobuf import descriptor
from google.protobuf.message import Message
from google.rpc import error_details_pb2

from dizhu.v1 import rules_service_pb2, table_service_pb2
from dizhu.web.bridge import method_info

__all__ = ["ProtocolType", "WebClient", "error_info"]

_SERVICES: dict[str, descriptor.ServiceDescriptor] = {
    "TableService": table_service_pb2.DESCRIPTOR.services_by_name["TableService"],
    "RulesService": rules_service_pb2.DESCRIPTOR.services_by_name["RulesService"],
}


def error_info(error: ConnectError) -> error_details_pb2.ErrorInfo:
    """The ``google.rpc.ErrorInfo`` of a refusal (every refusal of the referee has one)."""
    for detail in error.details:
        if detail.type_name == error_details_pb2.ErrorInfo.DESCRIPTOR.full_name:
            return error_details_pb2.ErrorInfo.FromString(detail.message_bytes)
    raise LookupError(f"no ErrorInfo in {error!r}")


class WebClient:
    """Calls the contract at ``base_url`` over ``protocol`` (gRPC-Web by default; Connect with JSON if ``json``)."""

    def __init__(
        self,
        base_url: str,
        *,
        protocol: ProtocolType = ProtocolType.GRPC_WEB,
        json: bool = False,
        timeout_s: float = 30,
    ) -> None:
        codec = google_protobuf_json_codec() if json else google_protobuf_binary_codec()
        self._client = ConnectClient(
            base_url.rstrip("/"),
            codec=codec,
            protocol=protocol,
            send_compression=None,
            timeout_ms=int(timeout_s * 1000),
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._client.close()

    @staticmethod
    def _headers(token: str | None, headers: dict[str, str] | None) -> dict[str, str]:
        sent = dict(headers or {})
        if token is not None:
            sent["authorization"] = f"Bearer {token}"
        return sent

    async def unary(
        self,
        service: str,
        method: str,
        request: Message,
        *,
        token: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Any:
        """Call a unary method (``"TableService"``, ``"Play"``) with the seat or creator ``token``, if any."""
        info = method_info(_SERVICES[service].methods_by_name[method])
        return await self._client.execute_unary(request=request, method=info, headers=self._headers(token, headers))

    def stream(
        self, service: str, method: str, request: Message, *, token: str | None = None, timeout_s: float | None = None
    ) -> AsyncIterator[Any]:
        """Call a server-streaming method; the responses as they come."""
        info = method_info(_SERVICES[service].methods_by_name[method])
        timeout_ms = None if timeout_s is None else int(timeout_s * 1000)
        return self._client.execute_server_stream(
            request=request, method=info, headers=self._headers(token, None), timeout_ms=timeout_ms
        )
