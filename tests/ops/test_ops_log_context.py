"""A call's log context (method, call id, table) is bound for the call and gone after it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import structlog

from dizhu.service.errors import guarded_stream


class _Streams:
    @guarded_stream
    async def Watch(self, request: Any, context: Any) -> AsyncIterator[dict[str, Any]]:  # noqa: N802 -- as gRPC names it
        yield structlog.contextvars.get_contextvars()
        yield {}


async def _first(stream: AsyncIterator[dict[str, Any]]) -> dict[str, Any]:
    return await anext(stream)


class TestStreams:
    async def test_a_stream_binds_its_context_in_its_own_task(self) -> None:
        stream = _Streams().Watch(SimpleNamespace(table_id="t-1"), None)
        bound = await asyncio.create_task(_first(stream))
        assert (bound["method"], bound["table_id"]) == ("Watch", "t-1")
        assert len(bound["call_id"]) == 16
        assert structlog.contextvars.get_contextvars() == {}  # not in the caller's context
        await stream.aclose()

    async def test_a_stream_closed_from_outside_its_task_closes_quietly(self) -> None:
        """gRPC runs a stream's generator in a task of its own; when the client goes away the
        event loop may finalise the generator from another task, where nothing was bound."""
        stream = _Streams().Watch(SimpleNamespace(table_id="t-1"), None)
        await asyncio.create_task(_first(stream))
        await stream.aclose()  # raised ValueError ("created in a different Context") before
        assert structlog.contextvars.get_contextvars() == {}
