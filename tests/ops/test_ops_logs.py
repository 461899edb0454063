"""Operations: structured logs render exceptions in both formats, and never a local variable."""

from __future__ import annotations

import json

import pytest
import structlog

from dizhu.logs import configure_logging

#: A token as a request would carry it: made at run time, so that no source line a traceback
#: quotes holds it, only a local variable.
SECRET = "-".join(["tok", "please", "never", "log", "me"])


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

    def teardown_method(self) -> None:
        structlog.reset_defaults()
