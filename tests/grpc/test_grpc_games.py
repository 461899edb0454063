"""Whole games through gRPC: rounds to settlement, the seed reveal, the round limit, Settle."""

from __future__ import annotations

import hashlib
import itertools
import random

import grpc
import pytest

from dizhu.rules import VARIANTS, deal
from dizhu.v1 import cards_pb2, table_pb2
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import (
    FOUR,
    THREE,
    RulesStub,
    Table,
    TableStub,
    act,
    cards_in,
    create_table,
    play_round,
    refused,
    rid,
    round_ended,
    view,
)

_CORE_VARIANT = {THREE: VARIANTS["3p"], FOUR: VARIANTS["4p"]}


class _DealLog:
    """What the seats saw at the start of each deal: commitment, dealer, face-up card, hands."""

    def __init__(self) -> None:
        self.deals: dict[tuple[int, int], tuple[bytes, int, int, int, list[list[int]]]] = {}

    async def note(self, tables: TableStub, table: Table) -> None:
        public = await view(tables, table)
        key = (public.round, public.deal_number)
        if public.phase != table_pb2.PHASE_AUCTION or key in self.deals:
            return
        assert not public.bids, "a deal is noted before its first bid"
        assert len(public.seed_commitment) == 32
        hands = [cards_in((await view(tables, table, seat)).your_hand) for seat in range(table.players)]
        face_up = cards_in([public.face_up_card])[0]
        self.deals[key] = (public.seed_commitment, public.dealer_seat, face_up, public.face_up_seat, hands)

    def check_reveal(self, reveal: table_pb2.DealReveal, variant: cards_pb2.Variant) -> None:
        """The revealed seed is the committed one and reproduces the hands the seats held."""
        commitment, dealer, face_up, face_up_seat, hands = self.deals[(reveal.round, reveal.deal_number)]
        assert hashlib.sha256(reveal.seed).digest() == commitment
        revealed = [cards_in(hand.cards) for hand in sorted(reveal.hands, key=lambda hand: hand.seat)]
        assert revealed == hands
        dealt = deal(reveal.seed, _CORE_VARIANT[variant], dealer)
        assert [sorted(card.id for card in hand) for hand in dealt.hands] == hands
        assert sorted(card.id for card in dealt.kitty) == cards_in(reveal.kitty)
        assert (dealt.face_up.id, dealt.face_up_seat) == (face_up, face_up_seat)


async def _play_logged_round(
    tables: TableStub, rules: RulesStub, table: Table, rng: random.Random, log: _DealLog
) -> table_pb2.TableView:
    current = await view(tables, table)
    round_number = current.round
    for _ in range(1000):
        await log.note(tables, table)
        current = await act(tables, rules, table, rng)
        if round_ended(current, round_number):
            return current
    raise AssertionError("the round did not end")


