"""Fixtures of the tournament tests: a real ``dizhu serve`` referee over the tests' Redis, Node.js.

(The tournament files and faulty entrants they play with are in ``tests.support.tournaments``.)

The referee is a separate process (``tests.support.referees.served_referee``) requiring an API key,
as an organiser's external referee would; every tournament gets a fresh name and key
prefix, so tests never see each other's schedules. Nothing is mocked.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from tests.support.referees import served_referee
from tests.support.shared_builds import npm_ci
from tests.support.tournaments import API_KEY, NODE_CLIENT


@pytest.fixture(scope="module")
def referee(redis_url: str) -> Iterator[str]:
    """``"127.0.0.1:<port>"`` of a ``dizhu serve`` child requiring :data:`API_KEY`, for the module."""
    with served_referee(redis_url, "tref", api_key=API_KEY) as target:
        yield target


@pytest.fixture(scope="session")
def node() -> str:
    """The ``node`` binary, with clients/node's dependencies installed (``npm ci`` when missing)."""
    node = shutil.which("node")
    npm = shutil.which("npm")
    if node is None or npm is None:
        pytest.fail("node and npm must be on PATH (Node.js >= 18) for the Node entrants' tests", pytrace=False)
    npm_ci(NODE_CLIENT, "@grpc/grpc-js")
    return node
