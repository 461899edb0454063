"""Who may call how often: rate limits per client, and caps on open streams.

A *client* is the API key a call carries (``x-api-key``, when it is one of the server's keys),
else the address it comes from (IPv4, or the /64 of an IPv6 address, whose owners hold
whole blocks). Limits are token buckets kept in this process -- no Redis round trip on any
call -- so with N referee processes behind one address a client gets up to N times the rate
(the kernel spreads connections, not calls, over the processes).

When limits apply (docs/security.md, "Defaults"): with ``limits="auto"`` (the default) only
when the server listens on an address other than loopback; ``"on"`` and ``"off"`` force it.
A server on loopback serves its own machine (tests, ``dizhu demo``, a tournament runner's
embedded referee) and must never throttle it. Stream caps per process and per connection
always apply: they protect the process itself.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import hashlib
import hmac
import ipaddress
import math
import time
from collections.abc import Callable, Collection
from typing import Any, Final

from dizhu.config import ServerConfig
from dizhu.referee.errors import QuotaExceeded, RateLimited
from dizhu.service.errors import ServicerContext
from dizhu.service.metrics import REFUSED_ADMISSIONS

__all__ = ["Admission", "AdmissionLimits", "RateLimiter", "client_of_peer"]

#: The declared settings, for limits made without a configuration.
_DEFAULTS: Final = ServerConfig()
#: Buckets kept per limiter; beyond that the oldest are forgotten (a forgotten client starts full).
_MAX_CLIENTS: Final = 100_000


def client_of_peer(peer: str) -> str:
    """A client name for a gRPC peer string (``ipv4:1.2.3.4:5678``, ``ipv6:[::1]:5678``, ``unix:...``).

    IPv6 addresses are grouped by their /64. Names use only ``[A-Za-z0-9._-]`` (they name Redis keys).
    """
    kind, _, rest = peer.partition(":")
    if kind == "ipv4":
        return "ip-" + rest.rsplit(":", 1)[0]
    if kind == "ipv6":
        host = rest.rsplit(":", 1)[0].strip("[]").split("%", 1)[0]
        try:
            network = ipaddress.ip_network(f"{host}/64", strict=False)
        except ValueError:
            return "ip6-unknown"
        return "ip6-" + network.network_address.exploded[:19].replace(":", ".")
    return "local"


class RateLimiter:
    """Token buckets by client: ``rate`` tokens per second, at most ``burst`` saved up."""

    def __init__(self, rate: float, burst: float, *, now: Callable[[], float] = time.monotonic) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("a rate limit needs a positive rate and a burst of at least 1")
        self.rate: Final = rate
        self.burst: Final = burst
        self._now = now
        #: client -> (tokens, when they were counted)
        self._buckets: dict[str, tuple[float, float]] = {}

    def _tokens(self, client: str, now: float) -> float:
        tokens, stamp = self._buckets.get(client, (self.burst, now))
        return min(self.burst, tokens + (now - stamp) * self.rate)

    def take(self, client: str) -> float:
        """Take one token for ``client``: 0.0 if there was one, else the seconds until there is."""
        now = self._now()
        tokens = self._tokens(client, now)
        if tokens >= 1:
            self._buckets[client] = (tokens - 1, now)
            if len(self._buckets) > _MAX_CLIENTS:
                del self._buckets[next(iter(self._buckets))]
            return 0.0
        self._buckets[client] = (tokens, now)
        return (1 - tokens) / self.rate

    def charge(self, client: str, tokens: float) -> None:
        """Take ``tokens`` more for work already done: the bucket may fall into debt, repaid by the refill."""
        now = self._now()
        self._buckets[client] = (self._tokens(client, now) - tokens, now)


@dataclasses.dataclass(frozen=True, slots=True)
class AdmissionLimits:
    """The limits of one referee process, made of its settings (:meth:`of`; docs/security.md)."""

    #: Whether the per-client limits apply (rates, open tables, streams per client).
    enabled: bool
    #: Calls per second per client, and the burst a client may save up.
    calls_per_s: float
    calls_burst: float
    #: CreateTable calls per minute per client, and their burst.
    creates_per_min: float
    creates_burst: float
    #: Open (not closed) tables per client.
    max_open_tables: int
    #: Open WatchTable streams per client (when enabled), per connection and per process (always).
    max_streams_per_client: int
    max_streams_per_connection: int
    max_streams: int

    @classmethod
    def of(cls, config: ServerConfig = _DEFAULTS) -> AdmissionLimits:
        """The limits ``config`` sets (the declared defaults unless given)."""
        return cls(
            enabled=config.limits_enabled,
            calls_per_s=config.rate_limit,
            calls_burst=max(1.0, 2 * config.rate_limit),
            creates_per_min=config.create_rate_limit,
            creates_burst=max(1.0, config.create_rate_limit / 3),
            max_open_tables=config.max_open_tables,
            max_streams_per_client=config.max_streams_per_client,
            max_streams_per_connection=config.max_streams_per_connection,
            # Every stream follows its table on the process's one notification connection.
            max_streams=min(config.max_streams, config.max_watched_tables),
        )


@dataclasses.dataclass(eq=False, slots=True)
class _StreamSlot:
    """One open stream's place under the caps: its connection, its client ("" when limits are
    off), and the task serving it (None outside a task: never taken back early)."""

    connection: str
    client: str
    task: asyncio.Task[Any] | None


class Admission:
    """Applies :class:`AdmissionLimits` to calls as they arrive (before their request is read).

    A stream holds its slot until it ends, or until its call is seen to end: when a cap is
    reached, the slots of streams whose task is done or cancelled (the client cancelled the
    call, or it ended) are taken back before refusing, although their handlers may still be
    letting go of what they hold (a seat's presence, their feed). gRPC cancels a stream's task
    as soon as the client's cancellation arrives, before any later call of that connection
    is admitted: a client that cancels a stream and opens another never finds its slot taken.
    """

    def __init__(self, limits: AdmissionLimits, api_keys: Collection[str] = ()) -> None:
        self.limits = limits
        self._calls = RateLimiter(limits.calls_per_s, limits.calls_burst)
        self._creates = RateLimiter(limits.creates_per_min / 60, limits.creates_burst)
        self._api_keys = {key.encode(): "key-" + hashlib.sha256(key.encode()).hexdigest()[:16] for key in api_keys}
        self._slots: set[_StreamSlot] = set()
        self._streams_by_connection: dict[str, int] = {}
        self._streams_by_client: dict[str, int] = {}

    @property
    def open_streams(self) -> int:
        return len(self._slots)

    def client(self, context: ServicerContext) -> str:
        """The client a call comes from: its API key's name, else its address's."""
        for key, value in context.invocation_metadata() or ():
            if key == "x-api-key":
                sent = value.encode() if isinstance(value, str) else value
                for known, name in self._api_keys.items():
                    if hmac.compare_digest(sent, known):
                        return name
        return client_of_peer(context.peer())

    def owner(self, context: ServicerContext) -> str:
        """Whom a new table counts against (its client), or "" when limits do not apply."""
        return self.client(context) if self.limits.enabled else ""

    def admit(self, context: ServicerContext, *, creates: bool) -> None:
        """RATE_LIMITED if the call's client is over its rate (of calls; of creations if ``creates``)."""
        if not self.limits.enabled:
            return
        client = self.client(context)
        wait_s = self._calls.take(client)
        limit = "calls_per_second"
        if not wait_s and creates:
            wait_s = self._creates.take(client)
            limit = "creates_per_minute"
        if wait_s:
            REFUSED_ADMISSIONS.labels(limit).inc()
            raise RateLimited(
                f"too many calls from this client ({limit}); retry later",
                retry_after_ms=max(1, math.ceil(wait_s * 1000)),
                metadata={"limit": limit},
            )

    def charge(self, context: ServicerContext, calls: float) -> None:
        """Count an expensive call as ``calls`` more calls of its client (when limits apply)."""
        if self.limits.enabled and calls > 0:
            self._calls.charge(self.client(context), calls)

    def open_stream(self, context: ServicerContext) -> Callable[[], None]:
        """Take one stream slot (QUOTA_EXCEEDED if a cap is reached); call what it returns to free it
        (once: later calls, and calls after the slot was taken back, do nothing)."""
        connection = context.peer()
        client = self.client(context) if self.limits.enabled else ""
        full = self._full(connection, client)
        if full is not None and self._take_back_ended():
            full = self._full(connection, client)
        if full is not None:
            limit, most = full
            REFUSED_ADMISSIONS.labels(limit).inc()
            raise QuotaExceeded(
                f"too many open streams ({limit}: at most {most}); close one or retry later",
                retry_after_ms=1000,
                metadata={"limit": limit, "max": str(most)},
            )
        slot = _StreamSlot(connection, client, _current_task())
        self._slots.add(slot)
        _count(self._streams_by_connection, connection, 1)
        if client:
            _count(self._streams_by_client, client, 1)
        return functools.partial(self._free, slot)

    def _full(self, connection: str, client: str) -> tuple[str, int] | None:
        """The cap (its name and value) a new stream of ``connection`` and ``client`` would exceed."""
        limits = self.limits
        if len(self._slots) >= limits.max_streams:
            return "streams_per_process", limits.max_streams
        if self._streams_by_connection.get(connection, 0) >= limits.max_streams_per_connection:
            return "streams_per_connection", limits.max_streams_per_connection
        if client and self._streams_by_client.get(client, 0) >= limits.max_streams_per_client:
            return "streams_per_client", limits.max_streams_per_client
        return None

    def _take_back_ended(self) -> bool:
        """Free the slots of streams whose task is done or cancelled; whether there were any.

        Only at a cap: a look at every open stream (at most ``max_streams``) instead of a refusal.
        """
        ended = [slot for slot in self._slots if slot.task is not None and (slot.task.done() or slot.task.cancelling())]
        for slot in ended:
            self._free(slot)
        return bool(ended)

    def _free(self, slot: _StreamSlot) -> None:
        if slot in self._slots:
            self._slots.discard(slot)
            _count(self._streams_by_connection, slot.connection, -1)
            if slot.client:
                _count(self._streams_by_client, slot.client, -1)


def _current_task() -> asyncio.Task[Any] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:  # no running loop
        return None


def _count(counts: dict[str, int], key: str, step: int) -> None:
    value = counts.get(key, 0) + step
    if value:
        counts[key] = value
    else:
        counts.pop(key, None)
