"""Helpers of the safety tests: referees with chosen limits, raw calls, and the details of refusals."""

from __future__ import annotations

import dataclasses
from typing import Any

import grpc
import pytest
import redis.asyncio
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from dizhu.config import ServerConfig
from dizhu.process import Referee, create_server
from dizhu.store import TableStore
from dizhu.v1 import rules_service_pb2_grpc, table_service_pb2_grpc
from tests.support.grpc_calls import DOMAIN, RulesStub, TableStub, error_info

_STORE_OPTIONS = ("finished_ttl_s", "answer_ttl_s", "events_maxlen", "answers_per_table")
#: Secrets for tests (at least 32 characters each).
SECRET_1 = "test-secret-one-0123456789abcdef0123456789"
SECRET_2 = "test-secret-two-0123456789abcdef0123456789"


@dataclasses.dataclass
class Server:
    """One running referee, its store, and stubs on a channel of its own."""

    referee: Referee
    store: TableStore
    tables: TableStub
    rules: RulesStub
    channel: grpc.aio.Channel

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.referee.port}"


class Servers:
    """Starts referees over one Redis; ``aclose`` stops them all."""

    def __init__(self, redis_url: str, client: redis.asyncio.Redis) -> None:
        self.redis_url = redis_url
        self.client = client
        self._servers: list[Server] = []
        self._channels: list[grpc.aio.Channel] = []
        self._clients: list[redis.asyncio.Redis] = []

    async def start(
        self, *, redis_url: str | None = None, store_options: dict[str, Any] | None = None, **config: Any
    ) -> Server:
        """A started referee; ``config`` overrides ``ServerConfig`` fields, ``store_options`` TableStore's."""
        client = self.client
        if redis_url is not None:
            client = redis.asyncio.Redis.from_url(redis_url)
            self._clients.append(client)
        # The store gets the limits the configuration names, as running_referee() gives them.
        defaults = ServerConfig()
        options = {name: config.get(name, getattr(defaults, name)) for name in _STORE_OPTIONS}
        store = TableStore(client, **{**options, **(store_options or {})})
        await store.load_scripts()
        config.setdefault("address", "127.0.0.1:0")
        referee = await create_server(ServerConfig(**config), store)
        channel = self.channel(f"127.0.0.1:{referee.port}")
        server = Server(
            referee,
            store,
            table_service_pb2_grpc.TableServiceStub(channel),
            rules_service_pb2_grpc.RulesServiceStub(channel),
            channel,
        )
        self._servers.append(server)
        return server

    def channel(self, target: str) -> grpc.aio.Channel:
        """Another connection (gRPC opens one per channel with its own options)."""
        opened = grpc.aio.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)])
        self._channels.append(opened)
        return opened

    async def aclose(self) -> None:
        for channel in self._channels:
            await channel.close()
        for server in self._servers:
            await server.referee.stop(0)
        for client in self._clients:
            await client.aclose()


def status_details(error: grpc.aio.AioRpcError) -> list[Any]:
    """The unpacked google.rpc details of a refusal (ErrorInfo, BadRequest, RetryInfo, QuotaFailure)."""
    status = rpc_status.from_call(error)
    assert status is not None, f"no google.rpc.Status in {error.code()}: {error.details()}"
    found = []
    for detail in status.details:
        for kind in (
            error_details_pb2.ErrorInfo,
            error_details_pb2.BadRequest,
            error_details_pb2.RetryInfo,
            error_details_pb2.QuotaFailure,
        ):
            message = kind()
            if detail.Is(message.DESCRIPTOR) and detail.Unpack(message):
                found.append(message)
    return found


def retry_delay_ms(error: grpc.aio.AioRpcError) -> int:
    """The RetryInfo delay of a refusal (fails the test if there is none)."""
    for detail in status_details(error):
        if isinstance(detail, error_details_pb2.RetryInfo):
            delay: int = detail.retry_delay.ToMilliseconds()
            return delay
    raise AssertionError(f"no RetryInfo in {error.code()}: {error.details()}")


async def exhausted(call: Any, reason: str) -> grpc.aio.AioRpcError:
    """Await ``call``: RESOURCE_EXHAUSTED with ``reason`` and a positive RetryInfo; the error."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    error = caught.value
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, f"{error.code()} {error.details()}"
    info = error_info(error)
    assert (info.reason, info.domain) == (reason, DOMAIN), info
    assert retry_delay_ms(error) > 0
    return error
