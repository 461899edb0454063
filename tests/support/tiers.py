"""The tiers (docs/testing.md): marks given by where a test lives, and the order a run starts in."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

import pytest

#: The tiers (docs/testing.md): marks given by where a test lives. ``slow`` marks what the
#: inner loop, ``pytest -n auto -m "not slow"``, leaves out: tools, builds, browsers, other
#: languages, clusters, and the few long runs of their own.
MARKS_BY_PATH: Final[dict[str, tuple[str, ...]]] = {
    "test_codebase.py": ("tooling", "slow"),
    "engine/test_crate.py": ("tooling", "slow"),
    "packaging/": ("tooling", "slow"),
    "web/test_web_build.py": ("tooling", "slow"),
    "web/test_web_events.py": ("tooling", "slow"),
    "web/test_web_cards.py": ("tooling", "slow"),
    "node/": ("node", "slow"),
    "polyglot/": ("polyglot", "slow"),
    "cluster/": ("cluster", "slow"),
    "engine/test_differential.py": ("slow",),
    "env/test_rewards_vector_leaks.py::test_no_observation_of_a_million": ("slow",),
    "env/test_baseline.py": ("slow",),
    "env/test_imitation.py": ("slow",),
    "tournament/test_tournament_games.py": ("slow",),
    "tournament/test_tournament_processes.py": ("slow",),
    "tournament/test_sandbox.py": ("slow",),
    "tournament/test_across_machines.py": ("slow",),
    "live/test_live_presence.py::TestProcesses": ("slow",),
    "live/test_live_stream_lagging_for_hours.py": ("slow",),
}
#: Marks given by a fixture a test uses, wherever it lives: ``browser`` is a real chromium.
MARKS_BY_FIXTURE: Final[dict[str, tuple[str, ...]]] = {"browser": ("browser", "slow")}
_TESTS: Final = Path(__file__).resolve().parents[1]

#: The tiers that start a run, in this order: the longest items first (the example bots' builds,
#: then cargo, clippy and mypy, the browser, ...). Under ``-n`` each worker starts on a contiguous
#: share of the collection and an idle one takes the end of a busy one's queue: a build left for
#: the end kept one worker busy for minutes while the other waited for its lock, then for it.
_STARTING_TIERS: Final = ("polyglot", "tooling", "browser", "node", "cluster", "slow")


def _tier_rank(item: pytest.Item) -> int:
    ranks = (_STARTING_TIERS.index(mark.name) for mark in item.iter_markers() if mark.name in _STARTING_TIERS)
    return min(ranks, default=len(_STARTING_TIERS))


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: a worker per core and one more (``$PYTEST_XDIST_AUTO_NUM_WORKERS`` still decides).

    About a quarter of a worker's time goes to waiting: on real clocks, on servers and
    subprocesses it started, on builds; the extra worker fills it (docs/testing.md, Wall time)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        # A file's path under tests/, then its test's name: a prefix marks a file or some of its tests.
        where = item.path.resolve().relative_to(_TESTS).as_posix() + "::" + item.nodeid.partition("::")[2]
        fixtures = getattr(item, "fixturenames", ())
        given = [marks for prefix, marks in MARKS_BY_PATH.items() if where.startswith(prefix)]
        given += [marks for fixture, marks in MARKS_BY_FIXTURE.items() if fixture in fixtures]
        for mark in (mark for marks in given for mark in marks):
            item.add_marker(mark)
    # Whole modules move (their module-scoped fixtures are set up once), in a stable order.
    module_rank: dict[Path, int] = {}
    for item in items:
        module_rank[item.path] = min(module_rank.get(item.path, len(_STARTING_TIERS)), _tier_rank(item))
    items.sort(key=lambda item: module_rank[item.path])
