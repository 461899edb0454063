"""Fixtures of the web tests: a referee serving gRPC and HTTP (gRPC-Web, Connect, the web table).

Each test gets a referee of its own over the tests' real Redis (a fresh key prefix), with
its gRPC port and its HTTP port on 127.0.0.1, stopped at the end of the test. The browser's
modules share one chromium per module (``browser``, ``page_referee``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Browser, async_playwright

from tests.support.web import WebReferee, start_web_referee

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _chromium() -> str:
    path = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        pytest.fail(
            f"no chromium at {path}: the browser tests drive Debian's chromium "
            "(apt-get install -y chromium; .ci/run installs it), or set CHROMIUM to a Chromium executable",
            pytrace=False,
        )
    return path


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def module_chromium() -> AsyncIterator[Browser]:
    """Debian's chromium, headless (Playwright's own browser builds are never downloaded), one per
    module: starting Playwright's driver and a browser costs two CPU seconds, a fresh context a
    tenth of that. Its tests run in the module's event loop (``tests.support.web.BROWSER_MODULE``)."""
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=_chromium(), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            await launched.close()


@pytest_asyncio.fixture(loop_scope="module")
async def browser(module_chromium: Browser) -> AsyncIterator[Browser]:
    """The module's chromium; every page and context a test opens is closed when it ends, so the
    next test starts with none (no cookies, storage or pages of another)."""
    yield module_chromium
    for context in module_chromium.contexts:
        await context.close()


@pytest.fixture
async def web_referee(redis_url: str) -> AsyncIterator[WebReferee]:
    """A referee serving gRPC and ``--http-address 127.0.0.1:0``."""
    async with start_web_referee(redis_url) as started:
        yield started


@pytest_asyncio.fixture(loop_scope="module")
async def page_referee(redis_url: str) -> AsyncIterator[WebReferee]:
    """``web_referee`` for a ``tests.support.web.BROWSER_MODULE``: in the module's event loop, where its browser is."""
    async with start_web_referee(redis_url) as started:
        yield started
