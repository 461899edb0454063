"""The flags of browsers and presence (docs/front-ends.md): the HTTP port, its limits, the web table's bots."""

from __future__ import annotations

import argparse
import functools
import os

from dizhu.config.flag_values import at_least, checked, from_env, host_port, usage_error
from dizhu.config.settings import ServerConfig

__all__ = ["add_browser_arguments", "check_browser_arguments"]


def _http_address(text: str) -> str:
    return host_port(text) if text else text


def add_browser_arguments(parser: argparse.ArgumentParser, d: ServerConfig) -> None:
    browsers = parser.add_argument_group("browsers and presence (docs/front-ends.md)")
    browsers.add_argument(
        "--http-address",
        metavar="HOST:PORT",
        type=checked(_http_address, "a host:port address (port 0..65535), or empty", "DIZHU_HTTP_ADDRESS"),
        default=from_env("DIZHU_HTTP_ADDRESS", d.http_address),
        help="where to serve browsers: gRPC-Web, Connect and the web table (env DIZHU_HTTP_ADDRESS; default: "
        "none, no HTTP port)",
    )
    browsers.add_argument(
        "--cors-origin",
        metavar="URL",
        action="append",
        default=None,
        help="an origin whose pages may call the HTTP port, or * for any; repeatable; given at all, the flags "
        "replace $DIZHU_CORS_ORIGINS (comma-separated) (default: none, same origin only)",
    )
    browsers.add_argument(
        "--web-bots",
        metavar="N",
        type=checked(functools.partial(at_least, 0, int)(), "a whole number, at least 0", "DIZHU_WEB_BOTS"),
        default=from_env("DIZHU_WEB_BOTS", d.web_bots),
        help="bundled bots the web table may run in this process at once, 0 for none (env DIZHU_WEB_BOTS; "
        "default: %(default)s)",
    )
    above_zero = at_least(0.001, float)
    for flag, env, default, what in (
        (
            "--http-header-timeout",
            "DIZHU_HTTP_HEADER_TIMEOUT_S",
            d.http_header_timeout_s,
            "a request's line and headers may take from their first byte on the HTTP port, else 408 and the "
            "connection closed",
        ),
        (
            "--http-body-timeout",
            "DIZHU_HTTP_BODY_TIMEOUT_S",
            d.http_body_timeout_s,
            "a request's body may take after its headers on the HTTP port, else 408 and the connection closed",
        ),
        (
            "--http-idle-timeout",
            "DIZHU_HTTP_IDLE_TIMEOUT_S",
            d.http_idle_timeout_s,
            "an HTTP connection may sit without a request (before its first, between two) before it is closed",
        ),
    ):
        browsers.add_argument(
            flag,
            metavar="SECONDS",
            type=checked(above_zero, "a number of seconds above 0", env),
            default=from_env(env, default),
            help=f"seconds {what} (env {env}; default: %(default)s)",
        )
    browsers.add_argument(
        "--http-max-connections",
        metavar="N",
        type=checked(at_least(1, int), "a whole number, at least 1", "DIZHU_HTTP_MAX_CONNECTIONS"),
        default=os.environ.get("DIZHU_HTTP_MAX_CONNECTIONS") or None,
        help="HTTP connections open at once; more are answered 503 and closed as they come, so that the gRPC port "
        "keeps file descriptors (env DIZHU_HTTP_MAX_CONNECTIONS; default: half the open-file limit)",
    )
    browsers.add_argument(
        "--presence-window",
        metavar="SECONDS",
        type=checked(above_zero, "a number of seconds above 0", "DIZHU_PRESENCE_WINDOW_S"),
        default=from_env("DIZHU_PRESENCE_WINDOW_S", d.presence_window_s),
        help="seconds a seat counts as connected after its last call (env DIZHU_PRESENCE_WINDOW_S; "
        "default: %(default)s)",
    )
    browsers.add_argument(
        "--presence-lease",
        metavar="SECONDS",
        type=checked(above_zero, "a number of seconds above 0", "DIZHU_PRESENCE_LEASE_S"),
        default=from_env("DIZHU_PRESENCE_LEASE_S", d.presence_lease_s),
        help="seconds an open stream keeps its seat connected after its process last renewed it "
        "(env DIZHU_PRESENCE_LEASE_S; default: %(default)s)",
    )


def check_browser_arguments(args: argparse.Namespace) -> None:
    """A usage error (SystemExit(2)) for an HTTP port that is the gRPC port."""
    http_port = args.http_address.rpartition(":")[2] if args.http_address else ""
    if http_port not in ("", "0") and http_port == args.address.rpartition(":")[2]:
        raise usage_error(
            f"--http-address {args.http_address} takes the port of --address {args.address}: the HTTP side needs "
            "a port of its own"
        )
