"""Tables over several rounds: dealer rotation, redeals and the cap, settling, leaving, joining, the end.

Each test reads what happened from the table's full event log (WatchTable from sequence 0).
"""

from __future__ import annotations

import dataclasses
import random

import grpc

from dizhu.v1 import table_pb2
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import (
    THREE,
    Table,
    act,
    bid_to_play,
    cards_in,
    play_round,
    refused,
    rid,
    view,
)
from tests.support.live import Event, Node, Referees, create, full_log, kind, watch


def _of(events: list[Event], name: str) -> list[Event]:
    return [event for event in events if kind(event) == name]


async def _pass(node: Node, table: Table) -> table_pb2.TableView:
    public = await view(node.tables, table)
    response = await node.tables.Bid(
        pb.BidRequest(table_id=table.table_id, request_id=rid(), expected_version=public.version, amount=0),
        metadata=table.seat(public.turn_seat),
    )
    return response.table


class TestDealer:
    async def test_the_deal_passes_to_the_next_seat_every_round_and_the_round_limit_gives_final_standings(
        self, referees: Referees
    ) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE, round_limit=3, first_dealer=1)
        rng = random.Random(31)
        current = await view(node.tables, table)
        while current.phase != table_pb2.PHASE_CLOSED:
            current = await play_round(node.tables, node.rules, table, rng)
        log = await full_log(node.tables, table.table_id)
        dealers = {
            (e.deal_started.round, e.deal_started.deal_number): e.deal_started.dealer_seat
            for e in _of(log, "deal_started")
        }
        assert {key[0] for key in dealers} == {1, 2, 3}
        for (round_number, _), dealer in dealers.items():
            assert dealer == (1 + round_number - 1) % 3
        closed = log[-1].table_closed
        assert kind(log[-1]) == "table_closed"
        assert closed.reason == table_pb2.CLOSE_REASON_ROUND_LIMIT
        balances = [seat.balance for seat in current.seats]
        assert sum(balances) == 0
        assert [s.balance for s in closed.standings] == sorted(balances, reverse=True)
        assert {s.seat: s.balance for s in closed.standings} == dict(enumerate(balances))
        for standing in closed.standings:
            assert standing.place == 1 + sum(balance > standing.balance for balance in balances)
        assert len(_of(log, "round_ended")) == 3
        # A closed table refuses changes.
        await refused(
            node.tables.Bid(
                pb.BidRequest(table_id=table.table_id, request_id=rid(), expected_version=current.version),
                metadata=table.seat(0),
            ),
            grpc.StatusCode.FAILED_PRECONDITION,
            "TABLE_CLOSED",
        )


class TestRedeals:
    async def test_a_thrown_in_deal_is_redealt_by_the_same_dealer_until_the_cap_voids_the_round(
        self, referees: Referees
    ) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE, round_limit=2, max_redeals=1, first_dealer=2)
        for _ in range(3):
            current = await _pass(node, table)
        assert current.round == 1
        assert current.redeals == 1
        assert current.phase == table_pb2.PHASE_AUCTION
        for _ in range(3):
            current = await _pass(node, table)
        assert current.round == 2
        assert current.last_settlement.outcome == table_pb2.ROUND_OUTCOME_VOID
        await play_round(node.tables, node.rules, table, random.Random(2))
        log = await full_log(node.tables, table.table_id)
        started = [e.deal_started for e in _of(log, "deal_started")]
        assert [(d.round, d.deal_number, d.dealer_seat) for d in started][:3] == [(1, 1, 2), (1, 2, 2), (2, 1, 0)]
        assert started[0].seed_commitment != started[1].seed_commitment
        thrown = [e.deal_thrown_in for e in _of(log, "deal_thrown_in")][:2]
        assert [t.round_void for t in thrown] == [False, True]
        void = _of(log, "round_ended")[0].round_ended
        assert void.settlement.round == 1
        assert void.settlement.outcome == table_pb2.ROUND_OUTCOME_VOID
        assert void.settlement.stake == 0
        assert list(void.settlement.balance_changes) == [0, 0, 0]
        assert list(void.balances) == [0, 0, 0]
        assert not void.settlement.HasField("landlord_seat")


