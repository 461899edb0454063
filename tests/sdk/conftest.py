"""Fixtures of the SDK tests: a real referee (gRPC on a free port, embedded Redis) per test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from dizhu.testing import local_referee


@pytest.fixture
async def target() -> AsyncIterator[str]:
    """``"127.0.0.1:<port>"`` of a referee started for the test (logging left as configured)."""
    async with local_referee(log_level=None) as address:
        yield address
