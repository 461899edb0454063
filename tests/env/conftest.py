"""Fixtures of the environment tests: both variants, and the engines ``dizhu.env`` offers."""

from __future__ import annotations

import pytest

from dizhu.env.engine import available_engines


@pytest.fixture(params=["3p", "4p"])
def variant(request: pytest.FixtureRequest) -> str:
    """Every test taking ``variant`` runs once per variant."""
    return str(request.param)


@pytest.fixture(params=available_engines())
def engine(request: pytest.FixtureRequest) -> str:
    """Every test taking ``engine`` runs on each rules engine this installation has."""
    return str(request.param)
