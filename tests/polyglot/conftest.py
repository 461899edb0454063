"""Fixtures of the example bots' tests: one real ``dizhu serve`` referee, and each bot built once.

The referee is a separate process (``dizhu.testing.serve_process``) over the tests' Redis,
requiring an API key to create tables as an exposed referee would; each bot is built by
``polyglot_builds`` with its own language's toolchain. ``every_client`` adds the Python SDK's
bot command and the Node client's bot to the four: the six clients of the repository. Nothing
is mocked.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator

import pytest

from tests.support import polyglot_builds
from tests.support.polyglot_tables import API_KEY
from tests.support.referees import served_referee
from tests.support.shared_builds import npm_ci

NODE_CLIENT = polyglot_builds.CLIENTS / "node"


@pytest.fixture(scope="session")
def referee(redis_url: str) -> Iterator[str]:
    """``"127.0.0.1:<port>"`` of a ``dizhu serve`` child requiring :data:`API_KEY` for CreateTable."""
    with served_referee(redis_url, "poly", api_key=API_KEY) as target:
        yield target


@pytest.fixture(scope="session")
def go_bot() -> list[str]:
    """The command of clients/go's bot, built."""
    return polyglot_builds.build_go()


@pytest.fixture(scope="session")
def java_bot() -> list[str]:
    """The command of clients/java's bot, built."""
    return polyglot_builds.build_java()


@pytest.fixture(scope="session")
def cpp_bot() -> list[str]:
    """The command of clients/cpp's bot, built."""
    return polyglot_builds.build_cpp()


@pytest.fixture(scope="session")
def rust_bot() -> list[str]:
    """The command of clients/rust's bot, built (minutes the first time)."""
    return polyglot_builds.build_rust()


@pytest.fixture(scope="session")
def python_bot() -> list[str]:
    """The command of the Python SDK's bot (``python -m dizhu.client``), playing at random."""
    return [sys.executable, "-m", "dizhu.client", "--bot", "random"]


@pytest.fixture(scope="session")
def node_bot() -> list[str]:
    """The command of clients/node's bot, its dependencies installed (``npm ci`` when missing)."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH: install Node.js (>= 18, with npm) for clients/node", pytrace=False)
    npm_ci(NODE_CLIENT, *json.loads((NODE_CLIENT / "package.json").read_text())["dependencies"])
    return [node, str(NODE_CLIENT / "bot.mjs")]


@pytest.fixture(scope="session")
def every_client(
    go_bot: list[str],
    java_bot: list[str],
    rust_bot: list[str],
    cpp_bot: list[str],
    python_bot: list[str],
    node_bot: list[str],
) -> dict[str, list[str]]:
    """The bot commands of the six clients, by language; each takes ``--target``, ``--table`` and
    ``--name``, and prints one line of JSON last."""
    return {"go": go_bot, "java": java_bot, "rust": rust_bot, "cpp": cpp_bot, "python": python_bot, "node": node_bot}
