"""Shared fixtures and hypothesis profiles for the rules-core tests.

Profiles: ``ci`` (the default: 60 examples, no deadline) and ``thorough`` (1000 examples),
picked with ``HYPOTHESIS_PROFILE=thorough``.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from dizhu.rules import FOUR_PLAYER, THREE_PLAYER, Variant

settings.register_profile("ci", deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", deadline=None, max_examples=1000, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# Session scope: a Variant is immutable, and hypothesis refuses function-scoped fixtures.
@pytest.fixture(scope="session", params=[THREE_PLAYER, FOUR_PLAYER], ids=["3p", "4p"])
def variant(request: pytest.FixtureRequest) -> Variant:
    """Every test taking ``variant`` runs once per variant (CODE.md point 5)."""
    return request.param


@pytest.fixture(scope="session", autouse=True)
def _rules_engine(each_engine: str) -> str:
    """Every rules test runs on both engines, the native one and the pure-Python core."""
    return each_engine
