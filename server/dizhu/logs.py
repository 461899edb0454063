"""Structured logging: JSON lines (or console) with the request's table, seat and request ids."""

from __future__ import annotations

import logging
import sys

import structlog

__all__ = ["configure_logging"]


def configure_logging(log_format: str = "json", level: str = "info") -> None:
    # Tracebacks never show local variables (they may hold tokens and hands): JSON lines carry
    # them as structured data, the console draws them with rich (whose default shows locals).
    structured_tracebacks = structlog.processors.ExceptionRenderer(
        structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
    )
    tail: list[structlog.types.Processor] = (
        [structured_tracebacks, structlog.processors.JSONRenderer()]
        if log_format == "json"
        else [
            structlog.dev.ConsoleRenderer(
                colors=sys.stderr.isatty(),
                exception_formatter=structlog.dev.RichTracebackFormatter(show_locals=False),
            )
        ]
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
