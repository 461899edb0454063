"""Fixtures of the web tests: a referee serving gRPC and HTTP (gRPC-Web, Connect, the web table).

Each test gets a referee of its own over the tests' real Redis (a fresh key prefix), with
its gRPC port and its HTTP port on 127.0.0.1, stopped at the end of the test.
"""

from __future__ import annotations

import os

# Before gRPC loads: keep its core's own logging out of the test output.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

from collections.abc import AsyncIterator

import pytest
from web_helpers import WebReferee, start_web_referee


@pytest.fixture
async def web_referee(redis_url: str) -> AsyncIterator[WebReferee]:
    """A referee serving gRPC and ``--http-address 127.0.0.1:0``."""
    async with start_web_referee(redis_url) as started:
        yield started
