"""A referee's memory does not depend on how many tables it has served (docs/scaling.md, "Memory").

What a process keeps of a table between calls -- the JSON of its running deal's growing lists
(``referee.table_codec``), the digest its views continue from (``convert.views``), the state its next
move starts from (``DecodedTables``) -- is kept while the table can still change in that way and
let go of when it cannot: a finished deal's lists and digest as the deal ends, a closed table's
state as it closes. What stays is held to a count, and what each entry costs is held to its
exact bytes, so a process that has served a million tables holds no more than one that served
the bound's worth. (The bound and the bytes of each entry: tests/referee/test_referee_encoding.py.)
"""

from __future__ import annotations

import random

import pytest

from dizhu.process import Referee
from dizhu.referee import table_codec
from dizhu.service.convert import views
from dizhu.v1 import cards_pb2, table_pb2
from tests.support.grpc_calls import FOUR, THREE, RulesStub, TableStub, act, create_table, play_until_closed, view


def _kept(referee: Referee, table_id: str) -> dict[str, bool]:
    """Which of the process's per-table caches hold ``table_id``."""
    return {
        "growing lists": table_id in table_codec._GROWING,
        "view digest": table_id in views._DIGESTS,
        "decoded state": table_id in referee.grpc.tables.decoded,
    }


@pytest.mark.parametrize("variant", [THREE, FOUR], ids=["3p", "4p"])
async def test_a_table_played_to_its_end_is_kept_nowhere(
    in_process_referee: Referee, tables: TableStub, rules: RulesStub, variant: cards_pb2.Variant
) -> None:
    table = await create_table(tables, variant, round_limit=1, seeds=[bytes(range(32))])
    rng = random.Random(7)
    for _ in range(5):  # into the deal: every cache holds the table while its deal runs
        await act(tables, rules, table, rng)
    assert _kept(in_process_referee, table.table_id) == dict.fromkeys(_kept(in_process_referee, table.table_id), True)

    closed = await play_until_closed(tables, rules, table, rng)
    assert closed.phase == table_pb2.PHASE_CLOSED
    await view(tables, table)  # a read of the closed table keeps nothing either
    assert _kept(in_process_referee, table.table_id) == dict.fromkeys(_kept(in_process_referee, table.table_id), False)


async def test_a_finished_round_of_a_table_that_goes_on_lets_go_of_its_deal(
    in_process_referee: Referee, tables: TableStub, rules: RulesStub
) -> None:
    table = await create_table(tables, THREE, next_round=table_pb2.NEXT_ROUND_WHEN_ALL_SETTLED)
    rng = random.Random(11)
    current = await act(tables, rules, table, rng)
    while current.phase != table_pb2.PHASE_ROUND_OVER:
        current = await act(tables, rules, table, rng)
    assert _kept(in_process_referee, table.table_id) == {
        "growing lists": False,
        "view digest": False,
        "decoded state": True,
    }
