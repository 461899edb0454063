"""The turn clock: timeouts applied by the referee alone, auto-play, forfeit, time banks, exactly once.

The clocks are the referees' own (``clock_interval_s`` short); a seat that "never moves" is
simply never driven. Waits are on events, with generous bounds; nothing sleeps and asserts.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter

import grpc
import pytest

from dizhu.v1 import table_pb2
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import THREE, cards_in, refused, rid, view
from tests.support.live import (
    SOON_S,
    Bots,
    Event,
    Referees,
    clock,
    create,
    full_log,
    kind,
    millis,
    watch,
)

IDLE = 1


def _decisions(events: list[Event]) -> list[tuple[int, Event]]:
    """``(seat, event)`` of every bid and play."""
    found = []
    for event in events:
        if kind(event) == "bid_made":
            found.append((event.bid_made.seat, event))
        elif kind(event) == "cards_played":
            found.append((event.cards_played.seat, event))
    return found


def _timed_out(event: Event) -> bool:
    return event.bid_made.timed_out if kind(event) == "bid_made" else event.cards_played.timed_out


@pytest.mark.on_each_store
class TestAutoPlay:
    async def test_a_seat_that_never_moves_is_played_for_by_the_clock_until_the_game_ends(
        self, referees: Referees
    ) -> None:
        node = await referees.start(clock_interval_s=0.02)
        table = await create(node.tables, THREE, round_limit=1, clock_settings=clock(150))
        watcher = watch(node.tables, table.table_id, table.tokens[IDLE], after=0)
        bots = Bots(node.tables, node.rules, table, [s for s in range(3) if s != IDLE], seed=7, bid=3)
        # While the game runs: the view shows the idle seat's deadline and its strikes.
        seen_deadline = False
        loop = asyncio.get_running_loop()
        until = loop.time() + SOON_S
        while not seen_deadline and loop.time() < until:
            await watcher.wait_for(
                lambda ms: any(kind(m) == "turn_deadline" and m.turn_deadline.seat == IDLE for m in ms[-1:]),
                "the idle seat's turn",
            )
            announced = watcher.messages[-1]
            current = await view(node.tables, table)
            if current.version == announced.version and current.turn_seat == IDLE:
                assert current.turn_deadline == announced.turn_deadline.deadline
                seen_deadline = True
            else:
                await asyncio.sleep(0.01)
        assert seen_deadline, "never caught the idle seat's turn in a view"
        assert await watcher.closed(timeout=60) == grpc.StatusCode.OK
        await bots.finished()

        events = watcher.events
        assert kind(events[-1]) == "table_closed"
        hand = set(cards_in(next(e for e in events if kind(e) == "deal_started").deal_started.your_hand))
        assert len(hand) == 17
        to_beat_by: int | None = None
        last_deadline_seat = None
        idle_plays = 0
        for event in events:
            payload = kind(event)
            if payload == "turn_deadline":
                last_deadline_seat = event.turn_deadline.seat
            elif payload == "landlord_chosen":
                assert event.landlord_chosen.landlord_seat != IDLE
                to_beat_by = None
            elif payload == "bid_made" and event.bid_made.seat == IDLE:
                assert event.bid_made.timed_out
                assert event.bid_made.amount == 0
                assert last_deadline_seat == IDLE
            elif payload == "cards_played":
                played = event.cards_played
                if played.seat == IDLE:
                    idle_plays += 1
                    assert played.timed_out
                    assert last_deadline_seat == IDLE
                    if to_beat_by is not None:
                        assert not played.cards, "auto-play must pass when it may"
                    else:
                        assert cards_in(played.cards) == [min(hand)], "auto-play leads the lowest single"
                    hand -= set(cards_in(played.cards))
                if played.cards:
                    to_beat_by = played.seat
                if played.trick_closed:
                    to_beat_by = None
        assert idle_plays >= 1
        ended = next(e for e in events if kind(e) == "round_ended").round_ended
        assert ended.settlement.outcome in (table_pb2.ROUND_OUTCOME_LANDLORD_WON, table_pb2.ROUND_OUTCOME_FARMERS_WON)
        # Strikes: exactly the timed-out decisions, per seat.
        strikes = Counter(seat for seat, event in _decisions(events) if _timed_out(event))
        final = await view(node.tables, table)
        assert [seat.timeouts for seat in final.seats] == [strikes[s] for s in range(3)]
        assert strikes[IDLE] == sum(1 for seat, _ in _decisions(events) if seat == IDLE)


@pytest.mark.on_each_store
class TestForfeit:
    async def test_a_timeout_in_play_under_forfeit_loses_the_round_for_the_offenders_side(
        self, referees: Referees
    ) -> None:
        node = await referees.start(clock_interval_s=0.02)
        policy = table_pb2.TIMEOUT_POLICY_FORFEIT
        table = await create(node.tables, THREE, round_limit=1, clock_settings=clock(300, policy=policy))
        watcher = watch(node.tables, table.table_id, after=0)
        bots = Bots(node.tables, node.rules, table, [s for s in range(3) if s != IDLE], seed=8, bid=3)
        assert await watcher.closed(timeout=60) == grpc.StatusCode.OK
        await bots.finished()
        events = watcher.events
        # In the auction a timeout is a pass; in play it is the round.
        assert all(
            e.bid_made.timed_out and e.bid_made.amount == 0
            for e in events
            if kind(e) == "bid_made" and e.bid_made.seat == IDLE
        )
        assert not [e for e in events if kind(e) == "cards_played" and e.cards_played.seat == IDLE]
        chosen = next(e for e in events if kind(e) == "landlord_chosen").landlord_chosen
        ended = next(e for e in events if kind(e) == "round_ended").round_ended
        settlement = ended.settlement
        assert settlement.forfeited_seat == IDLE
        assert settlement.outcome == table_pb2.ROUND_OUTCOME_LANDLORD_WON
        assert settlement.landlord_seat == chosen.landlord_seat
        assert not settlement.HasField("winner_seat")
        plays = [e.cards_played for e in events if kind(e) == "cards_played"]
        stake = plays[-1].stake if plays else chosen.bid
        assert settlement.stake == stake == chosen.bid * 2**settlement.doublings
        expected = [2 * stake if s == chosen.landlord_seat else -stake for s in range(3)]
        assert list(settlement.balance_changes) == expected
        assert list(ended.balances) == expected
        final = await view(node.tables, table)
        assert [seat.balance for seat in final.seats] == expected
        assert final.seats[IDLE].timeouts >= 1
        assert kind(events[-1]) == "table_closed"


@pytest.mark.on_each_store
class TestTimeBank:
    async def test_the_bank_shrinks_only_by_what_a_decision_overran(self, referees: Referees) -> None:
        node = await referees.start(clock_interval_s=0.02)
        settings = clock(1000, bank_ms=3000, first_ms=1500)
        table = await create(node.tables, THREE, clock_settings=settings)
        watcher = watch(node.tables, table.table_id, after=0)
        start = await view(node.tables, table)
        assert [millis(seat.time_bank_left) for seat in start.seats] == [3000] * 3
        first = start.turn_seat
        deadline = await watcher.wait_kind("turn_deadline")
        # The first decision of a deal gets first_decision_time, plus the whole bank.
        assert millis(deadline.turn_deadline.deadline) - millis(deadline.time) == 1500 + 3000
        assert millis(deadline.turn_deadline.time_bank_left) == 3000
        fast = await node.tables.Bid(
            pb.BidRequest(table_id=table.table_id, request_id=rid(), expected_version=start.version, amount=1),
            metadata=table.seat(first),
        )
        assert [millis(seat.time_bank_left) for seat in fast.table.seats] == [3000] * 3
        second = fast.table.turn_seat
        announced = await watcher.wait_kind("turn_deadline", 2)
        assert announced.turn_deadline.seat == second
        assert millis(announced.turn_deadline.deadline) - millis(announced.time) == 1000 + 3000
        await asyncio.sleep(1.4)  # overrun the 1 s decision time by at least 0.4 s
        slow = await node.tables.Bid(
            pb.BidRequest(table_id=table.table_id, request_id=rid(), expected_version=fast.table.version, amount=0),
            metadata=table.seat(second),
        )
        banks = [millis(seat.time_bank_left) for seat in slow.table.seats]
        assert 0 < banks[second] <= 2600
        assert [b for s, b in enumerate(banks) if s != second] == [3000, 3000]
        assert [seat.timeouts for seat in slow.table.seats] == [0, 0, 0]
        await watcher.cancel()


class TestLateMoves:
    async def test_a_move_after_its_deadline_is_refused_once_the_clock_acted_for_the_seat(
        self, referees: Referees
    ) -> None:
        # The referee's clock task looks once an hour here: only the deadline can refuse the bid.
        node = await referees.start(clock_interval_s=3600)
        table = await create(node.tables, THREE, clock_settings=clock(100))
        start = await view(node.tables, table)
        late = start.turn_seat
        await asyncio.sleep(0.3)  # the 100 ms deadline has passed (at least 0.3 s went by)
        bid = pb.BidRequest(table_id=table.table_id, request_id=rid(), expected_version=start.version, amount=3)
        info = await refused(node.tables.Bid(bid, metadata=table.seat(late)), grpc.StatusCode.ABORTED, "STALE_STATE")
        after = await view(node.tables, table)
        assert int(info.metadata["current_version"]) == after.version > start.version
        assert after.turn_seat != late
        assert [seat.timeouts for seat in after.seats] == [int(seat == late) for seat in range(3)]
        assert [(action.seat, action.bid, action.timed_out) for action in after.history] == [(late, 0, True)]


@pytest.mark.on_each_store
class TestTwoClocks:
    async def test_two_referees_clocks_apply_each_timeout_exactly_once(self, referees: Referees) -> None:
        first = await referees.start(clock_interval_s=0.005)
        second = await referees.start(own_redis=True, clock_interval_s=0.005)
        table = await create(first.tables, THREE, round_limit=1, max_redeals=1, clock_settings=clock(100))
        watcher = watch(second.tables, table.table_id)
        assert await watcher.closed(timeout=60) == grpc.StatusCode.OK
        log = await full_log(first.tables, table.table_id)
        assert [e.sequence for e in log] == list(range(1, len(log) + 1))
        versions = [e.version for e in log]
        assert all(b - a in (0, 1) for a, b in itertools.pairwise(versions)), versions
        bids = [e for e in log if kind(e) == "bid_made"]
        assert all(e.bid_made.timed_out and e.bid_made.amount == 0 for e in bids)
        # Every bid is its own change: no version carries two decisions.
        assert len({e.version for e in bids}) == len(bids)
        deal = 0
        per_decision: Counter[tuple[int, int]] = Counter()
        for event in log:
            if kind(event) == "deal_started":
                deal = event.deal_started.deal_number
            elif kind(event) == "bid_made":
                per_decision[(deal, event.bid_made.seat)] += 1
        assert per_decision == Counter({(d, s): 1 for d in (1, 2) for s in range(3)})
        thrown = [e.deal_thrown_in for e in log if kind(e) == "deal_thrown_in"]
        assert [t.round_void for t in thrown] == [False, True]
        final = await view(second.tables, table)
        assert [seat.timeouts for seat in final.seats] == [2, 2, 2]
