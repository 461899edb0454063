"""Fixtures of the example bots' tests: one real ``dizhu serve`` referee, and each bot built once.

The referee is a separate process (``dizhu.testing.serve_process``) over the tests' Redis,
requiring an API key to create tables as an exposed referee would; each bot is built by
``polyglot_builds`` with its own language's toolchain. Nothing is mocked.

The builds take minutes from a cold start (Rust's most), so they begin as soon as the run knows
it will need them, beside the other tests: a background thread of one worker builds them one
after another, and a fixture asking for a bot either waits for that build's lock and finds it
done or builds it itself. A background build's failure is left for the fixture to report.
"""

from __future__ import annotations

import contextlib
import os
import threading
import uuid
from collections.abc import Callable, Iterator

# Before gRPC loads: keep its core's own logging out of the test output.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

import pytest

from dizhu.testing import serve_process
from tests.polyglot import polyglot_builds
from tests.polyglot.polyglot_tables import API_KEY

_HERE = os.path.dirname(os.path.abspath(__file__))
#: Longest first: the fixtures of the first tests may well build the quick ones themselves.
_BUILDS: dict[str, Callable[[], list[str]]] = {
    "rust": polyglot_builds.build_rust,
    "java": polyglot_builds.build_java,
    "cpp": polyglot_builds.build_cpp,
    "go": polyglot_builds.build_go,
}


def _languages(item: pytest.Item) -> set[str]:
    """The bots a test asks for, by fixture or by the ``language_bot`` parameter."""
    names = set(getattr(item, "fixturenames", ()))
    languages = {language for language in _BUILDS if f"{language}_bot" in names}
    callspec = getattr(item, "callspec", None)
    if callspec is not None and callspec.params.get("language_bot") in _BUILDS:
        languages.add(callspec.params["language_bot"])
    return languages


def _build_quietly(languages: list[str]) -> None:
    for language in languages:
        # BaseException: pytest.fail's Failed is one. The fixture building it again reports it.
        with contextlib.suppress(BaseException):
            _BUILDS[language]()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start building the bots the selected tests need (on the first worker alone under xdist)."""
    if session.config.option.collectonly or os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0":
        return
    needed: set[str] = set()
    for item in session.items:
        if str(item.path).startswith(_HERE + os.sep):
            needed |= _languages(item)
    if needed:
        ordered = [language for language in _BUILDS if language in needed]
        threading.Thread(target=_build_quietly, args=(ordered,), name="bot-builds", daemon=True).start()


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
