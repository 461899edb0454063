"""Bots a referee process hosts for a person (``dizhu.bots``): they decide off the referee's event loop.

The process that hosts them serves the table too (``dizhu serve --http-address``, ``dizhu play``):
a bot that thinks for its budget on the loop's thread (``expert``, 100 ms by default) would hold
up every request and stream of the process meanwhile.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from typing import Any

import pytest

from dizhu.bots import BotHost, OffTheLoop
from dizhu.client import HeuristicBot, TableClient
from dizhu.testing import local_referee
from dizhu.v1 import table_pb2

SEED = bytes.fromhex("cd" * 32)
#: A hang guard for a whole table (never a timing assertion).
TABLE_S = 120.0


@pytest.fixture
def decision_threads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The thread of every decision the heuristic bot makes from now on."""
    threads: list[int] = []

    def noting(decide: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(decide)
        def decide_noting(*arguments: Any) -> Any:
            threads.append(threading.get_ident())
            return decide(*arguments)

        return decide_noting

    for method in ("choose_bid", "choose_play"):
        monkeypatch.setattr(HeuristicBot, method, noting(getattr(HeuristicBot, method)))
    return threads


class TestOffTheLoop:
    async def test_a_decision_is_the_bots_own_made_in_another_thread(self, decision_threads: list[int]) -> None:
        view = table_pb2.TableView(your_seat=0, highest_bid=0)
        bid = await OffTheLoop(HeuristicBot()).choose_bid(view)
        assert decision_threads
        assert threading.get_ident() not in decision_threads
        assert bid == HeuristicBot().choose_bid(view)


class TestBotHost:
    async def test_hosted_bots_play_a_whole_table_without_deciding_on_the_referees_loop(
        self, redis_url: str, decision_threads: list[int]
    ) -> None:
        async with local_referee(redis_url=redis_url, log_level=None) as target, TableClient(target) as creator:
            created = await creator.create_table(round_limit=1, seeds=[SEED])
            bots = BotHost(target, limit=3)
            try:
                assert await bots.seat(created.table_id, ["heuristic"] * 3) == [0, 1, 2]
                view = await creator.get()
                async with asyncio.timeout(TABLE_S):
                    while view.phase != table_pb2.PHASE_CLOSED:
                        await asyncio.sleep(0.1)
                        view = await creator.get()
            finally:
                await bots.close()
        assert len(decision_threads) >= 3, "the bots made the table's decisions"
        assert threading.get_ident() not in decision_threads, "a hosted bot decided on the referee's event loop"
