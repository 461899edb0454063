"""Reaching a referee: channels (plaintext or TLS), request ids, and how calls that may not
have reached it are retried (always the same request, so never applied twice).

The retry policy is a gRPC service config, ``retry_policy.json`` beside this module: the SDK,
the Node client (clients/node) and clients in other languages (docs/api.md § Retries) all read
that one file. Its ``retryableStatusCodes`` are the codes sent again with backoff; reasons of
the RETRYABLE category (errors.proto's ``facts``) are too, after their RetryInfo delay.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import uuid
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any, Final

import grpc

__all__ = [
    "CHANNEL_OPTIONS",
    "SERVICE_CONFIG",
    "STARTING_REFEREE_OPTIONS",
    "RetryPolicy",
    "new_request_id",
    "open_channel",
    "tls_credentials",
]

#: The gRPC service config every dizhu client retries by (``retry_policy.json``).
SERVICE_CONFIG: Final[Mapping[str, Any]] = json.loads(
    resources.files(__package__).joinpath("retry_policy.json").read_text(encoding="utf-8")
)
_METHOD_CONFIG: Final[Mapping[str, Any]] = SERVICE_CONFIG["methodConfig"][0]
_RETRY: Final[Mapping[str, Any]] = _METHOD_CONFIG["retryPolicy"]


def _seconds(duration: str) -> float:
    """A service config's duration ("0.05s") in seconds."""
    return float(duration.removesuffix("s"))


#: Options of the channels a client opens itself: after a lost connection, try again within
#: 0.2 s (gRPC's default first wait is 1 s, longer than a game can stall) and at most every 2 s.
CHANNEL_OPTIONS: Final[tuple[tuple[str, int], ...]] = (
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 2000),
)


#: Options of a channel that waits for a referee that is starting (a child process just run):
#: until it listens each connection is refused, and gRPC would try again after 1 s, 1.6 s, ...
#: (past the moment it serves); this one tries again every 20 to 100 ms.
STARTING_REFEREE_OPTIONS: Final[tuple[tuple[str, int], ...]] = (
    ("grpc.initial_reconnect_backoff_ms", 20),
    ("grpc.min_reconnect_backoff_ms", 20),
    ("grpc.max_reconnect_backoff_ms", 100),
)


def new_request_id() -> str:
    """A fresh idempotency key (a UUID4 in hex)."""
    return uuid.uuid4().hex


def tls_credentials(ca_file: str | os.PathLike[str] | None = None) -> grpc.ChannelCredentials:
    """Credentials for a referee that serves TLS (``dizhu serve --tls-cert``): its certificate is
    checked against the authority in ``ca_file`` (PEM), or against the system's when None."""
    roots = None if ca_file is None else Path(ca_file).read_bytes()
    return grpc.ssl_channel_credentials(root_certificates=roots)


def open_channel(target: str, credentials: grpc.ChannelCredentials | None = None) -> grpc.aio.Channel:
    """A channel to the referee at ``target`` with :data:`CHANNEL_OPTIONS`: over TLS with
    ``credentials`` (see :func:`tls_credentials`), else in plaintext."""
    if credentials is None:
        return grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS)
    return grpc.aio.secure_channel(target, credentials, options=CHANNEL_OPTIONS)


@dataclasses.dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How calls that may not have reached the referee are retried (always with the same request)."""

    #: Attempts in all, the first included; 1 disables retries.
    attempts: int = int(_RETRY["maxAttempts"])
    #: Delay before the first retry; it doubles (times ``multiplier``) up to ``max_delay_s``.
    initial_delay_s: float = _seconds(_RETRY["initialBackoff"])
    max_delay_s: float = _seconds(_RETRY["maxBackoff"])
    multiplier: float = float(_RETRY["backoffMultiplier"])
    #: Each delay is drawn uniformly from ``[delay * (1 - jitter), delay]``.
    jitter: float = 0.5
    #: The deadline of each attempt.
    timeout_s: float = _seconds(_METHOD_CONFIG["timeout"])

    def delays(self) -> Iterable[float]:
        """The waits before attempts 2, 3, ... (one fewer than ``attempts``)."""
        delay = self.initial_delay_s
        for _ in range(self.attempts - 1):
            yield delay * (1 - self.jitter * random.random())  # noqa: S311 -- jitter, not secrecy
            delay = min(delay * self.multiplier, self.max_delay_s)
