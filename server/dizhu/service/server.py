"""Building and running the gRPC server: services, health, reflection, graceful stop."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import os
import secrets
import signal
from collections.abc import AsyncIterator, Awaitable, Sequence
from typing import TYPE_CHECKING, Any

import grpc
import structlog
from grpc_health.v1 import _async as health_aio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from dizhu.config import ServerConfig, listens_on_loopback
from dizhu.embedded_redis import EmbeddedRedis
from dizhu.referee.tokens import TokenKeys
from dizhu.service.admission import Admission, AdmissionLimits
from dizhu.service.clock import run_clock
from dizhu.service.feeds import TableFeeds
from dizhu.service.gateway import Gateway, TablePolicy
from dizhu.service.metrics import MetricsInterceptor
from dizhu.service.presence import Presence, run_presence_sweeper
from dizhu.service.registration import MAX_CALLS_PER_CONNECTION, add_services, transport_cap
from dizhu.service.rules_servicer import RulesServicer
from dizhu.service.startup import StartupError, bind, start_metrics, wait_for_redis
from dizhu.service.table_servicer import TableServicer
from dizhu.service.tls import CertificateFiles
from dizhu.store import TableStore
from dizhu.store.connection import connect
from dizhu.v1 import rules_service_pb2, table_service_pb2

if TYPE_CHECKING:
    from dizhu.web import WebServer
    from dizhu.web.bridge import Registration

__all__ = ["Referee", "create_server", "run", "running_referee"]

_log = structlog.get_logger("dizhu.server")
_TABLE_SERVICE = table_service_pb2.DESCRIPTOR.services_by_name["TableService"]
_RULES_SERVICE = rules_service_pb2.DESCRIPTOR.services_by_name["RulesService"]
_SERVICES = (_TABLE_SERVICE.full_name, _RULES_SERVICE.full_name)
#: Calls gRPC core may hold before the event loop takes them (see create_server).
_PENDING_CALLS = 20_000
#: Allocations (net) between collections of the youngest generation (Python's default: 700).
_GC_YOUNG_THRESHOLD = 10_000
#: Redis connections for calls, per process (per node on a cluster).
_CALL_CONNECTIONS = 256


class Referee:
    """A running server and what it needs, stopped in the right order."""

    def __init__(
        self,
        server: grpc.aio.Server,
        port: int,
        health_servicer: health_aio.HealthServicer,
        feeds: TableFeeds,
        clock: Awaitable[object],
        clock_stopping: asyncio.Event,
        web: WebServer | None = None,
        presence: Presence | None = None,
    ) -> None:
        self.server = server
        self.port = port
        self.health = health_servicer
        self.feeds = feeds
        #: The HTTP side (gRPC-Web, Connect, the web table), when ``http_address`` is set.
        self.web = web
        self._presence = presence
        self._clock = clock
        self._clock_stopping = clock_stopping

    async def stop(self, grace_s: float) -> None:
        """Health NOT_SERVING first, then let in-flight calls finish within ``grace_s``.

        Open streams end with UNAVAILABLE after the grace period; their clients resume from
        their last sequence on another process.
        """
        await self.health.enter_graceful_shutdown()
        self._clock_stopping.set()
        await asyncio.gather(self._clock, return_exceptions=True)
        await asyncio.gather(self.server.stop(grace_s), *([self.web.stop()] if self.web is not None else []))
        if self._presence is not None:
            await self._presence.close()  # the streams' leases, released before Redis closes
        await self.feeds.close()


async def create_server(config: ServerConfig, store: TableStore) -> Referee:
    """A started server bound to ``config.address`` (port 0 picks one: see ``Referee.port``)."""
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
    admission = Admission(_admission_limits(config), config.api_keys)
    gateway = Gateway(
        store,
        keys=_token_keys(config),
        policy=_table_policy(config),
        presence_window_s=config.presence_window_s,
        presence_lease_s=config.presence_lease_s,
    )
    feeds = TableFeeds(store, heartbeat_s=config.heartbeat_s)
    table_servicer = TableServicer(
        gateway,
        store,
        feeds,
        admission=admission,
        api_keys=config.api_keys,
        anonymous_create=config.anonymous_create,
    )
    services = {_TABLE_SERVICE: table_servicer, _RULES_SERVICE: RulesServicer(admission)}

    def register(registered: object, target: Any) -> None:
        # The same registration serves gRPC and, collected again, the browsers' side.
        add_services(target, services, admission, max_request_bytes=config.max_request_bytes)

    registrations: tuple[Registration, ...] = ((register, services),)
    register(services, server)
    health_servicer = health_aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection((*_SERVICES, reflection.SERVICE_NAME, health.SERVICE_NAME), server)
    tls = CertificateFiles(config.tls_cert, config.tls_key) if config.tls_cert and config.tls_key else None
    port = bind(server, config.address, None if tls is None else tls.grpc_credentials())
    bots_target = _bots_target(config, server, port, tls) if config.http_address else ""
    await server.start()
    # Browsers are served before health says SERVING, so that a ready referee is ready on both ports.
    web = await _serve_browsers(config, registrations, interceptors, bots_target, tls) if config.http_address else None
    for name in ("", *_SERVICES):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    clock_stopping = asyncio.Event()
    clock = asyncio.create_task(
        run_clock(store, gateway, interval_s=config.clock_interval_s, stopping=clock_stopping), name="clock"
    )
    sweep_s = min(1.0, config.presence_lease_s / 4, config.presence_window_s / 4)
    sweeper = asyncio.create_task(
        run_presence_sweeper(gateway.presence, interval_s=sweep_s, stopping=clock_stopping), name="presence"
    )
    return Referee(
        server, port, health_servicer, feeds, asyncio.gather(clock, sweeper), clock_stopping, web, gateway.presence
    )


async def _serve_browsers(
    config: ServerConfig,
    registrations: Sequence[Registration],
    interceptors: Sequence[grpc.aio.ServerInterceptor],
    bots_target: str,
    tls: CertificateFiles | None,
) -> WebServer:
    """The HTTP side (gRPC-Web, Connect, the web table) from the same servicers and interceptors."""
    try:
        from dizhu.web import start_web_server
    except ImportError as error:
        raise SystemExit(f"--http-address needs the web extra: pip install 'dizhu[web]' ({error})") from None
    return await start_web_server(
        config.http_address,
        registrations=registrations,
        services=(_TABLE_SERVICE, _RULES_SERVICE),
        interceptors=interceptors,
        grpc_target=bots_target,
        cors_origins=config.cors_origins,
        max_bots=config.web_bots,
        reuse_port=config.workers > 1,
        grace_s=config.grace_s,
        max_request_bytes=config.max_request_bytes,
        ssl_context=None if tls is None else tls.http_context(),
    )


def _bots_target(config: ServerConfig, server: grpc.aio.Server, port: int, tls: CertificateFiles | None) -> str:
    """Where the web table's bots, gRPC clients in this process, reach it: the gRPC port in
    plaintext; with TLS, a loopback port of their own (they hold no authority to check ours)."""
    if tls is not None and config.web_bots:
        return f"127.0.0.1:{bind(server, '127.0.0.1:0')}"
    host = config.address.rpartition(":")[0]
    wildcard = host in ("", "0.0.0.0", "[::]", "::")  # noqa: S104 -- names, not a bind
    return f"{'127.0.0.1' if wildcard else host}:{port}"


def _admission_limits(config: ServerConfig) -> AdmissionLimits:
    return AdmissionLimits(
        enabled=config.limits_enabled,
        calls_per_s=config.rate_limit,
        calls_burst=max(1.0, 2 * config.rate_limit),
        creates_per_min=config.create_rate_limit,
        creates_burst=max(1.0, config.create_rate_limit / 3),
        max_open_tables=config.max_open_tables,
        max_streams_per_client=config.max_streams_per_client,
        max_streams_per_connection=config.max_streams_per_connection,
        max_streams=min(config.max_streams, config.max_watched_tables),
    )


def _table_policy(config: ServerConfig) -> TablePolicy:
    return TablePolicy(
        idle_close_ms=int(config.idle_close_s * 1000),
        unattended_rounds=config.unattended_rounds,
        replays_per_table=config.replays_per_table,
        create_memory_fraction=1.0 - config.memory_reserve,
        max_open_tables=config.max_open_tables,
    )


def _token_keys(config: ServerConfig) -> TokenKeys:
    if config.secrets:
        return TokenKeys([secret.encode() for secret in config.secrets])
    return TokenKeys.ephemeral()


def _warn_about_exposure(config: ServerConfig) -> None:
    """Say at start-up what an exposed server's configuration leaves open (docs/security.md)."""
    if listens_on_loopback(config.address):
        return
    if not config.secrets:
        _log.warning(
            "no_server_secret",
            detail="tokens are derived from a secret made up for this run: a CreateTable or JoinTable retried "
            "after a restart, or on another process, cannot be answered again. Set --secret-file.",
        )
    if not config.api_keys and not config.allow_anonymous_create:
        _log.warning(
            "no_table_creation",
            detail="listening beyond loopback without API keys: CreateTable is refused to everyone. "
            "Configure --api-key, or --allow-anonymous-create.",
        )
    if not config.limits_enabled:
        _log.warning("limits_off", detail="listening beyond loopback with --limits off: no rate limits or quotas")
    if config.tls_cert is None:
        # Not a warning: TLS is often ended by a proxy or mesh in front of this port.
        _log.info(
            "plaintext",
            detail="tokens and API keys travel unencrypted unless a proxy in front serves TLS "
            "(or --tls-cert and --tls-key)",
        )


