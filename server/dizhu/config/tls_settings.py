"""The TLS settings (docs/security.md#tls): one certificate pair that both ports serve."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import ClassVar

from dizhu.config.declaration import SettingsGroup, setting
from dizhu.config.flag_values import FILE, usage_error

__all__ = ["TlsSettings"]


@dataclasses.dataclass(frozen=True)
class TlsSettings(SettingsGroup):
    """The certificate (chain) and private key both ports serve, PEM; None: plaintext."""

    TITLE: ClassVar[str | None] = "TLS (docs/security.md#tls)"
    DOCS_HEADING: ClassVar[str] = "TLS ([security.md](security.md#tls))"

    tls_cert: Path | None = setting(
        None,
        "serve both ports over TLS with this certificate chain (PEM), read again when it changes; needs --tls-key",
        values=FILE,
        default_text="none, plaintext",
    )
    tls_key: Path | None = setting(None, "the private key (PEM) of --tls-cert", values=FILE, default_text="none")

    @staticmethod
    def check_arguments(args: argparse.Namespace) -> None:
        if (args.tls_cert is None) != (args.tls_key is None):
            raise usage_error("--tls-cert and --tls-key go together (or $DIZHU_TLS_CERT and $DIZHU_TLS_KEY)")
