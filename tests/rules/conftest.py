"""Shared fixtures and hypothesis profiles for the rules-core tests.

A module whose subject the native engine computes too (classification, legal moves, the
deal, the play tables, and the rounds and refusals built on them) runs once per engine with
``pytestmark = pytest.mark.usefixtures("each_engine")``. The others (cards and notation,
the auction, beats, settlement, visibility) test code with no engine branch and run once, on
the engine in use.

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
