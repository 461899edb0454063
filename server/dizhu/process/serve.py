"""``dizhu serve``: one process serving until SIGTERM / SIGINT, or several workers on one port."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import os
import secrets
import signal
import sys

import structlog

from dizhu import engine
from dizhu.config import ServerConfig, listens_on_loopback
from dizhu.embedded_redis import EmbeddedRedis
from dizhu.process.assembly import running_referee
from dizhu.referee.signing import new_private_key
from dizhu.service.startup import StartupError, start_metrics
from dizhu.service.tables import bound_process_caches
from dizhu.service.tls import CertificateFiles

__all__ = ["run", "run_workers"]

_log = structlog.get_logger("dizhu.server")
#: Allocations (net) between collections of the youngest generation (Python's default: 700).
_GC_YOUNG_THRESHOLD = 10_000


def _warn_about_exposure(config: ServerConfig) -> None:
    """Say at start-up what an exposed server's configuration leaves open (docs/security.md)."""
    if not config.signing_key:
        _log.warning(
            "no_signing_key",
            detail="round records are signed by a key made up for this run: after a restart nobody can check "
            "them against a published key. Set --signing-key (shared by every referee of the same tables).",
        )
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
    bound_process_caches(config.cached_tables)
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
            # Which rules engine checks every move (docs/engine.md): "native" unless it is not built.
            rules_engine=engine.backend(),
        )
        if referee.web is not None and warn:  # warn: the one process (each worker would say it again)
            sys.stdout.write(f"The web table: {_web_url(config, referee.web.port)}\n")
            sys.stdout.flush()
        await stop.wait()
        _log.info("stopping", grace_s=config.grace_s)
    _log.info("stopped")


def _web_url(config: ServerConfig, port: int) -> str:
    """Where a browser on this machine opens the web table."""
    host = config.http_address.rpartition(":")[0].strip("[]")
    if host in ("", "0.0.0.0", "::"):  # noqa: S104 -- names, not a bind
        host = "127.0.0.1"
    elif ":" in host:
        host = f"[{host}]"
    scheme = "https" if config.tls_cert else "http"
    return f"{scheme}://{host}:{port}/"


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
    if not config.signing_key:
        # The same for the signing key: every worker signs with the one made up here.
        config = dataclasses.replace(config, signing_key=new_private_key())
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
