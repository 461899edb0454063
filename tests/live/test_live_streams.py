"""WatchTable: snapshot first, one event per change, heartbeats, resume anywhere, errors, leaving.

Every stream here is a real server-streaming call to a real referee (port 0) over the test's
Redis; a "second process" is a second in-process referee with its own Redis connection,
feeds and clock.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time

import grpc
import pytest
import redis.asyncio

from dizhu.v1 import table_pb2
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import (
    FOUR,
    THREE,
    act,
    as_seat,
    cards_in,
    play_round,
    rid,
    view,
)
from tests.support.live import (
    Event,
    Node,
    Referees,
    Watcher,
    create,
    kind,
    millis,
    stream_refused,
    utc_now_ms,
    watch,
)


def _serialized(events: list[Event]) -> list[bytes]:
    return [event.SerializeToString(deterministic=True) for event in events]


def _assert_consecutive(events: list[Event], start: int) -> None:
    sequences = [event.sequence for event in events]
    assert sequences == list(range(start + 1, start + 1 + len(events))), sequences


def _watch_after(node: Node, table_id: str, sequence: int, write: int, token: str | None = None) -> Watcher:
    """A stream resumed after ``sequence``, whose event the caller holds as write ``write``."""
    request = pb.WatchTableRequest(table_id=table_id, after_sequence=sequence, after_write_id=write)
    return Watcher(node.tables.WatchTable(request, metadata=as_seat(token) if token is not None else ()))


@pytest.mark.on_each_store
class TestFirstMessage:
    async def test_a_seats_stream_starts_with_a_snapshot_holding_that_seats_hand(self, referees: Referees) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE)
        mine = await view(node.tables, table, 1)
        watcher = watch(node.tables, table.table_id, table.tokens[1])
        first = await watcher.wait_kind("snapshot")
        assert watcher.messages[0] is first
        assert first.snapshot.your_seat == 1
        assert len(first.snapshot.your_hand) == 17
        # Seat 1's read made it present: the snapshot says so.
        assert [seat.connected for seat in first.snapshot.seats] == [False, True, False]
        assert cards_in(first.snapshot.your_hand) == cards_in(mine.your_hand)
        # Three seats joined, the deal started, and seat 1's read made it present: five events.
        assert first.sequence == await node.store.last_sequence(table.table_id) == 5
        assert first.version == first.snapshot.version == mine.version
        await watcher.cancel()

    async def test_a_spectators_and_the_creators_streams_start_with_a_snapshot_without_any_hand(
        self, referees: Referees
    ) -> None:
        node = await referees.start()
        table = await create(node.tables, FOUR)
        for token in (None, table.creator_token):
            watcher = watch(node.tables, table.table_id, token)
            first = await watcher.wait_kind("snapshot")
            assert watcher.messages[0] is first
            assert not first.snapshot.HasField("your_seat")
            assert not first.snapshot.your_hand
            assert first.snapshot.phase == table_pb2.PHASE_AUCTION
            assert first.sequence == 5
            await watcher.cancel()

    async def test_a_snapshots_time_is_utc_whatever_the_machines_time_zone(
        self, referees: Referees, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE)
        monkeypatch.setenv("TZ", "Asia/Shanghai")  # eight hours ahead of UTC
        time.tzset()
        try:
            before = utc_now_ms()
            watcher = watch(node.tables, table.table_id)
            snapshot = await watcher.wait_kind("snapshot")
            after = utc_now_ms()
            await watcher.cancel()
        finally:
            monkeypatch.undo()
            time.tzset()
        assert before <= millis(snapshot.time) <= after

    async def test_seat_0s_stream_read_from_the_start_shows_its_hand_in_the_deal_after_the_joins(
        self, referees: Referees
    ) -> None:
        # Seat 0 is the seat an event without a seat names by default: every event before the
        # deal must leave its stream a seat's, not a spectator's.
        node = await referees.start()
        table = await create(node.tables, THREE)
        mine = await view(node.tables, table, 0)
        watcher = watch(node.tables, table.table_id, table.tokens[0], after=0)
        dealt = await watcher.wait_kind("deal_started")
        kinds = watcher.kinds()
        assert kinds[: kinds.index("deal_started")] == ["seat_joined"] * 3
        assert len(dealt.deal_started.your_hand) == 17
        assert cards_in(dealt.deal_started.your_hand) == cards_in(mine.your_hand)
        await watcher.cancel()


@pytest.mark.on_each_store
class TestEvents:
    async def test_every_change_follows_as_events_with_consecutive_sequences_until_ok_after_table_closed(
        self, referees: Referees
    ) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE, round_limit=1)
        spectator = watch(node.tables, table.table_id)
        seat = watch(node.tables, table.table_id, table.tokens[0])
        start = await spectator.wait_kind("snapshot")
        await seat.wait_kind("snapshot")
        rng = random.Random(5)
        decisions = 0
        current = await view(node.tables, table)
        while current.phase != table_pb2.PHASE_CLOSED:
            current = await act(node.tables, node.rules, table, rng)
            decisions += 1
        for watcher in (spectator, seat):
            assert await watcher.closed() == grpc.StatusCode.OK
            events = watcher.events[1:]
            assert kind(watcher.events[0]) == "snapshot"
            _assert_consecutive(events, start.sequence)
            assert kind(events[-1]) == "table_closed"
            assert events[-1].table_closed.reason == table_pb2.CLOSE_REASON_ROUND_LIMIT
            # One change, one version: every version from the snapshot's to the last one shows up
            # (presence events carry the version of the moment: they change no state).
            versions = [event.version for event in events if kind(event) != "seat_presence"]
            assert versions == sorted(versions)
            assert sorted(set(versions)) == list(range(start.version + 1, current.version + 1))
            assert sum(kind(e) in ("bid_made", "cards_played") for e in events) == decisions
        # Both viewers saw the same events, but for the private part of DealStarted.
        assert len(spectator.events) == len(seat.events)

    async def test_an_idle_stream_carries_heartbeats_with_the_last_sequence_and_then_the_next_event(
        self, referees: Referees
    ) -> None:
        node = await referees.start(heartbeat_s=0.1)
        table = await create(node.tables, THREE)
        watcher = watch(node.tables, table.table_id)
        snapshot = await watcher.wait_kind("snapshot")
        await watcher.wait_kind("heartbeat", 3)
        heartbeats = [m for m in watcher.messages if kind(m) == "heartbeat"]
        assert all(beat.sequence == snapshot.sequence for beat in heartbeats)
        assert snapshot.write_id
        assert all(beat.write_id == snapshot.write_id for beat in heartbeats)
        assert all(beat.time.ToMilliseconds() > 0 for beat in heartbeats)
        await act(node.tables, node.rules, table, random.Random(1))
        made = await watcher.wait_kind("bid_made")
        present = [m for m in watcher.messages if kind(m) == "seat_presence"]  # the bidder's read came first
        assert made.sequence == snapshot.sequence + 1 + len(present)
        await watcher.cancel()

    async def test_a_closed_table_gives_its_snapshot_then_ends_ok(self, referees: Referees) -> None:
        node = await referees.start(heartbeat_s=0.1)
        table = await create(node.tables, THREE)
        await node.tables.CloseTable(
            pb.CloseTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.creator
        )
        watcher = watch(node.tables, table.table_id)
        assert await watcher.closed(timeout=5) == grpc.StatusCode.OK
        assert watcher.kinds() == ["snapshot"]
        assert watcher.messages[0].snapshot.phase == table_pb2.PHASE_CLOSED
        # Resuming after the last event (TableClosed) also ends at once.
        last = await node.store.last_sequence(table.table_id)
        resumed = watch(node.tables, table.table_id, after=last)
        assert await resumed.closed(timeout=5) == grpc.StatusCode.OK
        assert resumed.kinds() == []
        # And resuming just before it gives TableClosed, then OK.
        before = watch(node.tables, table.table_id, after=last - 1)
        assert await before.closed(timeout=5) == grpc.StatusCode.OK
        assert before.kinds() == ["table_closed"]

    async def test_a_seats_live_stream_shows_its_new_hand_when_the_next_round_is_dealt(
        self, referees: Referees
    ) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE, round_limit=2)
        watcher = watch(node.tables, table.table_id, table.tokens[0])
        await watcher.wait_kind("snapshot")
        await play_round(node.tables, node.rules, table, random.Random(12))
        dealt = await watcher.wait_kind("deal_started")  # after the snapshot: round 2's, live
        assert dealt.deal_started.round == 2
        mine = await view(node.tables, table, 0)
        assert len(dealt.deal_started.your_hand) == 17
        assert cards_in(dealt.deal_started.your_hand) == cards_in(mine.your_hand)
        await watcher.cancel()


async def _resume_matches_uninterrupted(first: Node, second: Node) -> None:
    """Watch on ``first``, drop mid-round, resume on ``second``: exactly the uninterrupted stream."""
    table = await create(first.tables, THREE, round_limit=1)
    rng = random.Random(11)
    reference = watch(first.tables, table.table_id)
    dropped = watch(first.tables, table.table_id)
    await reference.wait_kind("snapshot")
    await dropped.wait_kind("snapshot")
    for _ in range(6):
        await act(first.tables, first.rules, table, rng)
    target = await first.store.last_sequence(table.table_id)
    await dropped.wait_for(lambda ms: ms[-1].sequence >= target, f"sequence {target}")
    await dropped.cancel()
    last_seen = dropped.last_sequence
    # Missed while away: a few decisions, some on the other referee.
    for step in range(5):
        node = first if step % 2 else second
        await act(node.tables, node.rules, table, rng)
    resumed = watch(second.tables, table.table_id, after=last_seen)
    await resumed.wait_for(lambda ms: len(ms) >= 5, "the missed events")
    assert kind(resumed.messages[0]) != "snapshot"
    assert resumed.messages[0].sequence == last_seen + 1
    current = await view(second.tables, table)
    while current.phase != table_pb2.PHASE_CLOSED:
        current = await act(second.tables, second.rules, table, rng)
    assert await reference.closed() == grpc.StatusCode.OK
    assert await resumed.closed() == grpc.StatusCode.OK
    assert reference.events[0].sequence == dropped.events[0].sequence
    joined = dropped.events[1:] + resumed.events
    assert _serialized(joined) == _serialized(reference.events[1:])
    _assert_consecutive(joined, reference.events[0].sequence)


@pytest.mark.on_each_store
class TestResume:
    async def test_a_resumed_stream_gives_exactly_the_missed_events_then_the_live_ones(
        self, referees: Referees
    ) -> None:
        node = await referees.start()
        await _resume_matches_uninterrupted(node, node)

    async def test_a_stream_dropped_on_one_referee_resumes_on_another_without_loss_or_duplicate(
        self, referees: Referees
    ) -> None:
        first = await referees.start()
        second = await referees.start(own_redis=True)
        await _resume_matches_uninterrupted(first, second)

    async def test_resuming_at_the_latest_sequence_gives_only_live_events(self, referees: Referees) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE)
        latest = await node.store.last_sequence(table.table_id)
        watcher = watch(node.tables, table.table_id, table.tokens[2], after=latest)
        await act(node.tables, node.rules, table, random.Random(2))
        made = await watcher.wait_kind("bid_made")
        live = [m for m in watcher.messages if kind(m) != "seat_presence"]  # seat 2's stream made it present
        assert live[0] is made
        assert watcher.messages[0].sequence == latest + 1
        await watcher.cancel()

    async def test_a_resume_point_older_than_the_kept_events_gives_a_fresh_snapshot_first(
        self, referees: Referees
    ) -> None:
        node = await referees.start(events_maxlen=5)
        table = await create(node.tables, THREE)
        rng = random.Random(3)
        # MAXLEN ~ trims whole stream nodes: play until the first events are gone.
        for _ in range(20):
            await play_round(node.tables, node.rules, table, rng)
            oldest = await node.store.oldest_sequence(table.table_id)
            if oldest is not None and oldest > 2:
                break
        else:
            raise AssertionError("the event log was never trimmed")
        latest = await node.store.last_sequence(table.table_id)
        watcher = watch(node.tables, table.table_id, table.tokens[0], after=1)
        first = await watcher.wait_kind("snapshot")
        assert watcher.messages[0] is first
        assert first.sequence == latest
        assert first.snapshot.your_seat == 0
        assert first.snapshot.your_hand
        await act(node.tables, node.rules, table, rng)
        await watcher.wait_for(lambda ms: len(ms) >= 2, "a live event")
        assert watcher.messages[1].sequence == latest + 1
        assert kind(watcher.messages[1]) in ("bid_made", "cards_played")
        await watcher.cancel()

    async def test_a_resume_goes_on_without_a_snapshot_exactly_when_the_first_missed_event_is_kept(
        self, referees: Referees, redis_client: redis.asyncio.Redis
    ) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE)
        rng = random.Random(4)
        for _ in range(6):
            await act(node.tables, node.rules, table, rng)
        latest = await node.store.last_sequence(table.table_id)
        oldest = latest - 3
        await redis_client.xtrim(node.store.keys(table.table_id).events, minid=f"{oldest}-0", approximate=False)
        assert await node.store.oldest_sequence(table.table_id) == oldest
        # The first missed event is the oldest kept one: the events follow, no snapshot.
        kept = watch(node.tables, table.table_id, after=oldest - 1)
        await kept.wait_for(lambda ms: bool(ms) and ms[-1].sequence == latest, "the kept events")
        assert [m.sequence for m in kept.messages] == list(range(oldest, latest + 1))
        assert "snapshot" not in kept.kinds()
        await kept.cancel()
        # The first missed event is gone (one before the oldest kept): a snapshot first.
        gone = watch(node.tables, table.table_id, after=oldest - 2)
        first = await gone.wait_kind("snapshot")
        assert gone.messages[0] is first
        assert first.sequence == latest
        await gone.cancel()

    async def test_a_resume_point_beyond_the_latest_event_is_out_of_range(self, referees: Referees) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE)
        latest = await node.store.last_sequence(table.table_id)
        metadata = await stream_refused(
            node.tables,
            pb.WatchTableRequest(table_id=table.table_id, after_sequence=latest + 1),
            grpc.StatusCode.OUT_OF_RANGE,
            "SEQUENCE_OUT_OF_RANGE",
        )
        assert metadata == {"latest_sequence": str(latest), "table_id": table.table_id}
        call = node.tables.WatchTable(pb.WatchTableRequest(table_id=table.table_id, after_sequence=latest + 2))
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call.read()
        assert caught.value.details() == f"sequence {latest + 2} is beyond the table's latest, {latest}"

    async def test_a_resume_with_its_last_events_write_id_goes_on_and_with_another_starts_from_a_snapshot(
        self, referees: Referees
    ) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE)
        rng = random.Random(9)
        for _ in range(3):
            await act(node.tables, node.rules, table, rng)
        log = await node.store.read_entries(table.table_id, 0)
        latest = log[-1]
        assert [entry.sequence for entry in log] == list(range(1, latest.sequence + 1))
        # A snapshot stands for the log's latest event: its sequence and its write id.
        fresh = watch(node.tables, table.table_id)
        snapshot = await fresh.wait_kind("snapshot")
        await fresh.cancel()
        assert latest.write
        assert (snapshot.sequence, snapshot.write_id) == (latest.sequence, latest.write)
        for entry in (log[0], log[-3]):
            # The caller's last event is still the table's: the events after it follow.
            kept = _watch_after(node, table.table_id, entry.sequence, entry.write)
            await kept.wait_for(lambda ms: bool(ms) and ms[-1].sequence == latest.sequence, "the events after it")
            await kept.cancel()
            later = log[entry.sequence :]
            assert [(m.sequence, m.write_id) for m in kept.messages] == [(e.sequence, e.write) for e in later]
            # Another write at that sequence: the caller followed another history, a snapshot first.
            other = _watch_after(node, table.table_id, entry.sequence, entry.write + 1)
            first = await other.wait_kind("snapshot")
            await other.cancel()
            assert other.messages[0] is first
            assert (first.sequence, first.write_id) == (latest.sequence, latest.write)

    async def test_a_seats_stream_holds_its_presence_lease_while_the_others_move(
        self, referees: Referees, redis_client: redis.asyncio.Redis
    ) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE, first_dealer=0)
        public = await view(node.tables, table)
        watcher_seat = next(seat for seat in range(3) if seat != public.turn_seat)
        watcher = watch(node.tables, table.table_id, table.tokens[watcher_seat])
        await watcher.wait_kind("snapshot")
        await node.tables.Bid(
            pb.BidRequest(table_id=table.table_id, request_id=rid(), expected_version=public.version, amount=1),
            metadata=table.seat(public.turn_seat),
        )
        await watcher.wait_kind("bid_made")  # the stream has handled an event after its snapshot
        # Besides the seat's call lease (its stream's opening read), the stream's own lease.
        members = await redis_client.zrange(node.store.keys(table.table_id).presence, 0, -1)
        held = [m for m in members if m.startswith(f"{watcher_seat}:".encode()) and m != f"{watcher_seat}:act".encode()]
        assert len(held) == 1, members
        await watcher.cancel()


@pytest.mark.on_each_store
class TestRefusals:
    async def test_an_unknown_table_is_not_found(self, referees: Referees) -> None:
        node = await referees.start()
        await stream_refused(
            node.tables, pb.WatchTableRequest(table_id="no-such-table"), grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND"
        )

    async def test_a_token_of_another_table_or_a_made_up_one_is_unauthenticated(self, referees: Referees) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE)
        other = await create(node.tables, THREE)
        for token in (other.tokens[0], "not-a-token"):
            await stream_refused(
                node.tables,
                pb.WatchTableRequest(table_id=table.table_id),
                grpc.StatusCode.UNAUTHENTICATED,
                "UNAUTHENTICATED",
                token=token,
            )


@pytest.mark.on_each_store
class TestLeaving:
    async def test_a_seat_that_leaves_watches_on_as_a_spectator_and_its_replacement_sees_its_own_hand(
        self, referees: Referees
    ) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE)
        leaver = watch(node.tables, table.table_id, table.tokens[0])
        snapshot = await leaver.wait_kind("snapshot")
        assert snapshot.snapshot.your_hand
        await node.tables.LeaveTable(
            pb.LeaveTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(0)
        )
        joined = await node.tables.JoinTable(
            pb.JoinTableRequest(table_id=table.table_id, request_id=rid(), player_name="newcomer")
        )
        assert joined.seat == 0
        assert joined.seat_token != table.tokens[0]
        newcomer = watch(node.tables, table.table_id, joined.seat_token)
        await newcomer.wait_kind("snapshot")
        await leaver.wait_kind("deal_started")
        kinds = leaver.kinds()
        assert kinds.index("seat_left") < kinds.index("seat_joined") < kinds.index("deal_started")
        dealt = next(m for m in leaver.messages if kind(m) == "deal_started")
        assert dealt.deal_started.round == 2
        assert not dealt.deal_started.your_hand
        # The newcomer's stream shows its own new hand; resuming it shows that deal with the hand too.
        replaced = dataclasses.replace(table, tokens={**table.tokens, 0: joined.seat_token})
        mine = await view(node.tables, replaced, 0)
        assert cards_in(newcomer.messages[0].snapshot.your_hand) == cards_in(mine.your_hand)
        replay = watch(node.tables, table.table_id, joined.seat_token, after=dealt.sequence - 1)
        again = await replay.wait_kind("deal_started")
        assert cards_in(again.deal_started.your_hand) == cards_in(mine.your_hand)
        # The leaver's stream goes on as a spectator's: later changes still arrive.
        await act(node.tables, node.rules, replaced, random.Random(4))
        await leaver.wait_for(lambda ms: kind(ms[-1]) == "bid_made", "a bid after the newcomer joined")
        for watcher in (leaver, newcomer, replay):
            await watcher.cancel()

    async def test_many_streams_of_one_table_share_a_feed_that_ends_when_the_last_one_goes(
        self, referees: Referees
    ) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE)
        watchers = [watch(node.tables, table.table_id, table.tokens.get(n)) for n in range(5)]
        for watcher in watchers:
            await watcher.wait_kind("snapshot")
        assert node.referee.feeds.watched_tables == 1
        await act(node.tables, node.rules, table, random.Random(6))
        for watcher in watchers:
            await watcher.wait_kind("bid_made")
        for watcher in watchers:
            await watcher.cancel()
        for _ in range(200):
            if node.referee.feeds.watched_tables == 0:
                break
            await asyncio.sleep(0.01)
        assert node.referee.feeds.watched_tables == 0


class TestFeedNotifications:
    async def test_a_tables_very_first_event_reaches_a_stream_opened_before_it(self, referees: Referees) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE, players=0)
        assert await node.store.last_sequence(table.table_id) == 0
        watcher = watch(node.tables, table.table_id)
        snapshot = await watcher.wait_kind("snapshot")
        assert snapshot.sequence == 0
        await node.tables.JoinTable(pb.JoinTableRequest(table_id=table.table_id, request_id=rid(), player_name="first"))
        joined = await watcher.wait_kind("seat_joined")
        assert joined.sequence == 1
        assert joined.seat_joined.seat == 0
        await watcher.cancel()

    async def test_a_move_made_while_the_notification_connection_is_down_still_reaches_the_stream(
        self, referees: Referees, redis_client: redis.asyncio.Redis
    ) -> None:
        node = await referees.start(own_redis=True)
        table = await create(node.tables, THREE)
        watcher = watch(node.tables, table.table_id, None)
        await watcher.wait_kind("snapshot")
        killed = await redis_client.client_kill_filter(_type="pubsub")
        assert killed >= 1
        await act(node.tables, node.rules, table, random.Random(8))
        await watcher.wait_kind("bid_made")
        await watcher.cancel()
