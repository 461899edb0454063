"""The one way the tests start a ``dizhu serve`` referee of its own: a child process on a free port.

Every referee gets a fresh key prefix, so tests sharing a Redis never see each other's tables
or schedules; a test that stands for an organiser's referee requires an API key of it; a test
that needs a referee started otherwise (limits, TLS, a metrics port) passes those ``serve`` flags.
(In-process referees, the gRPC and live tests' ``in_process_referee`` and ``referees``, are started by
``dizhu.process.create_server`` in their conftests.)
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import grpc

from dizhu.testing import serve_process


@contextmanager
def served_referee(
    redis_url: str,
    key_prefix: str,
    *,
    api_key: str | None = None,
    flags: Sequence[str] = (),
    credentials: grpc.ChannelCredentials | None = None,
) -> Iterator[str]:
    """``"127.0.0.1:<port>"`` of a ``dizhu serve`` child over ``redis_url`` (stopped within a second).

    ``flags`` are further ``serve`` flags; ``credentials`` are what its health is asked with
    when they turn TLS on.
    """
    common = ["--key-prefix", f"{key_prefix}-{uuid.uuid4().hex[:8]}", "--log-level", "warning", "--grace", "1"]
    if api_key is not None:
        common += ["--api-key", api_key]
    with serve_process(redis_url, args=[*common, *flags], credentials=credentials) as process:
        yield process.target
