"""Retries with the same request_id: the first answer again, the change applied once (AIP-155)."""

from __future__ import annotations

import grpc
import pytest

from dizhu.service.event_codec import decode_event
from dizhu.store import TableStore
from dizhu.v1 import cards_pb2, events_pb2, table_pb2
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import SEED, THREE, Table, TableStub, bid_to_play, create_table, refused, rid, view


@pytest.fixture
async def table(tables: TableStub) -> Table:
    """A 3p table in its auction, dealt from SEED; seat 0 is to bid."""
    return await create_table(tables, THREE, seeds=[SEED], first_dealer=0)


async def _events(store: TableStore, table: Table) -> list[events_pb2.TableEvent]:
    """The table's changes (without the presence events its seats' calls cause)."""
    events = [decode_event(payload, None, sequence) for sequence, payload in await store.read_events(table.table_id, 0)]
    return [event for event in events if event.WhichOneof("payload") != "seat_presence"]


@pytest.mark.on_each_store
class TestRetriedMoves:
    async def test_a_retried_bid_returns_the_first_answer_and_applies_once(
        self, tables: TableStub, table: Table, store: TableStore
    ) -> None:
        before = await _events(store, table)
        request = pb.BidRequest(table_id=table.table_id, request_id="bid-1", expected_version=1, amount=1)
        first = await tables.Bid(request, metadata=table.seat(0))
        after_first = await _events(store, table)
        again = await tables.Bid(request, metadata=table.seat(0))
        assert again.SerializeToString(deterministic=True) == first.SerializeToString(deterministic=True)
        assert first.table.version == 2
        assert (await view(tables, table)).version == 2
        assert len(after_first) == len(before) + 1
        assert after_first[-1].WhichOneof("payload") == "bid_made"
        assert await _events(store, table) == after_first

    async def test_a_retry_after_other_moves_still_gets_the_first_answer(
        self, tables: TableStub, table: Table, store: TableStore
    ) -> None:
        request = pb.BidRequest(table_id=table.table_id, request_id="early", expected_version=1, amount=1)
        first = await tables.Bid(request, metadata=table.seat(0))
        second = await tables.Bid(
            pb.BidRequest(table_id=table.table_id, request_id=rid(), expected_version=2, amount=2),
            metadata=table.seat(1),
        )
        events = await _events(store, table)
        again = await tables.Bid(request, metadata=table.seat(0))
        assert again == first
        assert again.table.version == 2
        assert again.table.turn_seat == 1
        current = await view(tables, table)
        assert current.version == second.table.version == 3
        assert [(b.seat, b.amount) for b in current.bids] == [(0, 1), (1, 2)]
        assert await _events(store, table) == events

    async def test_a_retried_play_returns_the_first_answer_and_applies_once(
        self, tables: TableStub, table: Table, store: TableStore
    ) -> None:
        playing = await bid_to_play(tables, table)
        request = pb.PlayRequest(
            table_id=table.table_id, request_id="lead", expected_version=playing.version, cards=[playing.your_hand[0]]
        )
        first = await tables.Play(request, metadata=table.seat(0))
        events = await _events(store, table)
        again = await tables.Play(request, metadata=table.seat(0))
        assert again == first
        assert first.combination.kind == cards_pb2.COMBINATION_KIND_SINGLE
        assert len(first.table.your_hand) == len(playing.your_hand) - 1
        assert (await view(tables, table)).version == playing.version + 1
        assert await _events(store, table) == events

    async def test_a_refused_request_is_not_remembered(self, tables: TableStub, table: Table) -> None:
        out_of_turn = pb.BidRequest(table_id=table.table_id, request_id="later", expected_version=2, amount=2)
        await refused(tables.Bid(out_of_turn, metadata=table.seat(1)), grpc.StatusCode.ABORTED, "STALE_STATE")
        await tables.Bid(
            pb.BidRequest(table_id=table.table_id, request_id=rid(), expected_version=1, amount=1),
            metadata=table.seat(0),
        )
        applied = await tables.Bid(out_of_turn, metadata=table.seat(1))
        assert applied.table.version == 3
        assert applied.table.highest_bid == 2

    async def test_a_request_id_is_scoped_to_the_callers_token(self, tables: TableStub, table: Table) -> None:
        mine = await tables.Bid(
            pb.BidRequest(table_id=table.table_id, request_id="same", expected_version=1, amount=1),
            metadata=table.seat(0),
        )
        theirs = await tables.Bid(
            pb.BidRequest(table_id=table.table_id, request_id="same", expected_version=2, amount=2),
            metadata=table.seat(1),
        )
        assert theirs.table.version == 3
        assert theirs.table.your_seat == 1
        assert {card.SerializeToString() for card in theirs.table.your_hand}.isdisjoint(
            card.SerializeToString() for card in mine.table.your_hand
        )


