"""Every per-table memory of a referee process holds at most ``--cached-tables`` tables' worth
(docs/scaling.md, "Every bound of a referee process"), however many more tables it serves.

A referee with a small bound serves five times as many tables, each left in play after a few
moves (the worst case: nothing is let go of as a table closes); then the decoded tables, the
activity marks and the seats' presence refreshes are each at their bound, not beyond it; and
the process-wide caches, bounded as ``dizhu serve`` bounds them for its process -- of running
deals (encoded lists, view digests) and those keyed by value (plain forms of deals and actions,
decoded events, table keys, encoded seats, history entries and legal moves) -- are at theirs.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from dizhu.config import ServerConfig
from dizhu.process import Referee
from dizhu.referee import table_codec
from dizhu.rules import serialization
from dizhu.service import rules_servicer
from dizhu.service.convert import settings, views
from dizhu.service.tables import bound_process_caches
from dizhu.store import table_store
from tests.support.grpc_calls import PLAYERS, THREE, act, create_table
from tests.support.safety import Servers

_BOUND = 8
_TABLES = 5 * _BOUND
_MOST_SEATS = max(PLAYERS.values())
#: Enough decisions per table that the auction is over and cards are played.
_MOVES_PER_TABLE = 8


def _kept(referee: Referee) -> dict[str, int]:
    tables = referee.grpc.tables
    return {
        "decoded tables": len(tables.decoded),
        "activity marks": tables.changes.indexing.marks_kept,
        "presence refreshes": tables.reads.presence.refreshes_kept,
        "encoded lists": len(table_codec._GROWING),
        "view digests": len(views._DIGESTS),
        "deals' plain forms": serialization._deal_to_plain.cache_info().currsize,
        "actions' plain forms": serialization.action_to_plain.cache_info().currsize,
        "table keys": table_store._known_table_keys.cache_info().currsize,
        "seat entries": views._seat_entry.cache_info().currsize,
        "history entries": views._history_entry.cache_info().currsize,
        "legal moves": rules_servicer._combination_entry.cache_info().currsize,
        "shown settings": len(settings._SHOWN_SETTINGS),
    }


@pytest.fixture
def process_bound() -> Iterator[None]:
    """This test process's caches bounded as ``dizhu serve --cached-tables 8`` bounds its own, then as before."""
    bound_process_caches(_BOUND)
    yield
    bound_process_caches(ServerConfig().cached_tables)


@pytest.mark.usefixtures("process_bound")
async def test_each_per_table_memory_stays_at_its_bound_after_many_more_tables(servers: Servers) -> None:
    server = await servers.start(cached_tables=_BOUND, limits="off")
    rng = random.Random(5)
    for _ in range(_TABLES):
        table = await create_table(server.tables, THREE)
        for _ in range(_MOVES_PER_TABLE):  # a call from every seat: each refreshes its seat's presence
            await act(server.tables, server.rules, table, rng)

    kept = _kept(server.referee)
    assert kept["decoded tables"] == _BOUND, kept
    assert kept["activity marks"] == _BOUND, kept
    assert kept["encoded lists"] == kept["view digests"] == _BOUND // 2, kept
    assert kept["deals' plain forms"] == kept["table keys"] == _BOUND, kept
    assert kept["actions' plain forms"] == kept["history entries"] == 2 * _BOUND, kept
    # Seats show their time banks, and hands are dealt at random: fewer values may be met.
    assert 0 < kept["seat entries"] <= _MOST_SEATS * _BOUND, kept
    assert 0 < kept["legal moves"] <= _MOST_SEATS * _BOUND, kept
    # Forgotten all at once when full: anywhere up to a full table's seats per table, never above.
    assert 0 < kept["presence refreshes"] <= _MOST_SEATS * _BOUND, kept
    assert 0 < kept["shown settings"] <= _BOUND, kept
