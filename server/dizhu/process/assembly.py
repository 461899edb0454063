"""A referee assembled from its parts: the store, the gRPC side and, when asked, the HTTP side."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import grpc
import structlog

from dizhu.config import ServerConfig
from dizhu.embedded_redis import EmbeddedRedis
from dizhu.service.clock import Clock
from dizhu.service.server import SERVICES, GrpcReferee, build_grpc_server
from dizhu.service.startup import StartupError, bind, wait_for_redis
from dizhu.store import TableStore
from dizhu.store.connection import connect

if TYPE_CHECKING:
    from grpc_health.v1 import _async as health_aio

    from dizhu.service.feeds import TableFeeds
    from dizhu.web import WebServer

__all__ = ["Referee", "create_server", "running_referee"]

_log = structlog.get_logger("dizhu.server")
#: Redis connections for calls, per process (per node on a cluster).
_CALL_CONNECTIONS = 256


class Referee:
    """A running referee: its gRPC side and, when ``http_address`` is set, its HTTP side."""

    def __init__(self, grpc_side: GrpcReferee, web: WebServer | None = None) -> None:
        self.grpc = grpc_side
        #: The HTTP side (gRPC-Web, Connect, the web table), when ``http_address`` is set.
        self.web = web

    @property
    def server(self) -> grpc.aio.Server:
        return self.grpc.server

    @property
    def port(self) -> int:
        """The gRPC port bound."""
        return self.grpc.port

    @property
    def health(self) -> health_aio.HealthServicer:
        return self.grpc.health

    @property
    def feeds(self) -> TableFeeds:
        return self.grpc.feeds

    async def stop(self, grace_s: float) -> None:
        """Both ports stop taking calls and let those in flight finish within ``grace_s``."""
        await self.grpc.stop(grace_s, *([self.web.stop] if self.web is not None else []))


async def create_server(config: ServerConfig, store: TableStore, *, clock: Clock = time) -> Referee:
    """A started referee bound to ``config.address`` (port 0 picks one: see ``Referee.port``).

    ``clock``: where every part of the process reads the time (the ``time`` module unless given)."""
    if config.http_address:
        _require_web_extra()  # before anything starts: nothing is left running when it is missing
    grpc_side = build_grpc_server(config, store, clock=clock)
    bots_target = _bots_target(config, grpc_side) if config.http_address else ""
    await grpc_side.server.start()
    # Browsers are served before health says SERVING, so that a ready referee is ready on both ports.
    try:
        web = await _serve_browsers(config, grpc_side, bots_target) if config.http_address else None
    except OSError as error:  # a taken port: the gRPC side stops too, then the referee says why
        await grpc_side.server.stop(None)
        raise StartupError(f"cannot serve HTTP on {config.http_address}: {error.strerror or error}") from None
    await grpc_side.start_serving()
    return Referee(grpc_side, web)


def _require_web_extra() -> None:
    """StartupError unless the HTTP side's packages (the ``web`` extra) can be imported."""
    try:
        import dizhu.web  # noqa: F401
    except ImportError as error:
        raise StartupError(f"--http-address needs the web extra: pip install 'dizhu[web]' ({error})") from None


async def _serve_browsers(config: ServerConfig, grpc_side: GrpcReferee, bots_target: str) -> WebServer:
    """The HTTP side (gRPC-Web, Connect, the web table) from the same servicers and interceptors."""
    from dizhu.web import ConnectionLimits, start_web_server

    tls = grpc_side.tls
    return await start_web_server(
        config.http_address,
        registrations=((grpc_side.register, None),),
        services=SERVICES,
        interceptors=grpc_side.interceptors,
        grpc_target=bots_target,
        cors_origins=config.cors_origins,
        max_bots=config.web_bots,
        reuse_port=config.workers > 1,
        grace_s=config.grace_s,
        max_request_bytes=config.max_request_bytes,
        ssl_context=None if tls is None else tls.http_context(),
        connection_limits=ConnectionLimits(
            header_timeout_s=config.http_header_timeout_s,
            body_timeout_s=config.http_body_timeout_s,
            idle_timeout_s=config.http_idle_timeout_s,
            max_connections=config.http_max_connections,
        ),
    )


def _bots_target(config: ServerConfig, grpc_side: GrpcReferee) -> str:
    """Where the web table's bots, gRPC clients in this process, reach it: the gRPC port in
    plaintext; with TLS, a loopback port of their own (they hold no authority to check ours)."""
    if grpc_side.tls is not None and config.web_bots:
        return f"127.0.0.1:{bind(grpc_side.server, '127.0.0.1:0')}"
    host = config.address.rpartition(":")[0]
    wildcard = host in ("", "0.0.0.0", "[::]", "::")  # noqa: S104 -- names, not a bind
    return f"{'127.0.0.1' if wildcard else host}:{grpc_side.port}"


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
        if moved := await store.indexes.adopt_unsharded_indexes():
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