@contextlib.asynccontextmanager
async def running_referee(config: ServerConfig) -> AsyncIterator[Referee]:
    """A referee with its store (an embedded Redis when ``config.redis_url`` is None)."""
    embedded: EmbeddedRedis | None = None
    url = config.redis_url
    if url is None:
        embedded = EmbeddedRedis(config.data_dir, appendonly=True)
        await embedded.astart()
        url = embedded.url
        _log.info("embedded_redis_started", url=url, data_dir=str(config.data_dir))
    # Calls wait for a free connection rather than fail when many run at once (on one server).
    redis = connect(url, cluster=config.redis_cluster, max_connections=_CALL_CONNECTIONS, wait_for_connection=True)
    try:
        await wait_for_redis(redis, url, config.redis_wait_s)
        store = TableStore(
            redis,
            prefix=config.key_prefix,
            finished_ttl_s=config.finished_ttl_s,
            answer_ttl_s=config.answer_ttl_s,
            events_maxlen=config.events_maxlen,
            answers_per_table=config.answers_per_table,
            replicas=config.store_replicas,
            replica_timeout_ms=max(1, int(config.replica_timeout_s * 1000)),
        )
        await store.load_scripts()
        if moved := await store.adopt_unsharded_indexes():
            _log.info("deadline_index_sharded", entries=moved)
        referee = await create_server(config, store)
        try:
            yield referee
        finally:
            await referee.stop(config.grace_s)
    finally:
        await redis.aclose()
        if embedded is not None:
            await embedded.astop()


