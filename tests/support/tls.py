"""Certificates for the TLS tests: an authority made up per test and the server certificate it
issues for ``localhost`` and ``127.0.0.1``, written as the files ``dizhu serve`` and clients read."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import grpc
import trustme

from dizhu.client import tls_credentials


@dataclasses.dataclass(frozen=True)
class ServerCertificate:
    """The files of one server certificate: ``--tls-cert``, ``--tls-key``, and its authority's."""

    cert: Path
    key: Path
    authority: Path

    @property
    def serve_flags(self) -> list[str]:
        return ["--tls-cert", str(self.cert), "--tls-key", str(self.key)]

    def credentials(self) -> grpc.ChannelCredentials:
        """A gRPC client's credentials that trust this certificate's authority."""
        return tls_credentials(self.authority)


def issue(folder: Path, authority: trustme.CA, name: str = "server") -> ServerCertificate:
    """Write a certificate of ``authority`` to ``folder``, replacing earlier files whole (as renewals do)."""
    issued = authority.issue_cert("localhost", "127.0.0.1")
    files = ServerCertificate(folder / f"{name}.pem", folder / f"{name}.key", folder / f"{name}-authority.pem")
    for path, pem in (
        (files.cert, issued.cert_chain_pems[0]),
        (files.key, issued.private_key_pem),
        (files.authority, authority.cert_pem),
    ):
        fresh = path.with_suffix(".new")
        pem.write_to_path(str(fresh))
        os.replace(fresh, path)
    return files
