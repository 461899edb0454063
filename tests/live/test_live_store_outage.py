"""A referee whose Redis goes away and comes back: each background loop says so in a few lines.

The turn clock ticks ten times a second, the presence sweeper about once a second and the
table feeds' listener retries every half second; while the store is out of reach every round
of each fails alike. The log tells the outage once per loop, with its traceback, and its end
with how many rounds failed; the failures are counted in ``dizhu_background_failures_total``.
A real referee over a real Redis on a unix socket (restarted at the same address), a real
stream open so that the feeds' listener runs.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable
from pathlib import Path

import structlog
from prometheus_client import REGISTRY

from dizhu.embedded_redis import EmbeddedRedis
from tests.support.grpc_calls import THREE, referee_over_its_own_redis
from tests.support.live import SOON_S, create, watch

_LOOPS = ("clock", "presence_sweep", "feed_notifications")


def _failures(loop: str) -> float:
    return REGISTRY.get_sample_value("dizhu_background_failures_total", {"loop": loop}) or 0.0


async def _until(done: Callable[[], bool], what: str) -> None:
    deadline = asyncio.get_running_loop().time() + SOON_S
    while not done():
        assert asyncio.get_running_loop().time() < deadline, f"not within {SOON_S} s: {what}"
        await asyncio.sleep(0.05)


class TestAStoreOutage:
    async def test_each_loop_logs_it_once_with_its_traceback_and_once_more_when_it_is_over(
        self, tmp_path: Path
    ) -> None:
        async with referee_over_its_own_redis(socket_dir=tmp_path) as own:
            table = await create(own.tables, THREE)
            watcher = watch(own.tables, table.table_id)
            await watcher.wait_kind("snapshot")
            before = {loop: _failures(loop) for loop in _LOOPS}
            restarted: EmbeddedRedis | None = None
            try:
                with structlog.testing.capture_logs() as logs:
                    await own.server.astop()
                    # Many rounds of each loop fail: the clock's at least ten.
                    await _until(
                        lambda: (
                            _failures("clock") >= before["clock"] + 10
                            and all(_failures(loop) >= before[loop] + 2 for loop in _LOOPS)
                        ),
                        "every loop failing again and again",
                    )
                    restarted = await own.another_server().astart()
                    await _until(
                        lambda: {f"{loop}_recovered" for loop in _LOOPS} <= {line["event"] for line in logs},
                        "every loop recovered",
                    )
                    await watcher.cancel()
            finally:
                if restarted is not None:  # after the logs are read: stopping it fails the loops again
                    await restarted.astop()
        tracebacks = collections.Counter(line["event"] for line in logs if line.get("exc_info"))
        assert tracebacks == {f"{loop}_failed": 1 for loop in _LOOPS}
        failed_lines = collections.Counter(line["event"] for line in logs if line["event"].endswith("_failed"))
        assert failed_lines == tracebacks  # within a minute, no reminder
        recovered = {line["event"]: line for line in logs if line["event"].endswith("_recovered")}
        assert recovered["clock_recovered"]["failures"] >= 10
        for loop in _LOOPS:
            line = recovered[f"{loop}_recovered"]
            assert line["log_level"] == "info"
            assert line["failures"] >= 2
            assert line["failing_s"] > 0
