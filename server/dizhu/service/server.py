"""The gRPC side of one referee process: servicers, health, reflection, the clock and presence sweeps.

:func:`build_grpc_server` binds the port and wires the servicers to the store; the
composition root (:mod:`dizhu.process`) starts it, adds the HTTP side when asked, then
:meth:`GrpcReferee.start_serving` says SERVING and starts the background work.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
from grpc_health.v1 import _async as health_aio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from dizhu.config import ServerConfig
from dizhu.referee.signing import SigningKeys
from dizhu.referee.tokens import TokenKeys
from dizhu.service.admission import Admission, AdmissionLimits
from dizhu.service.clock import Clock, run_clock
from dizhu.service.feeds import TableFeeds
from dizhu.service.metrics import MetricsInterceptor
from dizhu.service.presence import run_presence_sweeper
from dizhu.service.registration import MAX_CALLS_PER_CONNECTION, add_services, transport_cap
from dizhu.service.rules_servicer import RulesServicer
from dizhu.service.startup import bind
from dizhu.service.table_servicer import TableServicer
from dizhu.service.tables import TableWork
from dizhu.service.tls import CertificateFiles
from dizhu.service.unit_of_work import TablePolicy
from dizhu.store import TableStore
from dizhu.v1 import rules_service_pb2, table_service_pb2

__all__ = ["SERVICES", "GrpcReferee", "build_grpc_server"]

_TABLE_SERVICE = table_service_pb2.DESCRIPTOR.services_by_name["TableService"]
_RULES_SERVICE = rules_service_pb2.DESCRIPTOR.services_by_name["RulesService"]
#: The services a referee serves, as the contract describes them.
SERVICES = (_TABLE_SERVICE, _RULES_SERVICE)
_SERVICE_NAMES = tuple(service.full_name for service in SERVICES)
#: Calls gRPC core may hold before the event loop takes them (see build_grpc_server).
_PENDING_CALLS = 20_000


class GrpcReferee:
    """The gRPC server of one process and what its calls share, stopped in the right order."""

    def __init__(
        self,
        config: ServerConfig,
        server: grpc.aio.Server,
        port: int,
        store: TableStore,
        tables: TableWork,
        feeds: TableFeeds,
        services: dict[Any, Any],
        admission: Admission,
        interceptors: list[grpc.aio.ServerInterceptor],
        tls: CertificateFiles | None,
        clock: Clock = time,
    ) -> None:
        self.config = config
        self.server = server
        self.port = port
        self.store = store
        #: The reads, changes and clock's work of this process's tables.
        self.tables = tables
        self._clock = clock
        self.feeds = feeds
        self.interceptors = interceptors
        #: The certificate pair both ports serve, when TLS is on.
        self.tls = tls
        self.health = health_aio.HealthServicer()
        self._services = services
        self._admission = admission
        self._background: Awaitable[object] | None = None
        self._stopping = asyncio.Event()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        reflection.enable_server_reflection((*_SERVICE_NAMES, reflection.SERVICE_NAME, health.SERVICE_NAME), server)

    def register(self, registered: object, target: Any) -> None:
        """Add the servicers to ``target`` (this gRPC server, or the HTTP side's collector of them)."""
        add_services(target, self._services, self._admission, max_request_bytes=self.config.max_request_bytes)

    async def start_serving(self) -> None:
        """Health SERVING for every service, then the turn clock and the presence sweeper."""
        for name in ("", *_SERVICE_NAMES):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        config = self.config
        clock = asyncio.create_task(
            run_clock(
                self.store,
                self.tables.janitor,
                interval_s=config.clock_interval_s,
                stopping=self._stopping,
                clock=self._clock,
            ),
            name="clock",
        )
        sweep_s = min(1.0, config.presence_lease_s / 4, config.presence_window_s / 4)
        sweeper = asyncio.create_task(
            run_presence_sweeper(self.tables.presence, interval_s=sweep_s, stopping=self._stopping),
            name="presence",
        )
        self._background = asyncio.gather(clock, sweeper)

    async def stop(self, grace_s: float, *alongside: Callable[[], Awaitable[None]]) -> None:
        """Health NOT_SERVING first, then let in-flight calls finish within ``grace_s``.

        ``alongside``: how to stop the other servers of the process (the HTTP side), stopped
        with this one.
        Open streams end with UNAVAILABLE after the grace period; their clients resume from
        their last sequence on another process.
        """
        await self.health.enter_graceful_shutdown()
        self._stopping.set()
        if self._background is not None:
            await asyncio.gather(self._background, return_exceptions=True)
        await asyncio.gather(self.server.stop(grace_s), *(stop() for stop in alongside))
        await self.tables.presence.close()  # the streams' leases, released before Redis closes
        await self.feeds.close()


def build_grpc_server(config: ServerConfig, store: TableStore, *, clock: Clock = time) -> GrpcReferee:
    """A server bound to ``config.address`` (port 0 picks one: see ``GrpcReferee.port``), not yet started.

    ``clock``: where every part of the process reads the time (the ``time`` module unless given).
    """
    options = [
        ("grpc.so_reuseport", 1 if config.workers > 1 else 0),
        # The kernel balances connections, not calls: recycle connections so clients rebalance.
        ("grpc.max_connection_age_ms", int(config.max_connection_age_s * 1000)),
        ("grpc.max_connection_age_grace_ms", 30 * 1000),
        # Requests up to this reach our deserializer, which refuses those over max_request_bytes
        # with INVALID_ARGUMENT and details; gRPC refuses larger ones itself (RESOURCE_EXHAUSTED).
        ("grpc.max_receive_message_length", transport_cap(config.max_request_bytes)),
        ("grpc.max_concurrent_streams", MAX_CALLS_PER_CONNECTION),
        # Calls wait in gRPC core until the event loop takes them; beyond 1,000 waiting (its
        # default), core ends new ones with CANCELLED before any of our code sees them: a burst
        # of stream openings did. Our own caps (admission) bound what is admitted.
        ("grpc.server.max_pending_requests", _PENDING_CALLS),
        ("grpc.server.max_pending_requests_hard_limit", 2 * _PENDING_CALLS),
    ]
    interceptors: list[grpc.aio.ServerInterceptor] = [MetricsInterceptor()]
    server = grpc.aio.server(options=options, interceptors=interceptors)
    admission = Admission(AdmissionLimits.of(config), config.api_keys)
    tables = TableWork.build(
        store,
        keys=_token_keys(config),
        signing=signing_keys(config),
        policy=TablePolicy.of(config),
        now=clock.time,
        cache_size=config.cached_tables,
        presence_window_s=config.presence_window_s,
        presence_lease_s=config.presence_lease_s,
    )
    feeds = TableFeeds(store, heartbeat_s=config.heartbeat_s, queue_limit=config.stream_backlog)
    table_servicer = TableServicer(
        tables.changes,
        tables.reads,
        store,
        feeds,
        admission=admission,
        api_keys=config.api_keys,
        anonymous_create=config.anonymous_create,
    )
    services = {_TABLE_SERVICE: table_servicer, _RULES_SERVICE: RulesServicer(admission)}
    tls = CertificateFiles(config.tls_cert, config.tls_key) if config.tls_cert and config.tls_key else None
    port = bind(server, config.address, None if tls is None else tls.grpc_credentials())
    if config.unix_socket is not None:  # beside the port, same services and credentials
        bind(server, f"unix:{config.unix_socket}", None if tls is None else tls.grpc_credentials())
    referee = GrpcReferee(
        config, server, port, store, tables, feeds, services, admission, interceptors, tls, clock=clock
    )
    # The same registration serves gRPC and, collected again, the browsers' side.
    referee.register(services, server)
    return referee


def _token_keys(config: ServerConfig) -> TokenKeys:
    if config.secrets:
        return TokenKeys([secret.encode() for secret in config.secrets])
    return TokenKeys.ephemeral()


def signing_keys(config: ServerConfig) -> SigningKeys:
    """The keys that sign round records (one made up for the run without ``signing_key``)."""
    if config.signing_key:
        return SigningKeys.from_pem(config.signing_key, config.retired_signing_keys)
    return SigningKeys.ephemeral()
