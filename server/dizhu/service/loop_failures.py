"""The failures of a background loop, logged so that an outage reads as a few lines.

The turn clock ticks ten times a second, the presence sweeper about once a second, the table
feeds retry every half second; while Redis is out of reach every round of each fails alike,
and a traceback per round would bury the log (and spend the CPU the referee needs to come
back). So a loop logs ``<loop>_failed`` with its traceback when it starts failing or fails
with another type of error, then only counts failures of the same type (their messages vary
within one outage: a connection closed, then refused) in ``dizhu_background_failures_total``
and tells them again, without the traceback, once per ``repeat_s`` (``repeated``: the rounds
failed since the last line, ``failing_s``: since the first, ``error``: the last message); its
first round that works again logs ``<loop>_recovered`` with how many rounds failed and for
how long.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import structlog

from dizhu.service.metrics import BACKGROUND_FAILURES

__all__ = ["LoopFailures"]

_log = structlog.get_logger("dizhu.service")


class LoopFailures:
    """One loop's run of failures: ``failed`` in its ``except`` block, ``succeeded`` after a round that worked."""

    def __init__(self, loop: str, *, repeat_s: float = 60.0, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._loop = loop
        self._repeat_s = repeat_s
        self._monotonic = monotonic
        self._counted = BACKGROUND_FAILURES.labels(loop)
        self._failing: type[BaseException] | None = None
        self._failures = 0
        self._since_line = 0
        self._first_at = 0.0
        self._line_at = 0.0

    def failed(self, error: BaseException, **fields: object) -> None:
        """Count a round that raised ``error`` (call while handling it: its traceback is the one logged)."""
        self._counted.inc()
        now = self._monotonic()
        kind = type(error)
        if self._failing is None:
            self._failures, self._first_at = 0, now
        self._failures += 1
        if kind != self._failing:
            self._failing, self._since_line, self._line_at = kind, 0, now
            _log.warning(f"{self._loop}_failed", exc_info=True, **fields)
            return
        self._since_line += 1
        if now - self._line_at >= self._repeat_s:
            _log.warning(
                f"{self._loop}_failed",
                repeated=self._since_line,
                failing_s=round(now - self._first_at, 3),
                error=str(error),
                **fields,
            )
            self._since_line, self._line_at = 0, now

    def succeeded(self) -> None:
        """A round worked: the end of a run of failures is logged."""
        if self._failing is None:
            return
        _log.info(
            f"{self._loop}_recovered",
            failures=self._failures,
            failing_s=round(self._monotonic() - self._first_at, 3),
        )
        self._failing = None
