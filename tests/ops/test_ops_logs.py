"""Operations: structured logs render exceptions in both formats, and never a local variable."""

from __future__ import annotations

import asyncio
import json
import linecache
import re
import traceback

import pytest
import redis.asyncio
import structlog

from dizhu.logs import configure_logging

#: A token as a request would carry it: made at run time, so that no source line a traceback
#: quotes holds it, only a local variable.
SECRET = "-".join(["tok", "please", "never", "log", "me"])
#: The colours rich draws with.
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _fail_and_log() -> None:
    secret_token = SECRET
    try:
        raise ValueError(secret_token[:3])
    except ValueError:
        structlog.get_logger("test").warning("failed", exc_info=True, table_id="t1")


class TestLogs:
    def test_json_lines_carry_the_traceback_without_locals(self, capsys: pytest.CaptureFixture[str]) -> None:
        configure_logging("json")
        _fail_and_log()
        line = capsys.readouterr().err.strip().splitlines()[-1]
        record = json.loads(line)
        assert record["event"] == "failed"
        assert record["table_id"] == "t1"
        assert record["exception"][0]["exc_type"] == "ValueError"
        assert SECRET not in line

    def test_the_console_format_renders_an_exception_without_locals(self, capsys: pytest.CaptureFixture[str]) -> None:
        configure_logging("console")
        _fail_and_log()
        err = capsys.readouterr().err
        assert "failed" in err
        assert "ValueError" in err
        assert SECRET not in err

    def test_the_console_format_quotes_our_source_but_only_names_the_frames_of_libraries(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A store error's traceback runs through dozens of redis-py and asyncio frames; quoting
        each one's source highlighted its whole file (about a second of the event loop per
        traceback). Those frames are named (file, line, function), our own are quoted."""
        configure_logging("console")
        error = asyncio.run(_a_store_error())
        structlog.get_logger("test").warning("store_failed", exc_info=error)
        err = _ANSI.sub("", capsys.readouterr().err)
        frames = [frame for part in _chain(error) for frame in traceback.extract_tb(part.__traceback__)]
        library = [frame for frame in frames if "/redis/" in frame.filename or "/asyncio/" in frame.filename]
        ours = [frame for frame in frames if frame.filename == __file__]
        assert library
        assert ours
        # Rich wraps a long location inside its box: compared without the box and the spaces.
        compact = re.sub(r"[\s│]", "", err)
        for frame in library:
            assert f"{frame.filename}:{frame.lineno}in{frame.name}" in compact, frame
            source = linecache.getline(frame.filename, frame.lineno).strip()
            assert len(source) < 12 or source not in err, frame
        for frame in ours:
            assert linecache.getline(frame.filename, frame.lineno).strip() in err

    def setup_method(self) -> None:
        self._configured = structlog.get_config()

    def teardown_method(self) -> None:
        structlog.configure(**self._configured)


async def _a_store_error() -> BaseException:
    """The error of a real redis-py call to a port nothing listens on (port 1: never a Redis)."""
    client = redis.asyncio.Redis(port=1, socket_connect_timeout=1)
    try:
        await client.ping()
    except redis.ConnectionError as error:
        return error
    finally:
        await client.aclose()
    raise AssertionError("a Redis answered on port 1")


def _chain(error: BaseException) -> list[BaseException]:
    """``error`` and the errors it was raised from or while handling."""
    chain = [error]
    while (cause := chain[-1].__cause__ or chain[-1].__context__) is not None:
        chain.append(cause)
    return chain
