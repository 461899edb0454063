"""The runner's own referees: ``dizhu serve`` child processes on one Redis, for a tournament without ``targets``.

Each is a separate process (the bots and the referee do not share one event loop, and
two of them use both cores), bound to a free port of 127.0.0.1, serving the same tables
(same Redis, same key prefix). They are started with an API key of their own, drawn at
random per run, which the runner sends with every CreateTable -- nobody else can create
tables on them -- and with ``serve_args`` from the tournament file, the place to lift any
limit the referee would otherwise apply to its one client. Linux sends them SIGTERM if
the runner dies, so a killed runner leaves no referee behind. For a confined tournament
each listens on a unix socket too (:func:`referee_socket`), the one way its confined
entrants reach it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import secrets
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any, Final

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from dizhu.client.connection import STARTING_REFEREE_OPTIONS
from dizhu.process.child import free_port, serve_command
from dizhu.referee.signing import load_or_create_private_key

__all__ = ["embedded_referees", "referee_socket", "serve_arguments"]

_PR_SET_PDEATHSIG: Final = 1
_LIBC = ctypes.CDLL(None) if sys.platform == "linux" else None


def _terminate_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def referee_socket(folder: Path, target: str) -> Path:
    """The unix socket in ``folder`` of the embedded referee listening on ``target`` (``host:port``)."""
    return folder / f"referee-{target.rpartition(':')[2]}.sock"


def serve_arguments(
    address: str, redis_url: str, api_key: str, key_prefix: str, extra: Sequence[str], signing_key: Path
) -> list[str]:
    """The ``dizhu serve`` command line of one embedded referee."""
    return serve_command(address, redis_url, [
        f"--api-key={api_key}",  # a random key may begin with "-"
        "--key-prefix", key_prefix,
        # One key for all of them (they share the tables), kept with the tournament's Redis.
        "--signing-key", str(signing_key),
        "--log-level", "warning",
        "--grace", "1",
        # Its only client is this runner: no per-client limits (it listens on loopback, where
        # they are off by default anyway), and a faulty entrant's game is the runner's to end.
        "--limits", "off",
        "--unattended-rounds", "0",
        *extra,
    ])  # fmt: skip


async def _serving(target: str, process: subprocess.Popen[bytes], timeout_s: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    async with grpc.aio.insecure_channel(target, options=STARTING_REFEREE_OPTIONS) as channel:
        stub: Any = health_pb2_grpc.HealthStub(channel)
        while loop.time() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"the embedded referee exited with status {process.returncode}")
            with contextlib.suppress(grpc.aio.AioRpcError):
                reply = await stub.Check(health_pb2.HealthCheckRequest(), timeout=1)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            await asyncio.sleep(0.05)
    raise RuntimeError(f"the embedded referee did not serve on {target} within {timeout_s:g} s")


@contextlib.asynccontextmanager
async def embedded_referees(
    count: int,
    redis_url: str,
    *,
    key_prefix: str,
    signing_key: Path,
    extra_args: Sequence[str] = (),
    timeout_s: float = 30.0,
    unix_sockets: Path | None = None,
) -> AsyncIterator[tuple[list[str], str]]:
    """``count`` referees on ``redis_url``, signing with ``signing_key`` (made if absent);
    yields their targets and the API key they require. ``unix_sockets``: a folder where each
    listens on :func:`referee_socket` too."""
    api_key = secrets.token_urlsafe(24)
    load_or_create_private_key(signing_key)  # here, so that they do not all make one at once
    processes: list[subprocess.Popen[bytes]] = []
    try:
        targets = []
        for _ in range(count):
            target = f"127.0.0.1:{free_port()}"
            command = serve_arguments(target, redis_url, api_key, key_prefix, extra_args, signing_key)
            if unix_sockets is not None:
                command += ["--unix-socket", str(referee_socket(unix_sockets, target))]
            process = subprocess.Popen(  # noqa: S603 -- our own interpreter running our own command
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                preexec_fn=_terminate_with_parent,  # noqa: PLW1509 -- it only calls prctl
            )
            processes.append(process)
            targets.append(target)
        await asyncio.gather(*(_serving(t, p, timeout_s) for t, p in zip(targets, processes, strict=True)))
        yield targets, api_key
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                await asyncio.to_thread(process.wait, 15)
            except subprocess.TimeoutExpired:
                process.kill()
                await asyncio.to_thread(process.wait)
