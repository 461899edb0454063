"""The TLS flags (docs/security.md#tls): one certificate pair that both ports serve."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from dizhu.config.flag_values import usage_error

__all__ = ["add_tls_arguments", "tls_files"]


def add_tls_arguments(parser: argparse.ArgumentParser) -> None:
    tls = parser.add_argument_group("TLS (docs/security.md#tls)")
    tls.add_argument(
        "--tls-cert",
        metavar="FILE",
        type=Path,
        default=os.environ.get("DIZHU_TLS_CERT") or None,
        help="serve both ports over TLS with this certificate chain (PEM), read again when it changes; "
        "needs --tls-key (env DIZHU_TLS_CERT; default: none, plaintext)",
    )
    tls.add_argument(
        "--tls-key",
        metavar="FILE",
        type=Path,
        default=os.environ.get("DIZHU_TLS_KEY") or None,
        help="the private key (PEM) of --tls-cert (env DIZHU_TLS_KEY; default: none)",
    )


def tls_files(args: argparse.Namespace) -> tuple[Path | None, Path | None]:
    cert, key = args.tls_cert, args.tls_key
    if (cert is None) != (key is None):
        raise usage_error("--tls-cert and --tls-key go together (or $DIZHU_TLS_CERT and $DIZHU_TLS_KEY)")
    return cert, key
