"""A ``WatchTable`` stream that falls too far behind goes on from a fresh snapshot, on a real referee.

The referee keeps at most one event waiting per stream (``stream_backlog=1``; for a seat's
stream, a ``dizhu serve --stream-backlog 1`` process of its own). A join that
completes the table writes two events at once (the seat taken, the deal started), which the
process's feed hands every stream of the table together, before any of them can send one:
each stream then holds more than it may, is told so (``LAGGING``, see
:mod:`dizhu.service.feeds`) and starts again from a fresh snapshot, as docs/api.md says. Its
client reads nothing while that happens.
"""

from __future__ import annotations

import asyncio

import grpc

from dizhu.v1 import table_pb2, table_service_pb2_grpc
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import THREE, TableStub, as_seat, rid
from tests.support.live import SOON_S, Event, Referees, create, kind
from tests.support.referees import served_referee


async def _until_snapshot(call: grpc.aio.UnaryStreamCall) -> list[Event]:  # type: ignore[type-arg]
    """The stream's next messages (heartbeats aside) up to and including its next snapshot."""
    messages: list[Event] = []
    async with asyncio.timeout(SOON_S):
        while "snapshot" not in [kind(message) for message in messages]:
            response = await call.read()
            assert response is not grpc.aio.EOF, [kind(message) for message in messages]
            if kind(response.event) != "heartbeat":
                messages.append(response.event)
    return messages


async def _complete(tables: TableStub, table_id: str) -> None:
    """The third player joins: the seat taken and the deal started, in one write."""
    await tables.JoinTable(pb.JoinTableRequest(table_id=table_id, request_id=rid(), player_name="c"))


class TestAStreamThatFellBehind:
    async def test_goes_on_from_a_fresh_snapshot_of_the_table_as_it_now_is(self, referees: Referees) -> None:
        node = await referees.start(stream_backlog=1, heartbeat_s=3600)
        table = await create(node.tables, THREE, players=2)
        call = node.tables.WatchTable(pb.WatchTableRequest(table_id=table.table_id))
        first = (await call.read()).event
        assert kind(first) == "snapshot"
        await _complete(node.tables, table.table_id)  # read by nobody for now
        *between, again = await _until_snapshot(call)
        # Before the fresh snapshot, only what the stream had sent of the join (the events
        # its feed handed it; or both, if it read them from Redis after its first snapshot).
        assert [kind(message) for message in between] in ([], ["seat_joined"], ["seat_joined", "deal_started"])
        latest = await node.store.last_sequence(table.table_id)
        assert again.sequence >= first.sequence + 2  # past both events of the join
        assert again.sequence <= latest
        view = again.snapshot
        assert [seat.occupied for seat in view.seats] == [True, True, True]
        assert view.phase == table_pb2.PHASE_AUCTION
        assert not view.HasField("your_seat")
        call.cancel()

    async def test_of_a_seat_goes_on_from_a_snapshot_with_that_seats_hand(self, redis_url: str) -> None:
        flags = ["--stream-backlog", "1", "--heartbeat", "3600"]
        with served_referee(redis_url, "backlog", flags=flags) as target:
            async with grpc.aio.insecure_channel(target) as channel:
                tables = table_service_pb2_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
                table = await create(tables, THREE, players=2)
                call = tables.WatchTable(
                    pb.WatchTableRequest(table_id=table.table_id), metadata=as_seat(table.tokens[0])
                )
                first = (await call.read()).event
                assert (kind(first), first.snapshot.your_seat, len(first.snapshot.your_hand)) == ("snapshot", 0, 0)
                await _complete(tables, table.table_id)
                *_, again = await _until_snapshot(call)
                assert again.snapshot.your_seat == 0
                assert len(again.snapshot.your_hand) == 17  # the deal the join started, as seat 0 sees it
                call.cancel()

    async def test_is_not_started_again_while_its_backlog_holds_what_it_is_given(self, referees: Referees) -> None:
        node = await referees.start(stream_backlog=2, heartbeat_s=3600)
        table = await create(node.tables, THREE, players=2)
        call = node.tables.WatchTable(pb.WatchTableRequest(table_id=table.table_id))
        assert kind((await call.read()).event) == "snapshot"
        await _complete(node.tables, table.table_id)
        kinds = []
        async with asyncio.timeout(SOON_S):
            while "deal_started" not in kinds:
                kinds.append(kind((await call.read()).event))
        assert kinds == ["seat_joined", "deal_started"]
        call.cancel()
