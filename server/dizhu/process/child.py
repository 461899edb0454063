"""``dizhu serve`` as a child process: its command line, and a free port for it to listen on.

Apart from the rest of the root on purpose: who starts referees as processes (tests,
benchmarks, the tournament) imports neither the gRPC nor the HTTP side through it.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Sequence

__all__ = ["free_port", "serve_command"]


def free_port() -> int:
    """A TCP port of 127.0.0.1 that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def serve_command(address: str, redis_url: str, args: Sequence[str] = ()) -> list[str]:
    """The command line of a ``dizhu serve`` child process on ``address`` over ``redis_url``
    (this interpreter, so the child runs the same dizhu); ``args``: further ``serve`` flags."""
    return [sys.executable, "-m", "dizhu.cli", "serve", "--address", address, "--redis-url", redis_url, *args]
