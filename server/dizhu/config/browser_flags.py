"""The flags of browsers and presence (docs/front-ends.md): the HTTP port, its limits, the web table's bots."""

from __future__ import annotations

import argparse
import functools

from dizhu.config.flag_values import add_env_flag, at_least, host_port, usage_error
from dizhu.config.settings import ServerConfig

__all__ = ["add_browser_arguments", "check_browser_arguments"]


def _http_address(text: str) -> str:
    return host_port(text) if text else text


def add_browser_arguments(parser: argparse.ArgumentParser, d: ServerConfig) -> None:
    browsers = parser.add_argument_group("browsers and presence (docs/front-ends.md)")
    flag = functools.partial(add_env_flag, browsers)
    seconds = functools.partial(
        flag, metavar="SECONDS", convert=at_least(0.001, float), expected="a number of seconds above 0"
    )
    flag(
        "--http-address",
        "DIZHU_HTTP_ADDRESS",
        metavar="HOST:PORT",
        convert=_http_address,
        expected="a host:port address (port 0..65535), or empty",
        default=d.http_address,
        help="where to serve browsers: gRPC-Web, Connect and the web table",
        default_text="none, no HTTP port",
    )
    browsers.add_argument(
        "--cors-origin",
        metavar="URL",
        action="append",
        default=None,
        help="an origin whose pages may call the HTTP port, or * for any; repeatable; given at all, the flags "
        "replace $DIZHU_CORS_ORIGINS (comma-separated) (default: none, same origin only)",
    )
    flag(
        "--web-bots",
        "DIZHU_WEB_BOTS",
        metavar="N",
        convert=at_least(0, int),
        expected="a whole number, at least 0",
        default=d.web_bots,
        help="bundled bots the web table may run in this process at once, 0 for none",
    )
    seconds(
        "--http-header-timeout",
        "DIZHU_HTTP_HEADER_TIMEOUT_S",
        default=d.http_header_timeout_s,
        help="seconds a request's line and headers may take from their first byte on the HTTP port, else 408 and "
        "the connection closed",
    )
    seconds(
        "--http-body-timeout",
        "DIZHU_HTTP_BODY_TIMEOUT_S",
        default=d.http_body_timeout_s,
        help="seconds a request's body may take after its headers on the HTTP port, else 408 and the connection closed",
    )
    seconds(
        "--http-idle-timeout",
        "DIZHU_HTTP_IDLE_TIMEOUT_S",
        default=d.http_idle_timeout_s,
        help="seconds an HTTP connection may sit without a request (before its first, between two) before it is closed",
    )
    flag(
        "--http-max-connections",
        "DIZHU_HTTP_MAX_CONNECTIONS",
        metavar="N",
        convert=at_least(1, int),
        expected="a whole number, at least 1",
        help="HTTP connections open at once; more are answered 503 and closed as they come, so that the gRPC port "
        "keeps file descriptors",
        default_text="half the open-file limit",
    )
    seconds(
        "--presence-window",
        "DIZHU_PRESENCE_WINDOW_S",
        default=d.presence_window_s,
        help="seconds a seat counts as connected after its last call",
    )
    seconds(
        "--presence-lease",
        "DIZHU_PRESENCE_LEASE_S",
        default=d.presence_lease_s,
        help="seconds an open stream keeps its seat connected after its process last renewed it",
    )


def check_browser_arguments(args: argparse.Namespace) -> None:
    """A usage error (SystemExit(2)) for an HTTP port that is the gRPC port."""
    http_port = args.http_address.rpartition(":")[2] if args.http_address else ""
    if http_port not in ("", "0") and http_port == args.address.rpartition(":")[2]:
        raise usage_error(
            f"--http-address {args.http_address} takes the port of --address {args.address}: the HTTP side needs "
            "a port of its own"
        )
