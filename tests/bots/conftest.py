"""Fixtures of the bundled bots' tests: a referee started per test (gRPC, embedded Redis), and the
tournament tests' ``dizhu serve`` referee for the tournaments the bots enter."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from dizhu.testing import local_referee
from tests.tournament.conftest import referee

__all__ = ["referee", "target"]


@pytest.fixture
async def target() -> AsyncIterator[str]:
    """``"127.0.0.1:<port>"`` of a referee started for the test (logging left as configured)."""
    async with local_referee(log_level=None) as address:
        yield address