@pytest.mark.on_each_store
class TestCompleteGames:
    @pytest.mark.parametrize("variant", [THREE, FOUR], ids=["3p", "4p"])
    async def test_three_rounds_settle_to_a_zero_sum_and_close_at_the_round_limit(
        self, tables: TableStub, rules: RulesStub, variant: cards_pb2.Variant
    ) -> None:
        rng = random.Random(variant)
        table = await create_table(tables, variant, round_limit=3)
        assert table.created.table.phase == table_pb2.PHASE_AUCTION
        log = _DealLog()
        balances = [0] * table.players
        current = table.created.table
        for round_number in (1, 2, 3):
            current = await _play_logged_round(tables, rules, table, rng, log)
            settlement = current.last_settlement
            assert settlement.round == round_number
            assert sum(settlement.balance_changes) == 0
            if settlement.outcome in (table_pb2.ROUND_OUTCOME_LANDLORD_WON, table_pb2.ROUND_OUTCOME_FARMERS_WON):
                assert settlement.HasField("landlord_seat")
                assert settlement.HasField("winner_seat")
                assert settlement.stake > 0
                landlord_change = settlement.balance_changes[settlement.landlord_seat]
                landlord_won = settlement.outcome == table_pb2.ROUND_OUTCOME_LANDLORD_WON
                assert (landlord_change > 0) == landlord_won
            balances = [before + change for before, change in zip(balances, settlement.balance_changes, strict=True)]
            assert [seat.balance for seat in current.seats] == balances
            assert current.last_reveal.round == round_number
            log.check_reveal(current.last_reveal, variant)
        assert current.phase == table_pb2.PHASE_CLOSED
        assert current.close_reason == table_pb2.CLOSE_REASON_ROUND_LIMIT
        assert current.round == 3
        assert sum(balances) == 0
        assert not current.your_hand
        assert not current.HasField("turn_seat")

        final = await view(tables, table)
        assert final.phase == table_pb2.PHASE_CLOSED
        assert [seat.balance for seat in final.seats] == balances
        assert final.last_settlement == current.last_settlement
        assert final.last_reveal == current.last_reveal

        settled = await tables.Settle(
            pb.SettleRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(0)
        )
        assert settled.settlement == current.last_settlement
        assert settled.reveal == current.last_reveal
        standings = list(settled.standings)
        assert sorted(standing.seat for standing in standings) == list(range(table.players))
        assert [standing.balance for standing in standings] == sorted(balances, reverse=True)
        assert all(standing.balance == balances[standing.seat] for standing in standings)
        assert all(standing.player_name == f"p{standing.seat}" for standing in standings)
        # Equal balances share a place; the next balance down is placed after all of them.
        for index, standing in enumerate(standings):
            higher = sum(other.balance > standing.balance for other in standings)
            assert standing.place == higher + 1, (index, standings)
        for above, below in itertools.pairwise(standings):
            assert (below.place == above.place) == (below.balance == above.balance)
        assert settled.table.version == final.version, "Settle on a closed table changes nothing"

    async def test_a_round_ending_deals_the_next_at_once_by_default(self, tables: TableStub, rules: RulesStub) -> None:
        table = await create_table(tables, THREE)
        ended = await play_round(tables, rules, table, random.Random(7))
        assert ended.phase == table_pb2.PHASE_AUCTION
        assert ended.round == 2
        assert ended.last_settlement.round == 1
        assert len(ended.your_hand) == 17


@pytest.mark.on_each_store
class TestSettleWhenAllSettled:
    async def test_the_table_rests_until_every_seat_settles(self, tables: TableStub, rules: RulesStub) -> None:
        table = await create_table(tables, FOUR, next_round=table_pb2.NEXT_ROUND_WHEN_ALL_SETTLED)
        ended = await play_round(tables, rules, table, random.Random(3))
        assert ended.phase == table_pb2.PHASE_ROUND_OVER
        assert not ended.HasField("turn_seat")
        for seat in range(table.players):
            before = await view(tables, table)
            assert before.phase == table_pb2.PHASE_ROUND_OVER
            settled = await tables.Settle(
                pb.SettleRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(seat)
            )
            assert settled.settlement == ended.last_settlement
            assert settled.reveal == ended.last_reveal
            assert settled.table.version == before.version + 1
            if seat < table.players - 1:
                assert settled.table.phase == table_pb2.PHASE_ROUND_OVER
                again = await tables.Settle(
                    pb.SettleRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(seat)
                )
                assert again.table.version == settled.table.version, "settling twice changes nothing"
        after = await view(tables, table, 0)
        assert after.phase == table_pb2.PHASE_AUCTION
        assert after.round == 2
        assert len(after.your_hand) == 25

    async def test_a_bid_while_the_round_is_over_is_in_the_wrong_phase(
        self, tables: TableStub, rules: RulesStub
    ) -> None:
        table = await create_table(tables, THREE, next_round=table_pb2.NEXT_ROUND_WHEN_ALL_SETTLED)
        ended = await play_round(tables, rules, table, random.Random(5))
        info = await refused(
            tables.Bid(
                pb.BidRequest(table_id=table.table_id, request_id=rid(), expected_version=ended.version, amount=1),
                metadata=table.seat(0),
            ),
            grpc.StatusCode.FAILED_PRECONDITION,
            "WRONG_PHASE",
            table_id=table.table_id,
        )
        assert info.metadata["phase"] == "PHASE_ROUND_OVER"

    async def test_settle_before_any_round_ended_is_in_the_wrong_phase(self, tables: TableStub) -> None:
        table = await create_table(tables, THREE, next_round=table_pb2.NEXT_ROUND_WHEN_ALL_SETTLED)
        info = await refused(
            tables.Settle(pb.SettleRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(1)),
            grpc.StatusCode.FAILED_PRECONDITION,
            "WRONG_PHASE",
            table_id=table.table_id,
        )
        assert info.metadata["phase"] == "PHASE_AUCTION"
