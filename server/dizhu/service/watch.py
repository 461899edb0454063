"""``WatchTable``: a table's events as one viewer may see them, resumable after a disconnect.

The stream starts with a snapshot (or, when resuming, with the events after the caller's
last sequence, if they are still kept), then carries every change in order and a heartbeat
when idle. It ends after the table closes. A seat that leaves the table goes on watching
as a spectator.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import AsyncIterator

from dizhu.referee.auth import Role
from dizhu.referee.errors import SequenceOutOfRange
from dizhu.referee.table import TableStatus
from dizhu.service.convert import table_view
from dizhu.service.event_codec import decode_event
from dizhu.service.feeds import HEARTBEAT, LAGGING, TableFeeds
from dizhu.service.metadata import Credentials
from dizhu.service.presence import mark_presence
from dizhu.service.unit_of_work import UnitOfWork
from dizhu.store import TableStore
from dizhu.v1 import events_pb2, table_pb2

__all__ = ["watch"]

_HISTORY_CHUNK = 500


def _snapshot(view: table_pb2.TableView, sequence: int, version: int) -> events_pb2.TableEvent:
    event = events_pb2.TableEvent(sequence=sequence, version=version)
    event.snapshot.CopyFrom(view)
    event.time.FromDatetime(dt.datetime.now(tz=dt.UTC))
    return event


async def watch(
    unit_of_work: UnitOfWork,
    store: TableStore,
    feeds: TableFeeds,
    table_id: str,
    credentials: Credentials,
    after_sequence: int | None,
) -> AsyncIterator[events_pb2.TableEvent]:
    """The events of ``table_id`` for the caller (see the module docstring)."""
    # Read before subscribing, so an unknown table or a bad token fails at once. Events after
    # this snapshot's sequence that the subscription misses are read back from the store below.
    table, principal, snapshot_sequence, presence = await unit_of_work.snapshot(table_id, credentials)
    viewer = seat = principal.seat if principal.role is Role.SEAT else None
    if after_sequence is not None and after_sequence > snapshot_sequence:
        raise SequenceOutOfRange(
            f"sequence {after_sequence} is beyond the table's latest, {snapshot_sequence}",
            metadata={"table_id": table_id, "latest_sequence": str(snapshot_sequence)},
        )
    # A seat counts as connected while its stream is open (see dizhu.service.presence).
    async with feeds.subscribe(table_id) as subscription, unit_of_work.presence.stream_lease(table, seat) as here:
        # Resume without a snapshot when every event the caller missed is still kept.
        resume = False
        if after_sequence is not None:
            oldest = await store.oldest_sequence(table_id)
            kept = oldest is not None and after_sequence + 1 >= oldest
            resume = after_sequence == snapshot_sequence or kept
        if resume and after_sequence is not None:
            last = after_sequence
        else:
            last = snapshot_sequence
            snapshot = _snapshot(table_view(table, principal), snapshot_sequence, table.version)
            mark_presence(snapshot.snapshot, presence)
            yield snapshot
        while True:
            history = await store.read_events(table_id, last, count=_HISTORY_CHUNK)
            for sequence, payload in history:
                event, viewer, closed = _event(payload, viewer, sequence)
                last = sequence
                if viewer is None:
                    await here.release()  # the seat was left: this stream no longer keeps it connected
                yield event
                if closed:
                    return
            if len(history) < _HISTORY_CHUNK:
                break
        if table.status is TableStatus.CLOSED:
            # A closed table never changes: its snapshot or history was all there is to say.
            return
        while True:
            sequence, payload = await subscription.queue.get()
            if sequence == HEARTBEAT[0]:
                heartbeat = events_pb2.TableEvent(sequence=last)
                heartbeat.heartbeat.SetInParent()
                heartbeat.time.GetCurrentTime()
                yield heartbeat
                continue
            if sequence == LAGGING[0]:
                # Too far behind to keep a queue: start again from a fresh snapshot (as a
                # spectator if the seat was left meanwhile: its token is revoked).
                watcher = credentials if viewer is not None or seat is None else Credentials()
                async for event in watch(unit_of_work, store, feeds, table_id, watcher, None):
                    yield event
                return
            if sequence <= last:
                continue
            event, viewer, closed = _event(payload, viewer, sequence)
            last = sequence
            if viewer is None:
                await here.release()
            yield event
            if closed:
                return


#: Every stream of a table is handed the same stored event: each viewer's version of it is
#: decoded once per process (shared, never changed), not once per stream.
_decoded = functools.lru_cache(maxsize=4096)(decode_event)


def _event(payload: bytes, viewer: int | None, sequence: int) -> tuple[events_pb2.TableEvent, int | None, bool]:
    """The event as ``viewer`` sees it, the viewer from now on, and whether the stream ends."""
    event = _decoded(payload, viewer, sequence)
    kind = event.WhichOneof("payload")
    if kind == "seat_left" and event.seat_left.seat == viewer:
        viewer = None  # the seat is someone else's from now on: watch on as a spectator
    return event, viewer, kind == "table_closed"
