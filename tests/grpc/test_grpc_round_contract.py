"""What the contract promises about rounds, seen from outside: reveals, abandoned rounds,
leaving while a round is over, the round limit, clock durations and the round's history.

Tables are dealt from the fixed ``SEED`` with seat 0 dealing, so the seat to bid first is
known (3p: seat 0; 4p: seat 3).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random

import grpc
import pytest
from google.protobuf import duration_pb2

from dizhu.referee.replay import verify
from dizhu.v1 import cards_pb2, table_pb2
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import (
    FOUR,
    SEED,
    THREE,
    RulesStub,
    Table,
    TableStub,
    cards_in,
    create_table,
    decide,
    invalid,
    play_round,
    refused,
    rid,
    send,
    view,
)

SOON_S = 15.0


async def _bid(tables: TableStub, table: Table, seat: int, version: int, amount: int) -> table_pb2.TableView:
    response = await tables.Bid(
        pb.BidRequest(table_id=table.table_id, request_id=rid(), expected_version=version, amount=amount),
        metadata=table.seat(seat),
    )
    return response.table


async def _everyone_passes(tables: TableStub, table: Table) -> table_pb2.TableView:
    """Every seat passes the running deal's auction; the spectator's view after the last pass."""
    current = await view(tables, table)
    deal = current.deal_number
    while current.deal_number == deal and current.phase == table_pb2.PHASE_AUCTION:
        current = await _bid(tables, table, current.turn_seat, current.version, 0)
    return await view(tables, table)


async def _hands(tables: TableStub, table: Table) -> list[list[int]]:
    return [cards_in((await view(tables, table, seat)).your_hand) for seat in range(table.players)]


class TestLastReveal:
    @pytest.mark.parametrize("variant", [THREE, FOUR], ids=["3p", "4p"])
    async def test_an_all_pass_auction_shows_the_thrown_in_deal_in_last_reveal(
        self, tables: TableStub, variant: cards_pb2.Variant
    ) -> None:
        table = await create_table(tables, variant, seeds=[SEED], first_dealer=0)
        before = await view(tables, table)
        assert not before.HasField("last_reveal")
        hands = await _hands(tables, table)
        after = await _everyone_passes(tables, table)
        assert (after.phase, after.round, after.deal_number, after.redeals) == (table_pb2.PHASE_AUCTION, 1, 2, 1)
        reveal = after.last_reveal
        assert (reveal.round, reveal.deal_number) == (1, 1)
        assert hashlib.sha256(reveal.seed).digest() == before.seed_commitment
        assert [cards_in(hand.cards) for hand in reveal.hands] == hands
        assert after.seed_commitment != before.seed_commitment
        assert not after.HasField("last_settlement")

    async def test_a_thrown_in_deal_of_a_later_round_replaces_the_last_rounds_reveal(
        self, tables: TableStub, rules: RulesStub
    ) -> None:
        table = await create_table(tables, THREE, seeds=[SEED, SEED])
        await play_round(tables, rules, table, random.Random(5))
        second = await view(tables, table)
        assert (second.round, second.last_reveal.round) == (2, 1)
        after = await _everyone_passes(tables, table)
        assert (after.last_reveal.round, after.last_reveal.deal_number) == (2, 1)
        assert hashlib.sha256(after.last_reveal.seed).digest() == second.seed_commitment
        assert after.last_settlement.round == 1


class TestAbandonedRounds:
    async def _landlord_bid_two(self, tables: TableStub, table: Table) -> table_pb2.TableView:
        current = await _bid(tables, table, 0, 1, 2)
        while current.phase == table_pb2.PHASE_AUCTION:
            current = await _bid(tables, table, current.turn_seat, current.version, 0)
        assert (current.landlord_seat, current.highest_bid) == (0, 2)
        return current

    async def _replay_result(self, tables: TableStub, table: Table) -> dict[str, object]:
        replay = await tables.GetReplay(pb.GetReplayRequest(table_id=table.table_id, round=1))
        assert verify(replay.json).ok, verify(replay.json).problems
        result: dict[str, object] = json.loads(replay.json)["result"]
        return result

    async def test_a_round_abandoned_in_play_keeps_its_landlord_and_bid(self, tables: TableStub) -> None:
        table = await create_table(tables, THREE, seeds=[SEED], first_dealer=0)
        playing = await self._landlord_bid_two(tables, table)
        closed = await tables.CloseTable(
            pb.CloseTableRequest(table_id=table.table_id, request_id=rid(), expected_version=playing.version),
            metadata=table.creator,
        )
        settlement = closed.table.last_settlement
        assert settlement.outcome == table_pb2.ROUND_OUTCOME_ABANDONED
        assert settlement.HasField("landlord_seat")
        assert (settlement.landlord_seat, settlement.bid, settlement.stake) == (0, 2, 0)
        assert list(settlement.balance_changes) == [0, 0, 0]
        result = await self._replay_result(tables, table)
        assert (result["outcome"], result["landlord"], result["bid"], result["stake"]) == ("abandoned", 0, 2, 0)

    @pytest.mark.parametrize("how", ["leave", "close"])
    async def test_a_round_abandoned_in_the_auction_has_no_landlord_and_bid_zero(
        self, tables: TableStub, how: str
    ) -> None:
        table = await create_table(tables, THREE, seeds=[SEED], first_dealer=0)
        bid = await _bid(tables, table, 0, 1, 2)
        assert bid.highest_bid == 2
        if how == "leave":
            left = await tables.LeaveTable(
                pb.LeaveTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(1)
            )
            settlement = left.table.last_settlement
        else:
            closed = await tables.CloseTable(
                pb.CloseTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.creator
            )
            settlement = closed.table.last_settlement
        assert settlement.outcome == table_pb2.ROUND_OUTCOME_ABANDONED
        assert not settlement.HasField("landlord_seat")
        assert (settlement.bid, settlement.stake) == (0, 0)
        result = await self._replay_result(tables, table)
        assert (result["landlord"], result["bid"]) == (None, 0)


async def _round_over(tables: TableStub, rules: RulesStub, table: Table) -> table_pb2.TableView:
    await play_round(tables, rules, table, random.Random(3))
    over = await view(tables, table)
    assert over.phase == table_pb2.PHASE_ROUND_OVER
    return over


async def _settle(tables: TableStub, table: Table, seat: int) -> pb.SettleResponse:
    return await tables.Settle(pb.SettleRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(seat))


class TestLeavingWhileTheRoundIsOver:
    async def test_the_table_waits_for_the_others_settle_then_for_a_player(
        self, tables: TableStub, rules: RulesStub
    ) -> None:
        table = await create_table(tables, THREE, next_round=table_pb2.NEXT_ROUND_WHEN_ALL_SETTLED)
        await _round_over(tables, rules, table)
        left = await tables.LeaveTable(
            pb.LeaveTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(0)
        )
        assert left.table.phase == table_pb2.PHASE_ROUND_OVER
        assert (await _settle(tables, table, 1)).table.phase == table_pb2.PHASE_ROUND_OVER
        assert (await _settle(tables, table, 2)).table.phase == table_pb2.PHASE_WAITING_FOR_PLAYERS
        joined = await tables.JoinTable(pb.JoinTableRequest(table_id=table.table_id, request_id=rid(), player_name="z"))
        assert joined.seat == 0
        assert (joined.table.phase, joined.table.round) == (table_pb2.PHASE_AUCTION, 2)

    async def test_the_last_awaited_seat_leaving_makes_the_table_wait_for_players(
        self, tables: TableStub, rules: RulesStub
    ) -> None:
        table = await create_table(tables, THREE, next_round=table_pb2.NEXT_ROUND_WHEN_ALL_SETTLED)
        await _round_over(tables, rules, table)
        await _settle(tables, table, 1)
        await _settle(tables, table, 2)
        assert (await view(tables, table)).phase == table_pb2.PHASE_ROUND_OVER
        left = await tables.LeaveTable(
            pb.LeaveTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(0)
        )
        assert left.table.phase == table_pb2.PHASE_WAITING_FOR_PLAYERS

    async def test_a_round_forfeited_by_leaving_is_settled_by_the_others_then_the_table_waits(
        self, tables: TableStub
    ) -> None:
        table = await create_table(
            tables, THREE, seeds=[SEED], first_dealer=0, next_round=table_pb2.NEXT_ROUND_WHEN_ALL_SETTLED
        )
        await _bid(tables, table, 0, 1, 3)
        left = await tables.LeaveTable(
            pb.LeaveTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(1)
        )
        assert left.table.phase == table_pb2.PHASE_ROUND_OVER
        assert left.table.last_settlement.forfeited_seat == 1
        assert (await _settle(tables, table, 0)).table.phase == table_pb2.PHASE_ROUND_OVER
        assert (await _settle(tables, table, 2)).table.phase == table_pb2.PHASE_WAITING_FOR_PLAYERS


class TestRoundLimitWhenAllSettled:
    async def test_the_last_round_closes_the_table_without_waiting_for_settle(
        self, tables: TableStub, rules: RulesStub
    ) -> None:
        table = await create_table(tables, THREE, round_limit=1, next_round=table_pb2.NEXT_ROUND_WHEN_ALL_SETTLED)
        await play_round(tables, rules, table, random.Random(4))
        closed = await view(tables, table)
        assert (closed.phase, closed.close_reason) == (table_pb2.PHASE_CLOSED, table_pb2.CLOSE_REASON_ROUND_LIMIT)
        settled = await _settle(tables, table, 1)
        assert settled.settlement.round == 1
        assert settled.table.version == closed.version
        assert sorted(standing.seat for standing in settled.standings) == [0, 1, 2]


def _duration(seconds: int, nanos: int) -> duration_pb2.Duration:
    return duration_pb2.Duration(seconds=seconds, nanos=nanos)


class TestClockDurations:
    @pytest.mark.parametrize("field", ["decision_time", "first_decision_time", "time_bank"])
    @pytest.mark.parametrize("nanos", [500_000, 1_500_000, 1], ids=["0.5ms", "1.5ms", "1ns"])
    async def test_a_duration_finer_than_a_millisecond_is_refused(
        self, tables: TableStub, field: str, nanos: int
    ) -> None:
        clock = table_pb2.ClockSettings(decision_time=_duration(1, 0))
        getattr(clock, field).CopyFrom(_duration(0, nanos))
        settings = table_pb2.TableSettings(variant=THREE, clock=clock)
        await invalid(
            tables.CreateTable(pb.CreateTableRequest(request_id=rid(), settings=settings)), f"settings.clock.{field}"
        )

    async def test_a_zero_first_decision_time_is_the_decision_time(self, tables: TableStub) -> None:
        clock = table_pb2.ClockSettings(
            decision_time=_duration(2, 0), first_decision_time=_duration(0, 0), time_bank=_duration(0, 0)
        )
        created = await tables.CreateTable(
            pb.CreateTableRequest(request_id=rid(), settings=table_pb2.TableSettings(variant=THREE, clock=clock))
        )
        shown = created.table.settings.clock
        assert shown.first_decision_time.ToMilliseconds() == shown.decision_time.ToMilliseconds() == 2000

    async def test_whole_milliseconds_are_kept_exactly(self, tables: TableStub) -> None:
        clock = table_pb2.ClockSettings(decision_time=_duration(0, 123_000_000), time_bank=_duration(3, 7_000_000))
        created = await tables.CreateTable(
            pb.CreateTableRequest(request_id=rid(), settings=table_pb2.TableSettings(variant=THREE, clock=clock))
        )
        shown = created.table.settings.clock
        assert (shown.decision_time.ToMilliseconds(), shown.time_bank.ToMilliseconds()) == (123, 3007)


def _entry(entry: table_pb2.RoundAction) -> tuple[int, int, int | None, list[int]]:
    return (entry.deal_number, entry.seat, entry.bid if entry.HasField("bid") else None, cards_in(entry.cards))


class TestHistory:
    @pytest.mark.parametrize("variant", [THREE, FOUR], ids=["3p", "4p"])
    async def test_every_decision_of_the_round_is_in_every_viewers_view_in_order(
        self, tables: TableStub, rules: RulesStub, variant: cards_pb2.Variant
    ) -> None:
        table = await create_table(tables, variant, seeds=[SEED], first_dealer=0, round_limit=1)
        expected: list[tuple[int, int, int | None, list[int]]] = []
        thrown = await view(tables, table)
        for _ in range(table.players):
            expected.append((1, thrown.turn_seat, 0, []))
            thrown = await _bid(tables, table, thrown.turn_seat, thrown.version, 0)
        rng = random.Random(8)
        current = await view(tables, table)
        assert current.deal_number == 2
        while current.phase in (table_pb2.PHASE_AUCTION, table_pb2.PHASE_PLAY):
            for viewer in (None, *range(table.players)):
                seen = await view(tables, table, viewer)
                assert [_entry(entry) for entry in seen.history] == expected, viewer
                assert not any(entry.timed_out for entry in seen.history)
            seat = current.turn_seat
            mine = await view(tables, table, seat)
            decision = await decide(rules, mine, rng)
            await send(tables, table, seat, mine.version, decision)
            played = None if decision.amount is not None else cards_in(decision.cards)
            expected.append((mine.deal_number, seat, decision.amount, played or []))
            current = await view(tables, table)
        assert current.phase == table_pb2.PHASE_CLOSED
        assert not current.history
        assert any(entry[3] for entry in expected)

    async def test_a_decision_the_clock_made_is_marked(self, tables: TableStub) -> None:
        clock = table_pb2.ClockSettings(decision_time=_duration(0, 100_000_000))  # the shortest allowed
        table = await create_table(tables, THREE, seeds=[SEED], first_dealer=0, clock_settings=clock)

        async def first_entry() -> table_pb2.RoundAction:
            while True:
                current = await view(tables, table)
                if current.history:
                    return current.history[0]
                await asyncio.sleep(0.02)

        entry = await asyncio.wait_for(first_entry(), SOON_S)
        assert (entry.deal_number, entry.seat, entry.bid, entry.timed_out) == (1, 0, 0, True)


class TestFaultOrderOfJoin:
    async def test_a_malformed_name_wins_over_a_missing_table(self, tables: TableStub) -> None:
        await invalid(
            tables.JoinTable(pb.JoinTableRequest(table_id="gone", request_id=rid(), player_name="")), "player_name"
        )

    async def test_a_seat_the_table_does_not_have_wins_over_a_closed_table(self, tables: TableStub) -> None:
        table = await create_table(tables, THREE, players=1)
        await tables.CloseTable(pb.CloseTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.creator)
        request = pb.JoinTableRequest(table_id=table.table_id, request_id=rid(), player_name="x", seat=7)
        await invalid(tables.JoinTable(request), "seat")


class TestSeeds:
    @pytest.mark.parametrize("variant", [THREE, FOUR], ids=["3p", "4p"])
    async def test_the_first_dealer_of_a_seeded_table_is_the_derived_seeds_first_four_bytes_big_endian(
        self, tables: TableStub, variant: cards_pb2.Variant
    ) -> None:
        from dizhu.rules import derive_seed

        players = 3 if variant == THREE else 4
        for seed in (SEED, bytes(32), bytes([0xFF]) * 32):
            table = await create_table(tables, variant, seeds=[seed])
            expected = int.from_bytes(derive_seed(seed, "first-dealer", 0)[:4], "big") % players
            assert table.created.table.dealer_seat == expected


class TestFaultOrderOfOtherCalls:
    async def test_a_seat_asked_for_at_a_full_table_is_taken_not_the_table_full(self, tables: TableStub) -> None:
        table = await create_table(tables, THREE)
        request = pb.JoinTableRequest(table_id=table.table_id, request_id=rid(), player_name="x", seat=1)
        await refused(tables.JoinTable(request), grpc.StatusCode.FAILED_PRECONDITION, "SEAT_TAKEN")

    async def test_a_card_of_another_deck_wins_over_a_missing_token(self, tables: TableStub) -> None:
        table = await create_table(tables, THREE, seeds=[SEED], first_dealer=0)
        second_deck = cards_pb2.Card(rank=cards_pb2.RANK_ACE, suit=cards_pb2.SUIT_SPADES, copy=1)
        request = pb.PlayRequest(table_id=table.table_id, request_id=rid(), expected_version=1, cards=[second_deck])
        await invalid(tables.Play(request), "cards[0].copy")

    async def test_a_revoked_token_reusing_its_request_id_is_told_so_not_unauthenticated(
        self, tables: TableStub
    ) -> None:
        table = await create_table(tables, THREE)
        leave = pb.LeaveTableRequest(table_id=table.table_id, request_id="going")
        await tables.LeaveTable(leave, metadata=table.seat(0))
        assert (await tables.LeaveTable(leave, metadata=table.seat(0))).table.seats[0].occupied is False
        settle = tables.Settle(pb.SettleRequest(table_id=table.table_id, request_id="going"), metadata=table.seat(0))
        await refused(settle, grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REUSED")


class TestSettleVersion:
    async def test_settle_with_a_stale_version_is_refused_even_when_it_would_change_nothing(
        self, tables: TableStub
    ) -> None:
        table = await create_table(tables, THREE)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await tables.Settle(
                pb.SettleRequest(table_id=table.table_id, request_id=rid(), expected_version=99),
                metadata=table.seat(0),
            )
        assert caught.value.code() == grpc.StatusCode.ABORTED
