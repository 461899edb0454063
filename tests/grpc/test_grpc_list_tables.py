"""ListTables: the open tables, the most recently active first, a bounded page at a time.

Against a real referee over the test's flushed Redis: what a lobby shows of each table (no
hand, no token), paging to the end, closed tables left out, and malformed page tokens refused.
"""

from __future__ import annotations

import asyncio
import time

import grpc

from dizhu.v1 import cards_pb2, table_pb2
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import FOUR, THREE, TableStub, as_seat, create_table, refused, rid


async def _every_page(tables: TableStub, page_size: int) -> list[list[pb.TableSummary]]:
    pages: list[list[pb.TableSummary]] = []
    token = ""
    while True:
        answer = await tables.ListTables(pb.ListTablesRequest(page_size=page_size, page_token=token))
        pages.append(list(answer.tables))
        token = answer.next_page_token
        if not token:
            return pages


class TestListTables:
    async def test_a_table_is_listed_with_its_public_facts_only(self, tables: TableStub) -> None:
        waiting = await create_table(tables, FOUR, players=2, round_limit=3)
        answer = await tables.ListTables(pb.ListTablesRequest())
        assert [summary.table_id for summary in answer.tables] == [waiting.table_id]
        summary = answer.tables[0]
        assert summary.variant == cards_pb2.VARIANT_FOUR_PLAYER
        assert summary.phase == table_pb2.PHASE_WAITING_FOR_PLAYERS
        assert (summary.round, summary.round_limit) == (1, 3)
        assert list(summary.player_names) == ["p0", "p1", "", ""]
        assert summary.free_seats == 2
        assert answer.next_page_token == ""
        for token in waiting.tokens.values():
            assert token not in str(answer)

    async def test_a_table_is_listed_with_its_age_and_last_change(self, tables: TableStub) -> None:
        before_ms = int(time.time() * 1000)
        waiting = await create_table(tables, THREE, players=2)
        after_ms = int(time.time() * 1000)
        created = (await tables.ListTables(pb.ListTablesRequest())).tables[0]
        # The referee's clock is this machine's: creation falls within the call.
        assert before_ms <= created.created_at.ToMilliseconds() <= after_ms
        assert created.last_active_at == created.created_at
        await asyncio.sleep(0.01)  # a later millisecond for the join
        await tables.JoinTable(pb.JoinTableRequest(table_id=waiting.table_id, request_id=rid(), player_name="late"))
        joined = (await tables.ListTables(pb.ListTablesRequest())).tables[0]
        assert joined.created_at == created.created_at
        assert joined.last_active_at.ToMilliseconds() > created.created_at.ToMilliseconds()

    async def test_pages_list_every_open_table_once(self, tables: TableStub) -> None:
        created = [await create_table(tables, THREE) for _ in range(5)]
        pages = await _every_page(tables, page_size=2)
        assert [len(page) for page in pages] == [2, 2, 1]
        listed = [summary.table_id for page in pages for summary in page]
        assert sorted(listed) == sorted(table.table_id for table in created)
        running = pages[0][0]
        assert running.phase == table_pb2.PHASE_AUCTION
        assert running.free_seats == 0

    async def test_a_closed_table_is_not_listed(self, tables: TableStub) -> None:
        kept = await create_table(tables, THREE, players=1)
        closed = await create_table(tables, THREE, players=1)
        await tables.CloseTable(
            pb.CloseTableRequest(table_id=closed.table_id, request_id=rid()), metadata=as_seat(closed.creator_token)
        )
        answer = await tables.ListTables(pb.ListTablesRequest(page_size=50))
        assert [summary.table_id for summary in answer.tables] == [kept.table_id]

    async def test_a_page_holds_at_most_fifty_tables(self, tables: TableStub) -> None:
        for _ in range(51):
            await create_table(tables, THREE, players=0)
        answer = await tables.ListTables(pb.ListTablesRequest(page_size=1_000))
        assert len(answer.tables) == 50
        assert answer.next_page_token
        rest = await tables.ListTables(pb.ListTablesRequest(page_size=1_000, page_token=answer.next_page_token))
        assert len(rest.tables) == 1

    async def test_no_table_lists_nothing(self, tables: TableStub) -> None:
        answer = await tables.ListTables(pb.ListTablesRequest())
        assert list(answer.tables) == []
        assert answer.next_page_token == ""

    async def test_a_page_token_of_its_own_making_is_refused(self, tables: TableStub) -> None:
        for token in ("-1", "abc", "1e3", "١٢", "9" * 10):
            await refused(
                tables.ListTables(pb.ListTablesRequest(page_token=token)),
                grpc.StatusCode.INVALID_ARGUMENT,
                "INVALID_ARGUMENT",
            )
