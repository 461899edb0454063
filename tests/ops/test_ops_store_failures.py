"""What a call is told, and what is logged, when the store fails under it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import grpc
import pytest
import structlog
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import OutOfMemoryError, ResponseError

from dizhu.service.errors import guarded, is_store_trouble
from dizhu.store.connection import NotReplicated


class _Ended(Exception):
    """The call ended with a status (``abort_with_status`` raises, as gRPC's does)."""


class _Context:
    """The one thing a guarded handler asks of its context when a call fails."""

    status: grpc.Status | None = None

    async def abort_with_status(self, status: grpc.Status) -> None:
        self.status = status
        raise _Ended


class _Failing:
    def __init__(self, error: Exception) -> None:
        self.error = error

    @guarded
    async def Bid(self, request: Any, context: Any) -> None:  # noqa: N802 -- as gRPC names it
        raise self.error


async def _ended_by(error: Exception) -> tuple[grpc.Status, list[dict[str, Any]]]:
    context = _Context()
    with structlog.testing.capture_logs() as logs, pytest.raises(_Ended):
        await _Failing(error).Bid(SimpleNamespace(table_id="t-1", request_id="r-1"), context)
    assert context.status is not None
    return context.status, logs


class TestUnavailable:
    async def test_a_change_no_replica_confirmed_asks_for_a_retry_and_says_why(self) -> None:
        status, logs = await _ended_by(NotReplicated("0 of 1 replicas confirmed it in time"))
        assert status.code == grpc.StatusCode.UNAVAILABLE
        assert status.details == "the change is not yet on a replica of the table store; retry with the same request_id"
        assert [(log["event"], log["error"]) for log in logs] == [
            ("store_not_replicated", "0 of 1 replicas confirmed it in time")
        ]

    async def test_a_store_out_of_reach_is_logged_with_its_words_or_else_its_kind(self) -> None:
        status, logs = await _ended_by(RedisConnectionError("Connection closed by server."))
        assert status.code == grpc.StatusCode.UNAVAILABLE
        assert status.details == "the table store is unavailable; retry with the same request_id"
        assert [(log["event"], log["error"]) for log in logs] == [("store_unavailable", "Connection closed by server.")]
        _, logs = await _ended_by(RedisConnectionError())
        assert [(log["event"], log["error"]) for log in logs] == [("store_unavailable", "ConnectionError")]


class TestStoreTrouble:
    @pytest.mark.parametrize(
        "error",
        [RedisConnectionError("refused"), NotReplicated("0 of 1"), OutOfMemoryError("command not allowed")],
        ids=lambda error: type(error).__name__,
    )
    def test_unreachable_unreplicated_or_full_is_the_stores_trouble(self, error: Exception) -> None:
        assert is_store_trouble(error)

    @pytest.mark.parametrize(
        "error", [ResponseError("WRONGTYPE"), ValueError("bad"), KeyError("x")], ids=lambda error: type(error).__name__
    )
    def test_anything_else_is_not(self, error: Exception) -> None:
        assert not is_store_trouble(error)