async def run(config: ServerConfig, *, warn: bool = True) -> None:
    """Serve until SIGTERM or SIGINT, then stop gracefully (``warn``: about an exposed configuration)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    _check_certificate(config)
    if config.metrics_port:
        start_metrics(config.metrics_port)
    if warn:
        _warn_about_exposure(config)
    async with running_referee(config) as referee:
        # What start-up built (modules, stubs, the rules core's tables) lives as long as the
        # process: out of the collector's sight, and young objects collected less often (each
        # move allocates a few thousand, nearly all freed by reference counting).
        gc.freeze()
        gc.set_threshold(_GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
        _log.info(
            "serving",
            address=config.address,
            port=referee.port,
            http_port=referee.web.port if referee.web is not None else None,
            metrics_port=config.metrics_port or None,
        )
        await stop.wait()
        _log.info("stopping", grace_s=config.grace_s)
    _log.info("stopped")


def _check_certificate(config: ServerConfig) -> None:
    """Refuse to start, before anything else starts, with a certificate that cannot be served."""
    if config.tls_cert and config.tls_key:
        CertificateFiles(config.tls_cert, config.tls_key)


def _worker(config: ServerConfig) -> None:
    """One worker process: its own event loop and gRPC server on the shared port."""
    from dizhu.logs import configure_logging

    configure_logging(config.log_format, config.log_level)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent turns ^C into SIGTERM for everyone
    try:
        asyncio.run(run(config, warn=False))  # the parent warned
    except StartupError as error:
        raise SystemExit(f"dizhu serve: {error}") from None


def run_workers(config: ServerConfig) -> int:
    """Serve with ``config.workers`` processes sharing one port (SO_REUSEPORT).

    The parent starts the embedded Redis if needed, then spawns the workers (never forks:
    gRPC does not survive a fork) and forwards SIGTERM / SIGINT to them.
    """
    import multiprocessing

    _check_certificate(config)  # here, once, rather than in every worker
    embedded: EmbeddedRedis | None = None
    if config.redis_url is None:
        embedded = EmbeddedRedis(config.data_dir, appendonly=True).start()
        config = dataclasses.replace(config, redis_url=embedded.url)
        _log.info("embedded_redis_started", url=embedded.url, data_dir=str(config.data_dir))
    _warn_about_exposure(config)
    if not config.secrets:
        # Every worker must derive tokens from the same secret, or a retry landing on another
        # worker could not be answered: one made up here, for all of them.
        config = dataclasses.replace(config, secrets=(secrets.token_hex(32),))
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(
            target=_worker,
            args=(dataclasses.replace(config, metrics_port=config.metrics_port + n if config.metrics_port else 0),),
            name=f"dizhu-worker-{n}",
        )
        for n in range(config.workers)
    ]
    for worker in workers:
        worker.start()
    stopping = False

    def forward(signum: int, _: object) -> None:
        nonlocal stopping
        stopping = True
        for worker in workers:
            if worker.pid is not None and worker.is_alive():
                os.kill(worker.pid, signal.SIGTERM)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    _log.info("workers_started", workers=config.workers, address=config.address)
    for worker in workers:
        worker.join()
    if embedded is not None:
        embedded.stop()
    failed = [worker.name for worker in workers if worker.exitcode not in (0, -signal.SIGTERM)]
    if failed and not stopping:
        _log.error("workers_failed", workers=failed)
        return 1
    return 0
