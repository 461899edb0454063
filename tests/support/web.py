"""Helpers of the web tests: referees with an HTTP side, clients of both sides, raw HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import http.client
import tempfile
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import FloatRect, Locator

from dizhu.client import TableClient
from dizhu.config import ServerConfig
from dizhu.process import Referee, running_referee
from dizhu.v1 import table_pb2
from dizhu.web.client import ProtocolType, WebClient

#: Generous bound for anything that should happen "soon".
SOON_S = 15.0

#: ``pytestmark`` of a module whose tests use ``browser`` and ``page_referee`` (conftest.py): its
#: tests share the module's event loop, where its one chromium lives.
BROWSER_MODULE = pytest.mark.asyncio(loop_scope="module")


@dataclasses.dataclass
class WebReferee:
    """A running referee with its gRPC target and its HTTP base URL."""

    referee: Referee

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.referee.port}"

    @property
    def http_port(self) -> int:
        assert self.referee.web is not None
        return self.referee.web.port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def native(self, **kwargs: Any) -> TableClient:
        """An SDK client over native gRPC."""
        return TableClient(self.target, **kwargs)

    def web(self, *, protocol: ProtocolType = ProtocolType.GRPC_WEB, json: bool = False) -> WebClient:
        """A client of the HTTP side."""
        return WebClient(self.base_url, protocol=protocol, json=json)

    async def http(
        self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        """One raw HTTP/1.1 request: status, headers (lower-case names), body."""
        return await asyncio.to_thread(_http, self.http_port, method, path, body, headers or {})


def _http(port: int, method: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=SOON_S)
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def web_config(redis_url: str, data_dir: str, **overrides: Any) -> ServerConfig:
    """A referee's configuration: both ports free on 127.0.0.1, a fresh key prefix, quick shutdown."""
    settings: dict[str, Any] = {
        "address": "127.0.0.1:0",
        "http_address": "127.0.0.1:0",
        "redis_url": redis_url,
        "data_dir": Path(data_dir),
        "key_prefix": f"web-{uuid.uuid4().hex[:8]}",
        "grace_s": 1.0,
        "heartbeat_s": 1.0,
    } | overrides
    return ServerConfig(**settings)


@contextlib.asynccontextmanager
async def start_web_referee(redis_url: str, **overrides: Any) -> AsyncIterator[WebReferee]:
    """A started referee (``overrides``: ``ServerConfig`` fields), stopped when the block ends."""
    with tempfile.TemporaryDirectory(prefix="dizhu-web-") as data_dir:
        async with running_referee(web_config(redis_url, data_dir, **overrides)) as referee:
            yield WebReferee(referee)


async def view_once_the_bots_play(person: TableClient) -> table_pb2.TableView:
    """``person``'s view (seat 0) once the bots it asked for sat down and the auction began:
    a bid was made, or it is the person's turn to make the first."""
    view = await person.get()
    deadline = asyncio.get_running_loop().time() + SOON_S
    while not ((view.phase == table_pb2.PHASE_AUCTION and view.turn_seat == 0) or view.bids):
        assert asyncio.get_running_loop().time() < deadline, view
        await asyncio.sleep(0.05)
        view = await person.get()
    return view


async def shown_box(located: Locator) -> FloatRect:
    """Where ``located`` is on the screen, once it is shown.

    The page builds its parts anew at each render (an event, the legal plays arriving), so an
    element found a moment ago may be gone by the time it is measured: Playwright then answers
    no box. Measured again until the page's current element has one, within ``SOON_S``."""
    deadline = asyncio.get_running_loop().time() + SOON_S
    while (box := await located.bounding_box()) is None:
        assert asyncio.get_running_loop().time() < deadline, f"{located} is not shown"
        await asyncio.sleep(0.05)
    return box
