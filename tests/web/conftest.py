"""Fixtures of the web tests: a referee serving gRPC and HTTP (gRPC-Web, Connect, the web table).

Each test gets a referee of its own over the tests' real Redis (a fresh key prefix), with
its gRPC port and its HTTP port on 127.0.0.1, stopped at the end of the test.
"""

from __future__ import annotations

import os

# Before gRPC loads: keep its core's own logging out of the test output.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, async_playwright

from tests.web.web_helpers import WebReferee, start_web_referee

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


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    """Debian's chromium, headless (Playwright's own browser builds are never downloaded)."""
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=_chromium(), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture
async def web_referee(redis_url: str) -> AsyncIterator[WebReferee]:
    """A referee serving gRPC and ``--http-address 127.0.0.1:0``."""
    async with start_web_referee(redis_url) as started:
        yield started
