"""Fixtures of the bundled bots' tests: a referee started per test (gRPC, embedded Redis), and a
``dizhu serve`` referee requiring the tournaments' API key for the tournaments the bots enter."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from dizhu.testing import local_referee
from tests.support.referees import served_referee
from tests.support.tournaments import API_KEY


@pytest.fixture
async def target() -> AsyncIterator[str]:
    """``"127.0.0.1:<port>"`` of a referee started for the test (logging left as configured)."""
    async with local_referee(log_level=None) as address:
        yield address


@pytest.fixture(scope="module")
def referee(redis_url: str) -> Iterator[str]:
    """``"127.0.0.1:<port>"`` of a ``dizhu serve`` child requiring :data:`API_KEY`, for the module."""
    with served_referee(redis_url, "bots", api_key=API_KEY) as served:
        yield served
