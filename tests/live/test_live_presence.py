"""Presence: a seat is connected while its stream is open or shortly after its calls, on any process.

Referees here run with a short call window (0.5 s), so that seats come and go within a test,
and a stream lease of 3 s (renewed every second), long enough that a busy machine never lets
a live stream's lease lapse.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time

import grpc
import pytest
import redis.asyncio

from dizhu.testing import serve_process
from dizhu.v1 import table_pb2
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import THREE, Table, as_seat, rid
from tests.support.live import SOON_S, Node, Referees, Watcher, create, full_log, kind, utc_now_ms, watch

FAST = {"presence_window_s": 0.5, "presence_lease_s": 3.0}
#: A window of an hour: a seat that called stays connected for the whole test.
QUIET = {"presence_window_s": 3600.0, "presence_lease_s": 1800.0}
#: The other process's lease: renewed every 5/3 s, so that only a process stalled for seconds lets it lapse.
FAR_FLAGS = ["--presence-window", "0.5", "--presence-lease", "5"]


def _connected(view: table_pb2.TableView) -> list[bool]:
    return [seat.connected for seat in view.seats]


async def _presence(watcher: Watcher, seat: int, connected: bool, count: int = 1) -> None:
    """Wait for the ``count``-th announcement that ``seat`` came (or went)."""
    await watcher.wait_for(
        lambda ms: (
            sum(
                kind(m) == "seat_presence" and m.seat_presence.seat == seat and m.seat_presence.connected == connected
                for m in ms
            )
            >= count
        ),
        f"seat {seat} {'here' if connected else 'gone'} x{count}",
    )


async def _spectate(tables: object, table_id: str) -> table_pb2.TableView:
    response = await tables.GetTable(pb.GetTableRequest(table_id=table_id))  # type: ignore[attr-defined]
    return response.table  # type: ignore[no-any-return]


async def _watched_auction(referees: Referees) -> tuple[Node, Table, Watcher, table_pb2.TableView]:
    """A quiet referee's new 3p table, watched by a spectator past its snapshot, and its view."""
    node = await referees.start(**QUIET)
    table = await create(node.tables, THREE, first_dealer=0)
    spectator = watch(node.tables, table.table_id)
    await spectator.wait_kind("snapshot")
    return node, table, spectator, await _spectate(node.tables, table.table_id)


@pytest.mark.on_each_store
class TestStreams:
    async def test_a_seat_with_an_open_stream_is_connected_and_announced(self, referees: Referees) -> None:
        node = await referees.start(**FAST)
        table = await create(node.tables, THREE)
        spectator = watch(node.tables, table.table_id)
        first = await spectator.wait_kind("snapshot")
        seat = watch(node.tables, table.table_id, table.tokens[1])
        await _presence(spectator, 1, True)
        assert _connected(first.snapshot) == [False, False, False]
        assert _connected(await _spectate(node.tables, table.table_id)) == [False, True, False]
        # Far past the call window, the open stream still holds the seat.
        await asyncio.sleep(1.5)
        assert _connected(await _spectate(node.tables, table.table_id)) == [False, True, False]
        await seat.cancel()
        await spectator.cancel()

    async def test_a_seat_whose_stream_closed_goes_away(self, referees: Referees) -> None:
        node = await referees.start(**FAST)
        table = await create(node.tables, THREE)
        spectator = watch(node.tables, table.table_id)
        await spectator.wait_kind("snapshot")  # announcements after it are events
        seat = watch(node.tables, table.table_id, table.tokens[0])
        await _presence(spectator, 0, True)
        await seat.cancel()
        await _presence(spectator, 0, False)
        assert _connected(await _spectate(node.tables, table.table_id)) == [False, False, False]
        await spectator.cancel()

    async def test_spectators_and_the_creator_never_count(self, referees: Referees) -> None:
        node = await referees.start(**FAST)
        table = await create(node.tables, THREE)
        spectator = watch(node.tables, table.table_id)
        await spectator.wait_kind("snapshot")  # announcements after it are events
        creator = watch(node.tables, table.table_id, table.creator_token)
        await creator.wait_kind("snapshot")
        await node.tables.GetTable(pb.GetTableRequest(table_id=table.table_id), metadata=table.creator)
        await node.tables.GetTable(pb.GetTableRequest(table_id=table.table_id), metadata=table.seat(2))
        first = await spectator.wait_kind("seat_presence")
        assert (first.seat_presence.seat, first.seat_presence.connected) == (2, True)
        await creator.cancel()
        await spectator.cancel()

    async def test_an_open_streams_lease_is_renewed_and_given_up_when_the_stream_ends(
        self, referees: Referees, redis_client: redis.asyncio.Redis
    ) -> None:
        node = await referees.start(**FAST)  # a 3 s lease, renewed every second
        table = await create(node.tables, THREE)
        key = node.store.keys(table.table_id).presence
        seat = watch(node.tables, table.table_id, table.tokens[1])
        await seat.wait_kind("snapshot")

        async def stream_lease() -> tuple[bytes, float] | None:
            held = [(m, s) for m, s in await redis_client.zrange(key, 0, -1, withscores=True) if m != b"1:act"]
            assert len(held) <= 1, held
            return held[0] if held else None

        taken = await stream_lease()
        assert taken is not None
        assert taken[0].startswith(b"1:")
        member, first = taken
        # Renewed while the stream is open: its expiry moves on (waited for, never timed).
        loop = asyncio.get_running_loop()
        until = loop.time() + SOON_S
        while (await redis_client.zscore(key, member) or 0) <= first:
            assert loop.time() < until, "the stream's lease was never renewed"
            await asyncio.sleep(0.1)
        await seat.cancel()
        # Given up as the stream ends, not left to lapse.
        until = loop.time() + SOON_S
        while await stream_lease() is not None:
            assert loop.time() < until, "the stream's lease was not given up"
            await asyncio.sleep(0.05)


@pytest.mark.on_each_store
class TestCalls:
    async def test_a_call_keeps_a_seat_connected_for_the_window_then_it_goes(self, referees: Referees) -> None:
        node = await referees.start(**FAST)
        table = await create(node.tables, THREE)
        spectator = watch(node.tables, table.table_id)
        await spectator.wait_kind("snapshot")  # announcements after it are events
        read = await node.tables.GetTable(pb.GetTableRequest(table_id=table.table_id), metadata=table.seat(2))
        assert _connected(read.table) == [False, False, True]
        await _presence(spectator, 2, True)
        await _presence(spectator, 2, False)
        here, gone = (m for m in spectator.messages if kind(m) == "seat_presence")
        assert gone.time.ToMilliseconds() - here.time.ToMilliseconds() >= 400  # the window, less clock rounding
        assert here.version == gone.version == read.table.version  # presence changes no state
        await spectator.cancel()

    async def test_a_seat_calling_steadily_within_the_window_stays_connected_without_flickering(
        self, referees: Referees
    ) -> None:
        # Calls 0.9 s apart in a 2 s window: each one must extend the seat's lease, or it lapses
        # between two calls for longer than the sweeper's interval (0.5 s here) and flickers.
        node = await referees.start(presence_window_s=2.0, presence_lease_s=3.0)
        table = await create(node.tables, THREE)
        spectator = watch(node.tables, table.table_id)
        await spectator.wait_kind("snapshot")
        for _ in range(4):
            read = await node.tables.GetTable(pb.GetTableRequest(table_id=table.table_id), metadata=table.seat(2))
            assert _connected(read.table)[2]
            await asyncio.sleep(0.9)
        announced = [m.seat_presence.connected for m in spectator.messages if kind(m) == "seat_presence"]
        assert announced == [True]
        await spectator.cancel()

    async def test_a_move_reports_its_seat_connected(self, referees: Referees) -> None:
        node = await referees.start(**FAST)
        table = await create(node.tables, THREE, first_dealer=0)
        view = await _spectate(node.tables, table.table_id)
        turn = view.turn_seat
        answer = await node.tables.Bid(
            pb.BidRequest(table_id=table.table_id, request_id=rid(), expected_version=view.version, amount=1),
            metadata=table.seat(turn),
        )
        assert [seat.connected for seat in answer.table.seats] == [seat == turn for seat in range(3)]

    async def test_leaving_announces_the_seat_gone(self, referees: Referees) -> None:
        node = await referees.start(**FAST)
        table = await create(node.tables, THREE)
        spectator = watch(node.tables, table.table_id)
        await spectator.wait_kind("snapshot")  # announcements after it are events
        seat = watch(node.tables, table.table_id, table.tokens[1])
        await _presence(spectator, 1, True)
        await node.tables.LeaveTable(
            pb.LeaveTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(1)
        )
        await _presence(spectator, 1, False)
        assert "seat_left" in spectator.kinds()
        view = await _spectate(node.tables, table.table_id)
        assert (view.seats[1].occupied, view.seats[1].connected) == (False, False)
        await seat.cancel()
        await spectator.cancel()

    async def test_nothing_is_announced_after_the_table_closed(self, referees: Referees) -> None:
        node = await referees.start(**FAST)
        table = await create(node.tables, THREE)
        seats = [watch(node.tables, table.table_id, token) for token in table.tokens.values()]
        for seat in seats:
            await seat.wait_kind("snapshot")
        await node.tables.CloseTable(
            pb.CloseTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.creator
        )
        for seat in seats:
            assert await seat.closed() == grpc.StatusCode.OK
        await asyncio.sleep(1.0)  # the closed streams' releases have run (or would have announced by now)
        log = await full_log(node.tables, table.table_id)
        assert kind(log[-1]) == "table_closed"
        assert sum(kind(event) == "seat_presence" for event in log) == 3  # the three streams' arrivals
        assert _connected(await _spectate(node.tables, table.table_id)) == [False, False, False]

    async def test_taking_a_seat_counts_as_the_joiners_call_and_no_one_elses(self, referees: Referees) -> None:
        node = await referees.start(**QUIET)
        table = await create(node.tables, THREE, players=1)
        spectator = watch(node.tables, table.table_id)
        await spectator.wait_kind("snapshot")  # announcements after it are events
        joined = await node.tables.JoinTable(
            pb.JoinTableRequest(table_id=table.table_id, request_id=rid(), player_name="p1")
        )
        assert joined.seat == 1
        assert _connected(joined.table) == [False, True, False]
        await _presence(spectator, 1, True)
        # Seat 0 calls; the next seat taken finds it announced, and the newcomer here too.
        read = await node.tables.GetTable(pb.GetTableRequest(table_id=table.table_id), metadata=table.seat(0))
        assert _connected(read.table) == [True, True, False]
        await _presence(spectator, 0, True)
        last = await node.tables.JoinTable(
            pb.JoinTableRequest(table_id=table.table_id, request_id=rid(), player_name="p2")
        )
        assert last.seat == 2
        assert _connected(last.table) == [True, True, True]
        await _presence(spectator, 2, True)
        assert _connected(await _spectate(node.tables, table.table_id)) == [True, True, True]
        # No seat was ever announced gone (the window is an hour).
        assert [
            (m.seat_presence.seat, m.seat_presence.connected) for m in spectator.messages if kind(m) == "seat_presence"
        ] == [(1, True), (0, True), (2, True)]
        # Closing: the creator's answer shows nobody connected.
        closed = await node.tables.CloseTable(
            pb.CloseTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.creator
        )
        assert _connected(closed.table) == [False, False, False]
        await spectator.cancel()

    async def test_a_move_announces_its_seat_and_leaving_announces_only_the_leaver_gone(
        self, referees: Referees
    ) -> None:
        node, table, spectator, view = await _watched_auction(referees)
        turn = view.turn_seat
        await node.tables.Bid(
            pb.BidRequest(table_id=table.table_id, request_id=rid(), expected_version=view.version, amount=1),
            metadata=table.seat(turn),
        )
        await _presence(spectator, turn, True)
        other = (turn + 1) % 3
        await node.tables.GetTable(pb.GetTableRequest(table_id=table.table_id), metadata=table.seat(other))
        await _presence(spectator, other, True)
        await node.tables.LeaveTable(
            pb.LeaveTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(other)
        )
        await _presence(spectator, other, False)
        expected = [seat in (turn,) for seat in range(3)]
        assert _connected(await _spectate(node.tables, table.table_id)) == expected
        announced = [
            (m.seat_presence.seat, m.seat_presence.connected) for m in spectator.messages if kind(m) == "seat_presence"
        ]
        assert announced == [(turn, True), (other, True), (other, False)]
        await spectator.cancel()

    async def test_a_seat_with_an_open_stream_calls_and_moves_without_a_second_announcement(
        self, referees: Referees, redis_client: redis.asyncio.Redis
    ) -> None:
        node, table, spectator, view = await _watched_auction(referees)
        turn = view.turn_seat
        stream = watch(node.tables, table.table_id, table.tokens[turn])
        await _presence(spectator, turn, True)
        for _ in range(2):
            read = await node.tables.GetTable(pb.GetTableRequest(table_id=table.table_id), metadata=table.seat(turn))
            assert _connected(read.table) == [seat == turn for seat in range(3)]
        answer = await node.tables.Bid(
            pb.BidRequest(table_id=table.table_id, request_id=rid(), expected_version=view.version, amount=1),
            metadata=table.seat(turn),
        )
        assert _connected(answer.table) == [seat == turn for seat in range(3)]
        await spectator.wait_kind("bid_made")
        announced = [
            (m.seat_presence.seat, m.seat_presence.connected) for m in spectator.messages if kind(m) == "seat_presence"
        ]
        assert announced == [(turn, True)]
        # The stream ends: the seat's calls keep it connected (the window is an hour).
        await stream.cancel()
        key = node.store.keys(table.table_id).presence
        loop = asyncio.get_running_loop()
        until = loop.time() + SOON_S
        while any(member != f"{turn}:act".encode() for member in await redis_client.zrange(key, 0, -1)):
            assert loop.time() < until, "the stream's lease was not given up"
            await asyncio.sleep(0.05)
        assert _connected(await _spectate(node.tables, table.table_id)) == [seat == turn for seat in range(3)]
        await spectator.cancel()

    async def test_a_seat_left_and_taken_again_at_once_has_its_newcomer_announced(self, referees: Referees) -> None:
        node = await referees.start(**QUIET)
        table = await create(node.tables, THREE)
        spectator = watch(node.tables, table.table_id)
        await spectator.wait_kind("snapshot")
        for seat in (2, 1):  # seat 2, beside seat 1, is announced here throughout
            await node.tables.GetTable(pb.GetTableRequest(table_id=table.table_id), metadata=table.seat(seat))
            await _presence(spectator, seat, True)
        await node.tables.LeaveTable(
            pb.LeaveTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(1)
        )
        await _presence(spectator, 1, False)
        joined = await node.tables.JoinTable(
            pb.JoinTableRequest(table_id=table.table_id, request_id=rid(), player_name="newcomer")
        )
        assert joined.seat == 1
        assert _connected(joined.table) == [False, True, True]
        await _presence(spectator, 1, True, count=2)
        assert _connected(await _spectate(node.tables, table.table_id)) == [False, True, True]
        await spectator.cancel()

    async def test_an_announcements_time_is_utc_whatever_the_machines_time_zone(
        self, referees: Referees, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        node = await referees.start(**QUIET)
        table = await create(node.tables, THREE)
        spectator = watch(node.tables, table.table_id)
        await spectator.wait_kind("snapshot")
        monkeypatch.setenv("TZ", "Asia/Shanghai")  # eight hours ahead of UTC
        time.tzset()
        try:
            before = utc_now_ms()
            await node.tables.GetTable(pb.GetTableRequest(table_id=table.table_id), metadata=table.seat(2))
            after = utc_now_ms()
        finally:
            monkeypatch.undo()
            time.tzset()
        here = await spectator.wait_kind("seat_presence")
        assert before <= here.time.ToMilliseconds() <= after
        await spectator.cancel()


class TestProcesses:
    async def test_a_stream_on_another_process_counts_and_its_death_is_noticed(
        self, referees: Referees, redis_url: str
    ) -> None:
        """The seat's stream is on a ``dizhu serve`` process that is killed (SIGKILL): its lease lapses."""
        node = await referees.start(**FAST)
        table = await create(node.tables, THREE)
        spectator = watch(node.tables, table.table_id)
        await spectator.wait_kind("snapshot")  # announcements after it are events
        with serve_process(redis_url, args=["--key-prefix", "dizhu", "--log-level", "warning", *FAR_FLAGS]) as other:
            async with grpc.aio.insecure_channel(other.target) as channel:
                from dizhu.v1 import table_service_pb2_grpc

                stub = table_service_pb2_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
                far = watch(stub, table.table_id, table.tokens[2])
                await _presence(spectator, 2, True)
                await asyncio.sleep(6.0)  # renewed by the other process, past the lease
                assert _connected(await _spectate(node.tables, table.table_id)) == [False, False, True]
                os.kill(other.process.pid, signal.SIGKILL)
                other.process.wait(timeout=SOON_S)
                await _presence(spectator, 2, False)
                await far.cancel()
        assert _connected(await _spectate(node.tables, table.table_id)) == [False, False, False]
        await spectator.cancel()

    async def test_a_seat_announced_by_one_referee_calls_another_which_extends_its_call(
        self, referees: Referees, redis_client: redis.asyncio.Redis
    ) -> None:
        first = await referees.start(**QUIET)
        second = await referees.start(own_redis=True, **QUIET)
        table = await create(first.tables, THREE)
        spectator = watch(first.tables, table.table_id)
        await spectator.wait_kind("snapshot")  # announcements after it are events
        await first.tables.GetTable(pb.GetTableRequest(table_id=table.table_id), metadata=table.seat(1))
        await _presence(spectator, 1, True)
        # The other referee has never refreshed seat 1 itself: it does so now, on its first call there.
        key = first.store.keys(table.table_id).presence
        before = await redis_client.zscore(key, "1:act")
        assert before is not None
        read = await second.tables.GetTable(pb.GetTableRequest(table_id=table.table_id), metadata=table.seat(1))
        assert _connected(read.table) == [False, True, False]
        assert (await redis_client.zscore(key, "1:act") or 0) > before
        announced = [
            (m.seat_presence.seat, m.seat_presence.connected) for m in spectator.messages if kind(m) == "seat_presence"
        ]
        assert announced == [(1, True)]
        await spectator.cancel()


async def test_a_stream_with_a_revoked_token_is_refused_and_counts_for_nobody(referees: Referees) -> None:
    node = await referees.start(**FAST)
    table = await create(node.tables, THREE)
    await node.tables.LeaveTable(
        pb.LeaveTableRequest(table_id=table.table_id, request_id=rid()), metadata=as_seat(table.tokens[0])
    )
    watcher = watch(node.tables, table.table_id, table.tokens[0])
    assert await watcher.closed() == grpc.StatusCode.UNAUTHENTICATED
    assert not any(seat.connected for seat in (await _spectate(node.tables, table.table_id)).seats)
