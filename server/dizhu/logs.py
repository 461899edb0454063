"""Structured logging: JSON lines (or console) with the request's table, seat and request ids."""

from __future__ import annotations

import asyncio
import logging
import sys

import grpc
import redis
import structlog

__all__ = ["configure_logging", "console_renderer"]

_NAMED_NOT_QUOTED = (asyncio, grpc, redis)


def console_renderer() -> structlog.dev.ConsoleRenderer:
    """The console format: rich's tracebacks without local variables (rich's default shows them).

    Rich quotes a frame's source by highlighting its file up to that line: a store error runs
    through dozens of redis-py and asyncio frames, about a second of the event loop per
    traceback. Those libraries' frames are named (file, line, function), not quoted."""
    return structlog.dev.ConsoleRenderer(
        colors=sys.stderr.isatty(),
        exception_formatter=structlog.dev.RichTracebackFormatter(show_locals=False, suppress=_NAMED_NOT_QUOTED),
    )


def configure_logging(log_format: str = "json", level: str = "info") -> None:
    # Tracebacks never show local variables (they may hold tokens and hands): JSON lines carry
    # them as structured data, the console draws them with rich (console_renderer).
    structured_tracebacks = structlog.processors.ExceptionRenderer(
        structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
    )
    tail: list[structlog.types.Processor] = (
        [structured_tracebacks, structlog.processors.JSONRenderer()] if log_format == "json" else [console_renderer()]
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            *tail,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelNamesMapping()[level.upper()]),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )
