"""The cross-checks against peer engines hold for both rules engines."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module", autouse=True)
def _rules_engine(each_engine: str) -> str:
    """Every cross-check runs on the native engine and on the pure-Python core."""
    return each_engine
