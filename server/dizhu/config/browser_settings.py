"""The settings of browsers and presence (docs/front-ends.md): the HTTP port, its limits, the web table's bots."""

from __future__ import annotations

import argparse
import dataclasses
from typing import ClassVar

from dizhu.config.declaration import SettingsGroup, setting
from dizhu.config.flag_values import SECONDS, SOME, Values, at_least, host_port, usage_error

__all__ = ["BrowserSettings"]


def _http_address(text: str) -> str:
    return host_port(text) if text else text


@dataclasses.dataclass(frozen=True)
class BrowserSettings(SettingsGroup):
    """The HTTP port (gRPC-Web, Connect, the web table) and how long a seat counts as connected."""

    TITLE: ClassVar[str | None] = "browsers and presence (docs/front-ends.md)"
    DOCS_HEADING: ClassVar[str] = "Browsers and presence ([front-ends.md](front-ends.md))"

    http_address: str = setting(
        "",
        "where to serve browsers: gRPC-Web, Connect and the web table",
        values=Values("HOST:PORT", _http_address, "a host:port address (port 0..65535), or empty"),
        default_text="none, no HTTP port",
        docs="(needs `pip install 'dizhu[web]'`)",
    )
    #: ``*`` for any; empty: same origin only.
    cors_origins: tuple[str, ...] = setting(
        (),
        "an origin whose pages may call the HTTP port, or * for any",
        values=Values("URL", str, "an origin"),
        form="list",
        flag="--cors-origin",
        default_text="none, same origin only",
    )
    web_bots: int = setting(32, "bundled bots the web table may run in this process at once, 0 for none", values=SOME)
    #: The HTTP port's connections (docs/security.md).
    http_header_timeout_s: float = setting(
        10.0,
        "seconds a request's line and headers may take from their first byte on the HTTP port, else 408 and "
        "the connection closed",
        values=SECONDS,
    )
    http_body_timeout_s: float = setting(
        30.0,
        "seconds a request's body may take after its headers on the HTTP port, else 408 and the connection closed",
        values=SECONDS,
    )
    http_idle_timeout_s: float = setting(
        60.0,
        "seconds an HTTP connection may sit without a request (before its first, between two) before it is closed",
        values=SECONDS,
    )
    #: None: half the process's open-file limit, so that the gRPC port always has descriptors.
    http_max_connections: int | None = setting(
        None,
        "HTTP connections open at once; more are answered 503 and closed as they come, so that the gRPC port "
        "keeps file descriptors",
        values=Values("N", at_least(1, int), "a whole number, at least 1"),
        default_text="half the open-file limit",
        docs="(512 at 1,024; [security.md](security.md#connections))",
    )
    presence_window_s: float = setting(30.0, "seconds a seat counts as connected after its last call", values=SECONDS)
    presence_lease_s: float = setting(
        15.0,
        "seconds an open stream keeps its seat connected after its process last renewed it",
        values=SECONDS,
    )

    @staticmethod
    def check_arguments(args: argparse.Namespace) -> None:
        """A usage error (SystemExit(2)) for an HTTP port that is the gRPC port."""
        http_port = args.http_address.rpartition(":")[2] if args.http_address else ""
        if http_port not in ("", "0") and http_port == args.address.rpartition(":")[2]:
            raise usage_error(
                f"--http-address {args.http_address} takes the port of --address {args.address}: the HTTP side "
                "needs a port of its own"
            )