@pytest.mark.on_each_store
class TestRetriedTableCalls:
    async def test_a_retried_leave_gets_its_first_answer_although_the_token_is_revoked(
        self, tables: TableStub, table: Table
    ) -> None:
        request = pb.LeaveTableRequest(table_id=table.table_id, request_id="bye")
        first = await tables.LeaveTable(request, metadata=table.seat(2))
        again = await tables.LeaveTable(request, metadata=table.seat(2))
        assert again == first
        assert first.table.phase == table_pb2.PHASE_WAITING_FOR_PLAYERS
        assert first.table.last_settlement.outcome == table_pb2.ROUND_OUTCOME_ABANDONED
        assert first.table.last_settlement.forfeited_seat == 2
        assert (await view(tables, table)).version == first.table.version
        await refused(
            tables.LeaveTable(pb.LeaveTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(2)),
            grpc.StatusCode.UNAUTHENTICATED,
            "UNAUTHENTICATED",
        )

    async def test_a_retried_create_returns_the_same_table_and_tokens(self, tables: TableStub) -> None:
        request = pb.CreateTableRequest(
            request_id="create-once-0123456789",
            settings=table_pb2.TableSettings(variant=cards_pb2.VARIANT_FOUR_PLAYER),
            player_names=["a", "b"],
        )
        first = await tables.CreateTable(request)
        again = await tables.CreateTable(request)
        assert again == first
        assert [t.token for t in first.seat_tokens] == [t.token for t in again.seat_tokens]
        other = await tables.CreateTable(
            pb.CreateTableRequest(request_id="create-other-0123456789", settings=request.settings)
        )
        assert other.table_id != first.table_id
        changed = pb.CreateTableRequest()
        changed.CopyFrom(request)
        changed.player_names.append("c")
        await refused(tables.CreateTable(changed), grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REUSED")

    async def test_a_retried_join_returns_the_same_seat_and_token(self, tables: TableStub) -> None:
        table = await create_table(tables, THREE, players=1)
        request = pb.JoinTableRequest(table_id=table.table_id, request_id="join-1-0123456789abcdef", player_name="bob")
        first = await tables.JoinTable(request)
        again = await tables.JoinTable(request)
        assert (again.seat, again.seat_token) == (first.seat, first.seat_token) == (1, first.seat_token)
        assert again == first
        current = await view(tables, table)
        assert [seat.occupied for seat in current.seats] == [True, True, False]
        assert current.version == first.table.version == 2
        joined = await tables.JoinTable(pb.JoinTableRequest(table_id=table.table_id, request_id=rid(), player_name="c"))
        assert joined.seat == 2
        assert joined.table.phase == table_pb2.PHASE_AUCTION, "the last free seat taken deals the first round"

    async def test_a_retried_close_returns_the_first_standings(self, tables: TableStub, table: Table) -> None:
        request = pb.CloseTableRequest(table_id=table.table_id, request_id="close")
        first = await tables.CloseTable(request, metadata=table.creator)
        again = await tables.CloseTable(request, metadata=table.creator)
        assert again == first
        assert [s.seat for s in first.standings] == [0, 1, 2]
        assert all(s.place == 1 and s.balance == 0 for s in first.standings)
