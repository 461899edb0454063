"""The rules engine as a parameter: ``each_engine`` runs a module once per engine (docs/engine.md)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dizhu import engine


# Module scope: pytest runs a module's tests on one engine, then on the other, and hypothesis
# accepts it; when the module ends the engine is the one the process started with, so no later
# test (a child referee's "serving" line, say) finds the engine a rules module chose.
# No engine is ever skipped: a missing native engine fails, saying so.
@pytest.fixture(scope="module", params=engine.BACKENDS)
def each_engine(request: pytest.FixtureRequest) -> Iterator[str]:
    """Runs the test once per rules engine (docs/engine.md): a directory opts in with an autouse fixture."""
    with engine.using(request.param):
        yield request.param