class TestSettle:
    async def test_with_next_round_when_all_settled_the_table_waits_for_every_seats_settle(
        self, referees: Referees
    ) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE, next_round=table_pb2.NEXT_ROUND_WHEN_ALL_SETTLED)
        watcher = watch(node.tables, table.table_id)
        ended = await play_round(node.tables, node.rules, table, random.Random(3))
        assert ended.phase == table_pb2.PHASE_ROUND_OVER
        for seat in (0, 1):
            settled = await node.tables.Settle(
                pb.SettleRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(seat)
            )
            assert settled.table.phase == table_pb2.PHASE_ROUND_OVER
            assert settled.settlement.round == 1
        await watcher.wait_for(lambda ms: len(_of(ms, "seat_settled")) == 2, "two SeatSettled")
        assert not [e for e in watcher.events if kind(e) == "deal_started"]
        last = await node.tables.Settle(
            pb.SettleRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(2)
        )
        assert last.table.phase == table_pb2.PHASE_AUCTION
        assert last.table.round == 2
        started = await watcher.wait_kind("deal_started")
        assert started.deal_started.round == 2
        kinds = [kind(e) for e in watcher.events]
        assert kinds[kinds.index("round_ended") :].count("seat_settled") == 3
        await watcher.cancel()


class TestLeaving:
    async def test_leaving_in_play_forfeits_and_a_replacement_with_its_own_token_carries_the_table_on(
        self, referees: Referees
    ) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE, round_limit=2)
        playing = await bid_to_play(node.tables, table)
        landlord = playing.landlord_seat
        leaver = (landlord + 1) % 3
        left = await node.tables.LeaveTable(
            pb.LeaveTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(leaver)
        )
        assert left.table.phase == table_pb2.PHASE_WAITING_FOR_PLAYERS
        settlement = left.table.last_settlement
        assert settlement.forfeited_seat == leaver
        assert settlement.outcome == table_pb2.ROUND_OUTCOME_LANDLORD_WON
        assert list(settlement.balance_changes) == [6 if s == landlord else -3 for s in range(3)]
        await refused(
            node.tables.GetTable(pb.GetTableRequest(table_id=table.table_id), metadata=table.seat(leaver)),
            grpc.StatusCode.UNAUTHENTICATED,
            "UNAUTHENTICATED",
        )
        joined = await node.tables.JoinTable(
            pb.JoinTableRequest(table_id=table.table_id, request_id=rid(), player_name="sub")
        )
        assert joined.seat == leaver
        assert joined.seat_token not in table.tokens.values()
        assert joined.table.round == 2
        assert joined.table.phase == table_pb2.PHASE_AUCTION
        assert len(joined.table.your_hand) == 17
        assert joined.table.seats[leaver].balance == -3  # the seat keeps its balance
        replaced = dataclasses.replace(table, tokens={**table.tokens, leaver: joined.seat_token})
        mine = await view(node.tables, replaced, leaver)
        assert cards_in(mine.your_hand) == cards_in(joined.table.your_hand)
        final = await play_round(node.tables, node.rules, replaced, random.Random(4))
        assert final.phase == table_pb2.PHASE_CLOSED
        log = await full_log(node.tables, table.table_id)
        assert [kind(e) for e in log].count("round_ended") == 2
        assert sum(seat.balance for seat in final.seats) == 0

    async def test_leaving_in_the_auction_abandons_the_round_which_settles_nothing(self, referees: Referees) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE)
        await act(node.tables, node.rules, table, random.Random(5))
        left = await node.tables.LeaveTable(
            pb.LeaveTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(0)
        )
        settlement = left.table.last_settlement
        assert settlement.outcome == table_pb2.ROUND_OUTCOME_ABANDONED
        assert settlement.forfeited_seat == 0
        assert settlement.stake == 0
        assert list(settlement.balance_changes) == [0, 0, 0]
        assert [seat.balance for seat in left.table.seats] == [0, 0, 0]
        assert left.table.phase == table_pb2.PHASE_WAITING_FOR_PLAYERS
        assert not left.table.seats[0].occupied
