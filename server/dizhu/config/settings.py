"""A referee process's settings: what it serves, where, with which limits (docs/security.md).

One frozen :class:`ServerConfig`, read by the composition root (:mod:`dizhu.process`) and the
gRPC side; :mod:`dizhu.config.flags` fills it from command-line flags and the environment.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from pathlib import Path

__all__ = ["MIN_SECRET_CHARS", "REDIS_URL_EXPECTED", "ServerConfig", "is_redis_url", "listens_on_loopback"]

#: The shortest server secret accepted (characters; 64 hex digits are recommended).
MIN_SECRET_CHARS = 32

#: The URL forms redis-py connects to, "//" included: from redis-py 8.2 on, ``unix:/path`` is refused.
_REDIS_URL_PREFIXES = ("redis://", "rediss://", "unix://")
#: What a refused Redis URL is told it should be.
REDIS_URL_EXPECTED = "a redis://, rediss:// or unix:// URL"


def is_redis_url(url: str) -> bool:
    """Whether redis-py takes ``url`` (its scheme only: a URL naming no server fails on connecting)."""
    return url.lower().startswith(_REDIS_URL_PREFIXES)


def listens_on_loopback(address: str) -> bool:
    """Whether ``host:port`` (or ``unix:...``) accepts connections from this machine only."""
    if address.startswith("unix:"):
        return True
    host = address.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclasses.dataclass(frozen=True, slots=True)
class ServerConfig:
    #: Where to listen, ``host:port``; port 0 picks a free one.
    address: str = "127.0.0.1:50051"
    #: A unix socket to listen on as well (one process only): how a confined tournament entrant,
    #: which has no network, reaches the referee (docs/tournaments.md, "Confinement"). None: none.
    unix_socket: Path | None = None
    #: An external Redis; None starts an embedded redis-server keeping its data in ``data_dir``.
    redis_url: str | None = None
    data_dir: Path = Path("var/redis")
    #: ``json`` (one JSON object per line) or ``console`` (for people).
    log_format: str = "json"
    log_level: str = "info"
    #: Worker processes sharing the port (SO_REUSEPORT).
    workers: int = 1
    #: Seconds in-flight calls get to finish on SIGTERM.
    grace_s: float = 10.0
    #: How long a closed table's keys are kept.
    finished_ttl_s: int = 7 * 24 * 3600
    #: How long a request id's answer is kept for retries.
    answer_ttl_s: int = 24 * 3600
    #: Events kept per table before the oldest are trimmed.
    events_maxlen: int = 10_000
    #: API keys CreateTable requires; empty: anyone may create tables.
    api_keys: tuple[str, ...] = ()
    #: Port for Prometheus metrics (/metrics); 0 disables them.
    metrics_port: int = 0
    #: Redis key prefix.
    key_prefix: str = "dizhu"
    #: Seconds of silence after which an event stream carries a heartbeat.
    heartbeat_s: float = 20.0
    #: Events a stream may have waiting to be sent; one given more starts again from a snapshot.
    stream_backlog: int = 1000
    #: How often the turn clock looks for tables whose time ran out.
    clock_interval_s: float = 0.1
    #: Tables one process may stream at once (all are followed on one Redis connection).
    max_watched_tables: int = 10_000
    #: Seconds an external Redis that does not answer at start is retried (with backoff) before giving up.
    redis_wait_s: float = 30.0
    #: Where to serve browsers, ``host:port`` (gRPC-Web, Connect, the web table); empty: no HTTP.
    http_address: str = ""
    #: Origins whose pages may call the HTTP port (CORS); ``*`` for any; empty: same origin only.
    cors_origins: tuple[str, ...] = ()
    #: Bundled bots the web table may start in this process at once (0: none).
    web_bots: int = 32
    #: The HTTP port's connections (docs/security.md): seconds a request's line and headers may
    #: take from their first byte, seconds its body may take after them, seconds a connection may
    #: sit without a request (before its first, between two), and how many may be open at once
    #: (None: half the process's open-file limit, so that the gRPC port always has descriptors).
    http_header_timeout_s: float = 10.0
    http_body_timeout_s: float = 30.0
    http_idle_timeout_s: float = 60.0
    http_max_connections: int | None = None
    #: The certificate (chain) and private key both ports serve, PEM; None: plaintext.
    tls_cert: Path | None = None
    tls_key: Path | None = None
    #: Seconds a seat counts as connected after its last call made with its token.
    presence_window_s: float = 30.0
    #: Seconds a seat's open stream keeps it connected after its process last renewed it.
    presence_lease_s: float = 15.0
    # -- Safety (docs/security.md) ------------------------------------------------------------
    #: Secrets tokens are derived from: the first mints, the others (retired) still re-mint
    #: the tokens of recorded answers. Empty: one made up per run (and shared by its workers).
    secrets: tuple[str, ...] = dataclasses.field(default=(), repr=False)
    #: The Ed25519 key (PEM) that signs round records, and the public keys (PEM) of retired
    #: ones (docs/replay.md, "Signatures"). Empty: one made up per run (and shared by its workers).
    signing_key: bytes = dataclasses.field(default=b"", repr=False)
    retired_signing_keys: bytes = b""
    #: Per-client limits: "auto" (only when listening beyond loopback), "on" or "off".
    limits: str = "auto"
    #: Let anyone create tables without an API key although the server listens beyond loopback.
    allow_anonymous_create: bool = False
    #: The largest request accepted, in bytes.
    max_request_bytes: int = 64 * 1024
    #: Calls per second per client (bursts of twice as many).
    rate_limit: float = 200.0
    #: CreateTable calls per minute per client (bursts of a third as many).
    create_rate_limit: float = 30.0
    #: Open tables per client.
    max_open_tables: int = 100
    #: Open WatchTable streams per process, per connection, per client.
    max_streams: int = 2000
    max_streams_per_connection: int = 100
    max_streams_per_client: int = 200
    #: Recorded answers kept per table (the latest).
    answers_per_table: int = 1000
    #: Replays kept per table (the latest rounds').
    replays_per_table: int = 256
    #: Seconds without a client's action after which a table is closed as abandoned; 0: never.
    idle_close_s: float = 6 * 3600.0
    #: Rounds in a row played by the clock alone after which a table is closed; 0: never.
    unattended_rounds: int = 5
    #: Fraction of Redis' maxmemory kept for running tables: CreateTable is refused beyond the rest.
    memory_reserve: float = 0.10
    # -- Scale-out (docs/scaling.md, docs/store.md) ------------------------------------------
    #: ``redis_url`` names a node of a Redis Cluster, or several, comma-separated (the client finds the others).
    redis_cluster: bool = False
    #: When a change is acknowledged: once on the primary (``primary``), or on a replica too (``replica``).
    durability: str = "primary"
    #: With ``durability = "replica"``: how long a change waits for a replica before the call fails UNAVAILABLE.
    replica_timeout_s: float = 1.0
    #: Seconds after which a client's connection is closed (gracefully) so that it reconnects,
    #: maybe to another process: the kernel and load balancers spread connections, not calls.
    max_connection_age_s: float = 300.0

    @property
    def store_replicas(self) -> int:
        """How many replicas must hold a change before it is acknowledged (``durability``)."""
        return 1 if self.durability == "replica" else 0

    @property
    def limits_enabled(self) -> bool:
        """Whether the per-client limits apply (see ``limits``)."""
        return self.limits == "on" or (self.limits == "auto" and not listens_on_loopback(self.address))

    @property
    def anonymous_create(self) -> bool:
        """Whether CreateTable needs no API key (when the server has none configured)."""
        return self.allow_anonymous_create or listens_on_loopback(self.address)
