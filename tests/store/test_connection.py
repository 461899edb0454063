"""Which failures say "the store is briefly out of reach" (retry) rather than "this request is wrong"."""

from __future__ import annotations

import os

import pytest
from redis.exceptions import (
    AskError,
    BusyLoadingError,
    ClusterCrossSlotError,
    ClusterDownError,
    ClusterError,
    ConnectionError,
    MasterDownError,
    MaxConnectionsError,
    MovedError,
    NoScriptError,
    ReadOnlyError,
    RedisClusterException,
    ResponseError,
    SlotNotCoveredError,
    TimeoutError,
    TryAgainError,
)

from dizhu.store.connection import NotReplicated, is_unavailable


def _raised_in(path: str, error: BaseException) -> BaseException:
    """A copy of ``error`` as raised from code in a file at ``path`` (its traceback names that file only:
    raising ``error`` itself again would keep the frames of its earlier raise)."""
    try:
        exec(compile("raise error", path, "exec"), {"error": type(error)(*error.args)})
    except BaseException as raised:
        return raised
    raise AssertionError("unreachable")


class TestUnavailable:
    @pytest.mark.parametrize(
        "error",
        [
            ConnectionError("refused"),
            TimeoutError("timed out"),
            BusyLoadingError("LOADING"),
            MaxConnectionsError(),
            ClusterDownError("CLUSTERDOWN The cluster is down"),
            MasterDownError("MASTERDOWN Link with MASTER is down"),
            ClusterError("TTL exhausted."),
            TryAgainError("TRYAGAIN"),
            MovedError("3999 127.0.0.1:6381"),
            AskError("3999 127.0.0.1:6381"),
            ReadOnlyError("READONLY You can't write against a read only replica."),
            SlotNotCoveredError("Slot 7 is not covered"),
            RedisClusterException("Redis Cluster cannot be connected. Please provide at least one reachable node: x"),
            NotReplicated("0 of 1 replicas"),
            OSError("reset"),
        ],
        ids=lambda error: type(error).__name__,
    )
    def test_a_store_in_motion_is_unavailable(self, error: BaseException) -> None:
        assert is_unavailable(error)

    @pytest.mark.parametrize(
        "error",
        [
            ResponseError("ERR wrong number of arguments"),
            NoScriptError("NOSCRIPT"),
            ClusterCrossSlotError("CROSSSLOT Keys in request don't hash to the same slot"),
            RedisClusterException("Redis Cluster cannot be connected: Cluster mode is not enabled on this node"),
            RedisClusterException("EVALSHA - all keys must map to the same key slot"),
            ValueError("bad table id"),
            AttributeError("'NoneType' object has no attribute 'writelines'"),
        ],
        ids=lambda error: f"{type(error).__name__}: {error}"[:40],
    )
    def test_a_mistake_is_not(self, error: BaseException) -> None:
        assert not is_unavailable(error)

    @pytest.mark.parametrize(
        "error",
        [
            AttributeError("'NoneType' object has no attribute 'writelines'"),
            TypeError("'NoneType' object is not callable"),
        ],
    )
    def test_a_connection_torn_down_under_a_write_in_redis_py_is_unavailable(self, error: BaseException) -> None:
        inside = os.path.join("site-packages", "redis", "asyncio", "connection.py")
        assert is_unavailable(_raised_in(inside, error))
        assert not is_unavailable(_raised_in(os.path.join("dizhu", "service", "unit_of_work.py"), error))
