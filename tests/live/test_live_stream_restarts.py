"""How a stream joins what it reads from the store with what its feed hands it.

``WatchTable`` streams are driven here through the service's own ``watch`` over a real
referee's table reads and store, with a feed of their own: one that keeps no queue at all
(``queue_limit=0``), so that the first event the feed hands out marks the stream LAGGING as a
full queue would, without having to outrun a gRPC stream's flow control; and an ordinary one,
whose events the stream has already read from the store.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from dizhu.service.feeds import TableFeeds
from dizhu.service.metadata import Credentials
from dizhu.service.watch import watch
from dizhu.v1 import events_pb2
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import THREE, rid
from tests.support.live import Node, Referees, create, kind


@contextlib.asynccontextmanager
async def _watching(
    node: Node, table_id: str, token: str | None, *, queue_limit: int = 1000
) -> AsyncIterator[AsyncIterator[events_pb2.TableEvent]]:
    """``watch`` of ``table_id`` as ``token``'s holder (a spectator without one), with a feed of its own."""
    feeds = TableFeeds(node.store, heartbeat_s=3600, queue_limit=queue_limit)
    credentials = Credentials(() if token is None else (f"Bearer {token}",))
    stream = watch(node.referee.grpc.tables.reads, node.store, feeds, table_id, credentials, None)
    try:
        yield stream
    finally:
        await stream.aclose()  # type: ignore[attr-defined]
        await feeds.close()


async def _until_snapshot(stream: AsyncIterator[events_pb2.TableEvent]) -> list[events_pb2.TableEvent]:
    """The stream's messages up to and including its next snapshot."""
    messages = [await anext(stream)]
    while kind(messages[-1]) != "snapshot":
        messages.append(await anext(stream))
    return messages


class TestALaggingStreamStartsAgain:
    async def test_with_the_seats_own_view_while_it_holds_the_seat(self, referees: Referees) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE, players=2)
        async with _watching(node, table.table_id, table.tokens[0], queue_limit=0) as stream:
            first = await anext(stream)
            assert (kind(first), first.snapshot.your_seat) == ("snapshot", 0)
            await node.tables.JoinTable(pb.JoinTableRequest(table_id=table.table_id, request_id=rid(), player_name="c"))
            *missed, again = await _until_snapshot(stream)
            assert "seat_joined" in [kind(message) for message in missed]
            assert again.snapshot.your_seat == 0
            assert again.snapshot.your_hand  # the deal the join started, seen from seat 0

    async def test_as_a_spectators_once_the_seat_was_left(self, referees: Referees) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE)
        async with _watching(node, table.table_id, table.tokens[0], queue_limit=0) as stream:
            first = await anext(stream)
            assert first.snapshot.your_hand
            await node.tables.LeaveTable(
                pb.LeaveTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(0)
            )
            # The seat's token is revoked: the stream starts again as a spectator's, not refused.
            *missed, again = await _until_snapshot(stream)
            assert "seat_left" in [kind(message) for message in missed]
            assert not again.snapshot.HasField("your_seat")
            assert not again.snapshot.your_hand
            assert not again.snapshot.seats[0].occupied

    async def test_as_a_spectators_for_a_spectator(self, referees: Referees) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE, players=2)
        async with _watching(node, table.table_id, None, queue_limit=0) as stream:
            first = await anext(stream)
            assert (kind(first), first.snapshot.HasField("your_seat")) == ("snapshot", False)
            await node.tables.JoinTable(pb.JoinTableRequest(table_id=table.table_id, request_id=rid(), player_name="c"))
            *_, again = await _until_snapshot(stream)
            assert not again.snapshot.HasField("your_seat")
            assert not again.snapshot.your_hand
            assert again.snapshot.seats[2].occupied


class TestEventsReadTwice:
    async def test_an_event_read_from_the_store_and_then_handed_by_the_feed_is_skipped(
        self, referees: Referees
    ) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE, players=1)
        async with _watching(node, table.table_id, None) as stream:
            snapshot = await anext(stream)  # subscribed to the feed before it was taken
            assert kind(snapshot) == "snapshot"
            # Joined while the stream waits: the events are in the store and in the feed's queue,
            # and the stream reads the store first. The feed's copies are skipped, and it goes on.
            await node.tables.JoinTable(pb.JoinTableRequest(table_id=table.table_id, request_id=rid(), player_name="b"))
            messages = [await anext(stream)]
            await node.tables.JoinTable(pb.JoinTableRequest(table_id=table.table_id, request_id=rid(), player_name="c"))
            while not (kind(messages[-1]) == "seat_joined" and messages[-1].seat_joined.seat == 2):
                messages.append(await anext(stream))
            sequences = [message.sequence for message in messages]
            assert sequences == list(range(snapshot.sequence + 1, snapshot.sequence + 1 + len(messages)))
            assert [m.seat_joined.seat for m in messages if kind(m) == "seat_joined"] == [1, 2]
