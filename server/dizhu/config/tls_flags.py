"""The TLS flags (docs/security.md#tls): one certificate pair that both ports serve."""

from __future__ import annotations

import argparse
from pathlib import Path

from dizhu.config.flag_values import add_env_flag, usage_error

__all__ = ["add_tls_arguments", "tls_files"]


def add_tls_arguments(parser: argparse.ArgumentParser) -> None:
    tls = parser.add_argument_group("TLS (docs/security.md#tls)")
    add_env_flag(
        tls,
        "--tls-cert",
        "DIZHU_TLS_CERT",
        metavar="FILE",
        type=Path,
        help="serve both ports over TLS with this certificate chain (PEM), read again when it changes; needs --tls-key",
        default_text="none, plaintext",
    )
    add_env_flag(
        tls,
        "--tls-key",
        "DIZHU_TLS_KEY",
        metavar="FILE",
        type=Path,
        help="the private key (PEM) of --tls-cert",
        default_text="none",
    )


def tls_files(args: argparse.Namespace) -> tuple[Path | None, Path | None]:
    cert, key = args.tls_cert, args.tls_key
    if (cert is None) != (key is None):
        raise usage_error("--tls-cert and --tls-key go together (or $DIZHU_TLS_CERT and $DIZHU_TLS_KEY)")
    return cert, key
