"""TLS on the referee's ports: one certificate and key, read at start and again once renewed.

Seat tokens, creator tokens and API keys are bearer secrets: across any network they must
travel encrypted. With ``--tls-cert`` and ``--tls-key`` the gRPC port and the HTTP port
(gRPC-Web, Connect, the web table) speak TLS only.

Certificates are renewed without a restart: every new connection looks at the files'
modification times (two ``stat`` calls), and a changed pair is read, checked (the key must
match the certificate) and served from then on. A renewal caught half-written, or broken,
is not served: the previous pair stays until the files hold a valid one again, and the
failure is logged once per change of the files. Connections already open keep the
certificate they began with.
"""

from __future__ import annotations

import dataclasses
import os
import ssl
import threading
from pathlib import Path

import grpc
import structlog

from dizhu.service.startup import StartupError

__all__ = ["CertificateFiles"]

_log = structlog.get_logger("dizhu.tls")

#: The files' inodes, modification times and sizes, as one comparable stamp (a file replaced
#: whole, as renewals do, has a new inode even within the clock tick of the old one's mtime).
_Stamp = tuple[int, int, int, int, int, int]


@dataclasses.dataclass(frozen=True, slots=True)
class _Pair:
    """A certificate chain and its key as read at ``stamp``, with a server context serving them."""

    stamp: _Stamp
    cert_pem: bytes
    key_pem: bytes
    context: ssl.SSLContext


class _InvalidPair(Exception):
    pass


def _stamp(cert: Path, key: Path) -> _Stamp | None:
    try:
        cert_stat, key_stat = os.stat(cert), os.stat(key)
    except OSError:
        return None
    return (
        cert_stat.st_ino,
        cert_stat.st_mtime_ns,
        cert_stat.st_size,
        key_stat.st_ino,
        key_stat.st_mtime_ns,
        key_stat.st_size,
    )


def _server_context() -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context


class CertificateFiles:
    """The certificate (chain, PEM) and private key (PEM) the referee serves, renewed in place."""

    def __init__(self, cert: Path, key: Path) -> None:
        self.cert = cert
        self.key = key
        self._lock = threading.Lock()  # gRPC asks from its own threads, the HTTP side from the loop
        stamp = _stamp(cert, key)
        if stamp is None:
            missing = cert if not cert.is_file() else key
            raise StartupError(f"cannot read {missing}: no such file (--tls-cert, --tls-key)")
        try:
            self._pair = self._read(stamp)
        except _InvalidPair as error:
            raise StartupError(str(error)) from None
        self._refused: _Stamp | None = None

    def _read(self, stamp: _Stamp) -> _Pair:
        context = _server_context()
        try:
            # Checks both and that they belong together, as every handshake would.
            context.load_cert_chain(self.cert, self.key)
            cert_pem, key_pem = self.cert.read_bytes(), self.key.read_bytes()
        except (OSError, ssl.SSLError) as error:
            reason = getattr(error, "reason", None) or error.strerror or str(error)
            raise _InvalidPair(
                f"cannot serve {self.cert} and {self.key} (a certificate chain and its private key, PEM): {reason}"
            ) from None
        return _Pair(stamp, cert_pem, key_pem, context)

    def current(self) -> _Pair:
        """The pair to serve now: the files' own if they changed and hold a valid pair, else the last one."""
        stamp = _stamp(self.cert, self.key)
        with self._lock:
            if stamp is None or stamp in (self._pair.stamp, self._refused):
                return self._pair
            try:
                pair = self._read(stamp)
            except _InvalidPair as error:
                self._refused = stamp
                _log.error("certificate_not_renewed", reason=str(error))
                return self._pair
            if _stamp(self.cert, self.key) != stamp:
                return self._pair  # changed while being read: read again at the next connection
            self._pair = pair
            _log.info("certificate_renewed", cert=str(self.cert))
            return pair

    def grpc_credentials(self) -> grpc.ServerCredentials:
        """Credentials for the gRPC port that serve the current pair to every new connection."""
        served = self._pair

        def configuration(pair: _Pair) -> grpc.ServerCertificateConfiguration:
            return grpc.ssl_server_certificate_configuration([(pair.key_pem, pair.cert_pem)])

        def fetch() -> grpc.ServerCertificateConfiguration | None:
            # Called by gRPC before each handshake; None keeps the configuration it has.
            nonlocal served
            pair = self.current()
            if pair is served:
                return None
            served = pair
            return configuration(pair)

        # gRPC documents None as "no change"; types-grpcio's stub does not say so.
        return grpc.dynamic_ssl_server_credentials(configuration(served), fetch)  # type: ignore[arg-type]

    def http_context(self) -> ssl.SSLContext:
        """An SSL context for the HTTP port that hands each new connection the current pair."""
        listening = self._pair.context

        def pick(connection: ssl.SSLObject, _server_name: str | None, _context: ssl.SSLContext) -> None:
            # Runs on every ClientHello, before the certificate is chosen.
            connection.context = self.current().context

        listening.sni_callback = pick
        return listening
