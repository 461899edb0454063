"""Running the HTTP side of a referee process: uvicorn in the referee's own event loop.

The HTTP server shares the process, the loop, the servicers and the Redis connections of
the gRPC server; several workers share its port as they share the gRPC one
(``SO_REUSEPORT``). Stopping it ends open streams with UNAVAILABLE first, then lets
requests in flight finish within the grace period.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import socket
import ssl
from collections.abc import Iterator, Sequence

import grpc
import uvicorn
from google.protobuf import descriptor

from dizhu.bots import BotHost
from dizhu.service.registration import DEFAULT_MAX_REQUEST_BYTES
from dizhu.web.app import web_application
from dizhu.web.bridge import Registration, connect_application
from dizhu.web.connections import ConnectionLimits, limited_protocol

__all__ = ["WebServer", "start_web_server"]

_DEFAULT_LIMITS = ConnectionLimits()


class _Uvicorn(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """The referee handles signals and stops this server itself."""
        yield


def _listen(address: str, *, reuse_port: bool) -> socket.socket:
    host, _, port = address.rpartition(":")
    host = host.strip("[]") or "0.0.0.0"  # noqa: S104 -- an empty host means every interface, as for gRPC
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named explicitly: asyncio sets TCP_NODELAY only on sockets that say so, and
    # without it every response written in parts waits out the client's delayed ACK (~40 ms).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, int(port)))
    sock.listen(1024)
    sock.setblocking(False)
    return sock


class WebServer:
    """The HTTP server of one referee process."""

    def __init__(self, server: _Uvicorn, sock: socket.socket, bots: BotHost | None, stopping: asyncio.Event) -> None:
        self._server = server
        self._socket = sock
        self.port: int = sock.getsockname()[1]
        self.bots = bots
        self._stopping = stopping
        self._task = asyncio.create_task(server.serve(sockets=[sock]), name="http")

    async def started(self) -> None:
        """Wait until the server accepts connections (raises if it failed to start)."""
        while not self._server.started:
            if self._task.done():
                await self._task
                raise RuntimeError("the HTTP server stopped before it started")
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        """End open streams (UNAVAILABLE), stop the bots, let requests finish, close the port."""
        self._stopping.set()
        if self.bots is not None:
            await self.bots.close()
        self._server.should_exit = True
        await asyncio.gather(self._task, return_exceptions=True)
        self._socket.close()


async def start_web_server(
    address: str,
    *,
    registrations: Sequence[Registration],
    services: Sequence[descriptor.ServiceDescriptor],
    interceptors: Sequence[grpc.aio.ServerInterceptor],
    grpc_target: str,
    cors_origins: Sequence[str] = (),
    max_bots: int = 0,
    reuse_port: bool = False,
    grace_s: float = 10.0,
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
    ssl_context: ssl.SSLContext | None = None,
    connection_limits: ConnectionLimits = _DEFAULT_LIMITS,
) -> WebServer:
    """Serve ``services`` (gRPC-Web, Connect), the web table and, if ``max_bots``, its bots on ``address``.

    ``grpc_target`` is where the bots reach the referee's gRPC port (in plaintext);
    ``max_request_bytes`` is the gRPC side's request limit, applied here alike; with
    ``ssl_context`` the port speaks HTTPS only; ``connection_limits`` bound how long and how
    many connections are held (:mod:`dizhu.web.connections`).
    """
    stopping = asyncio.Event()
    contract = connect_application(registrations, services, interceptors, stopping, max_request_bytes=max_request_bytes)
    bots = BotHost(grpc_target, limit=max_bots) if max_bots > 0 else None
    app = web_application(contract, [service.full_name for service in services], bots, cors_origins)
    config = uvicorn.Config(
        app,
        lifespan="off",
        log_config=None,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=max(math.ceil(grace_s), 1),
        http=limited_protocol(connection_limits),
        timeout_keep_alive=connection_limits.idle_timeout_s,  # type: ignore[arg-type]  # a float works
    )
    if ssl_context is not None:
        config.load()  # what serve() would do, then the context that renews certificates in place
        config.ssl = ssl_context
    web = WebServer(_Uvicorn(config), _listen(address, reuse_port=reuse_port), bots, stopping)
    await web.started()
    return web
