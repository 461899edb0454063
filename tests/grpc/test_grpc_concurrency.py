"""Racing requests on one table, through two referees on the same Redis: never both applied (AIP-154)."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from dizhu.service.event_codec import decode_event
from dizhu.store import TableStore
from dizhu.v1 import table_pb2
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import FOUR, SEED, THREE, TableStub, bid_to_play, create_table, error_info, rid, view


@pytest.mark.on_each_store
class TestConflictingRequests:
    async def test_two_different_plays_on_one_version_apply_exactly_once(
        self, tables: TableStub, second_tables: TableStub, store: TableStore
    ) -> None:
        table = await create_table(tables, THREE, seeds=[SEED], first_dealer=0)
        playing = await bid_to_play(tables, table)
        low, high = playing.your_hand[0], playing.your_hand[-1]
        assert low.rank != high.rank
        events_before = await store.read_events(table.table_id, 0)
        requests = [
            pb.PlayRequest(table_id=table.table_id, request_id=rid(), expected_version=playing.version, cards=[c])
            for c in (low, high)
        ]
        results = await asyncio.gather(
            tables.Play(requests[0], metadata=table.seat(0)),
            second_tables.Play(requests[1], metadata=table.seat(0)),
            return_exceptions=True,
        )
        applied = [r for r in results if isinstance(r, pb.PlayResponse)]
        failed = [r for r in results if isinstance(r, grpc.aio.AioRpcError)]
        assert len(applied) == 1, results
        assert len(failed) == 1, results
        assert failed[0].code() == grpc.StatusCode.ABORTED
        info = error_info(failed[0])
        assert info.reason == "STALE_STATE"
        assert info.metadata["current_version"] == str(playing.version + 1)
        current = await view(tables, table, 0)
        assert current.version == playing.version + 1
        assert len(current.your_hand) == len(playing.your_hand) - 1
        assert [p.cards[0] for p in current.trick.plays] == list(applied[0].table.trick.plays[0].cards)
        events_after = await store.read_events(table.table_id, 0)
        assert len(events_after) == len(events_before) + 1

    async def test_twenty_concurrent_bids_let_only_the_seat_to_act_bid_once(
        self, tables: TableStub, second_tables: TableStub, store: TableStore
    ) -> None:
        table = await create_table(tables, FOUR, seeds=[SEED], first_dealer=0)
        start = await view(tables, table)
        turn = start.turn_seat
        stubs = (tables, second_tables)
        calls = [
            stubs[n % 2].Bid(
                pb.BidRequest(table_id=table.table_id, request_id=rid(), expected_version=start.version, amount=1),
                metadata=table.seat(n % table.players),
            )
            for n in range(20)
        ]
        results = await asyncio.gather(*calls, return_exceptions=True)
        applied = [n for n, r in enumerate(results) if isinstance(r, pb.BidResponse)]
        assert len(applied) == 1, results
        assert applied[0] % table.players == turn
        for n, result in enumerate(results):
            if n in applied:
                continue
            assert isinstance(result, grpc.aio.AioRpcError), result
            reason = error_info(result).reason
            if n % table.players == turn:
                assert (result.code(), reason) == (grpc.StatusCode.ABORTED, "STALE_STATE")
            else:
                assert reason in {"NOT_YOUR_TURN", "STALE_STATE"}
                assert result.code() in {grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.ABORTED}
        current = await view(tables, table)
        assert current.version == start.version + 1
        assert [(b.seat, b.amount) for b in current.bids] == [(turn, 1)]
        assert current.phase == table_pb2.PHASE_AUCTION
        events = [decode_event(p, None, s) for s, p in await store.read_events(table.table_id, 0)]
        assert [e.WhichOneof("payload") for e in events].count("bid_made") == 1

    async def test_concurrent_joins_take_distinct_seats(self, tables: TableStub, second_tables: TableStub) -> None:
        table = await create_table(tables, FOUR, players=0)
        stubs = (tables, second_tables)
        results = await asyncio.gather(
            *(
                stubs[n % 2].JoinTable(
                    pb.JoinTableRequest(table_id=table.table_id, request_id=rid(), player_name=f"j{n}")
                )
                for n in range(6)
            ),
            return_exceptions=True,
        )
        joined = [r for r in results if isinstance(r, pb.JoinTableResponse)]
        refused = [r for r in results if isinstance(r, grpc.aio.AioRpcError)]
        assert sorted(r.seat for r in joined) == [0, 1, 2, 3]
        assert len({r.seat_token for r in joined}) == 4
        assert len(refused) == 2
        assert all(error_info(r).reason == "TABLE_FULL" for r in refused)
        current = await view(tables, table)
        assert current.phase == table_pb2.PHASE_AUCTION
        assert current.version == 5
