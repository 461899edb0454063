"""Fixtures of the example bots' tests: one real ``dizhu serve`` referee, and each bot built once.

The referee is a separate process (``dizhu.testing.serve_process``) over the tests' Redis,
requiring an API key to create tables as an exposed referee would; each bot is built by
``polyglot_builds`` with its own language's toolchain. Nothing is mocked.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from dizhu.testing import serve_process
from tests.polyglot import polyglot_builds
from tests.polyglot.polyglot_tables import API_KEY


@pytest.fixture(scope="session")
def referee(redis_url: str) -> Iterator[str]:
    """``"127.0.0.1:<port>"`` of a ``dizhu serve`` child requiring :data:`API_KEY` for CreateTable."""
    flags = ["--key-prefix", f"poly-{uuid.uuid4().hex[:8]}", "--api-key", API_KEY, "--log-level", "warning"]
    with serve_process(redis_url, args=[*flags, "--grace", "1"]) as process:
        yield process.target


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
