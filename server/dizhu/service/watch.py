"""``WatchTable``: a table's events as one viewer may see them, resumable after a disconnect.

The stream starts with a snapshot (or, when resuming, with the events after the caller's
last sequence, if they are still kept), then carries every change in order and a heartbeat
when idle. It ends after the table closes. A seat that leaves the table goes on watching
as a spectator.

A history rewritten behind the caller (the store restored behind its last writes, so later
events reuse sequence numbers the caller holds for others) is answered with a fresh
snapshot: on an open stream when its feed notices (``REWRITTEN``, see
:mod:`dizhu.service.feeds`), and on a resume whose ``after_write`` is not the write id the
table's log now has at ``after_sequence``.

No message of a stream is stamped earlier than the one before it (docs/api.md): a snapshot
or heartbeat carries this process's clock, raised to the time of the event the stream starts
from and to anything it sent before; an event stored with an earlier time (another referee's
clock, behind this one's) is sent with the stream's latest time instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
from collections.abc import AsyncGenerator

from dizhu.referee.auth import Role
from dizhu.referee.errors import SequenceOutOfRange
from dizhu.referee.table import TableStatus
from dizhu.service.convert import table_view
from dizhu.service.event_codec import decode_event
from dizhu.service.feeds import HEARTBEAT, LAGGING, REWRITTEN, TableFeeds
from dizhu.service.metadata import Credentials
from dizhu.service.presence import StreamLease, mark_presence
from dizhu.service.table_reads import Snapshot, TableReads
from dizhu.store import StoredEvent, TableStore
from dizhu.v1 import events_pb2

__all__ = ["keep_decoded_events_of", "watch"]

_HISTORY_CHUNK = 500


def _snapshot(snapshot: Snapshot, time_ms: int) -> events_pb2.TableEvent:
    """The first message of a stream that is no resume: the table as the caller may see it."""
    event = events_pb2.TableEvent(sequence=snapshot.sequence, version=snapshot.table.version, write_id=snapshot.write)
    event.snapshot.CopyFrom(table_view(snapshot.table, snapshot.principal))
    mark_presence(event.snapshot, snapshot.presence)
    event.time.FromMilliseconds(time_ms)
    return event


def _heartbeat(sequence: int, write: int, time_ms: int) -> events_pb2.TableEvent:
    heartbeat = events_pb2.TableEvent(sequence=sequence, write_id=write)
    heartbeat.heartbeat.SetInParent()
    heartbeat.time.FromMilliseconds(time_ms)
    return heartbeat


@dataclasses.dataclass(slots=True)
class _Following:
    """What a stream carries from one subscription to the next."""

    #: The seat whose view the stream shows; None: a spectator's.
    viewer: int | None
    #: The latest time the caller was shown (see ``_later``).
    shown_ms: int
    #: Set when the subscription ended too far behind, or on a rewritten history: start again.
    again: bool = False


async def watch(
    reads: TableReads,
    store: TableStore,
    feeds: TableFeeds,
    table_id: str,
    credentials: Credentials,
    after_sequence: int | None,
    after_write: int = 0,
    *,
    shown_ms: int = 0,
) -> AsyncGenerator[events_pb2.TableEvent, None]:
    """The events of ``table_id`` for the caller (see the module docstring); none of them
    stamped earlier than ``shown_ms``, the latest time the caller was shown (see ``_later``)."""
    # Read before subscribing, so an unknown table or a bad token fails at once. Events after
    # this snapshot's sequence that the subscription misses are read back from the store below.
    taken = await reads.snapshot(table_id, credentials)
    seat = _seat(taken)
    resume_after, start_ms = await _start(store, table_id, after_sequence, after_write, taken.sequence)
    # Nothing earlier than the event the stream starts from (which the caller has seen, or the
    # snapshot shows), whichever referee's clock stamped it.
    following = _Following(viewer=seat, shown_ms=max(shown_ms, start_ms))
    # A seat counts as connected while its stream is open (see dizhu.service.presence), across
    # the stream's fresh starts.
    async with reads.presence.stream_lease(taken.table, seat) as here:
        while True:
            events = _subscribed(reads, store, feeds, taken, resume_after, after_write, following, here)
            async with contextlib.aclosing(events):
                async for event in events:
                    yield event
            if not following.again:
                return
            # Too far behind to keep a queue, or following a history that is no longer the
            # table's: the subscription is left; start again from a fresh snapshot (as a
            # spectator if the seat was left meanwhile: its token is revoked). A loop, not a
            # stream within the stream: a reader that lags for hours restarts thousands of times.
            watcher = credentials if following.viewer is not None or seat is None else Credentials()
            taken = await reads.snapshot(table_id, watcher)
            resume_after, start_ms = await _start(store, table_id, None, 0, taken.sequence)
            following = _Following(viewer=_seat(taken), shown_ms=max(following.shown_ms, start_ms))


def _seat(taken: Snapshot) -> int | None:
    """The seat whose view a snapshot shows; None for a spectator's."""
    return taken.principal.seat if taken.principal.role is Role.SEAT else None


async def _subscribed(
    reads: TableReads,
    store: TableStore,
    feeds: TableFeeds,
    taken: Snapshot,
    resume_after: int | None,
    after_write: int,
    following: _Following,
    here: StreamLease,
) -> AsyncGenerator[events_pb2.TableEvent, None]:
    """The stream's messages while it holds one subscription to the table's feed: the snapshot
    ``taken`` (or, from ``resume_after``, nothing), the events after it, then the feed's; it
    ends when the table closes, or with ``following.again`` set when the feed gave up on it."""
    table_id, now_ms = taken.table.table_id, reads.presence.now_ms  # this process's clock
    async with feeds.subscribe(table_id) as subscription:
        _unless_cancelled()
        if resume_after is not None:
            last, last_write = resume_after, after_write
        else:
            last, last_write = taken.sequence, taken.write
            following.shown_ms = max(following.shown_ms, now_ms())
            yield _snapshot(taken, following.shown_ms)
        while True:
            history = await store.read_entries(table_id, last, count=_HISTORY_CHUNK)
            _unless_cancelled()
            for entry in history:
                event, closed = await _delivered(entry, following, here)
                last, last_write = entry.sequence, entry.write
                yield event
                if closed:
                    return
            if len(history) < _HISTORY_CHUNK:
                break
        if taken.table.status is TableStatus.CLOSED:
            # A closed table never changes: its snapshot or history was all there is to say.
            return
        while True:
            _unless_cancelled()
            entry = await subscription.queue.get()
            if entry is HEARTBEAT:
                following.shown_ms = max(following.shown_ms, now_ms())
                yield _heartbeat(last, last_write, following.shown_ms)
                continue
            if entry is LAGGING or entry is REWRITTEN:
                following.again = True
                return
            if entry.sequence <= last:
                continue
            event, closed = await _delivered(entry, following, here)
            last, last_write = entry.sequence, entry.write
            yield event
            if closed:
                return


async def _delivered(
    entry: StoredEvent, following: _Following, here: StreamLease
) -> tuple[events_pb2.TableEvent, bool]:
    """``entry`` as the stream delivers it, and whether the stream ends with it."""
    event, following.viewer, closed = _event(entry, following.viewer)
    event, following.shown_ms = _later(event, following.shown_ms)
    if following.viewer is None:
        await here.release()  # the seat was left: this stream no longer keeps it connected
    return event, closed


def _later(event: events_pb2.TableEvent, shown_ms: int) -> tuple[events_pb2.TableEvent, int]:
    """``event`` as delivered after a message of time ``shown_ms``, and the time delivered.

    Stored events never go back in time, but a snapshot or heartbeat carries the serving
    process's clock, which may be ahead of the one that stamped the next event (another
    referee's, or this one's while the write was on its way): that event is delivered with
    the time already shown instead (a copy: decoded events are shared by every stream).
    """
    time_ms: int = event.time.ToMilliseconds()
    if time_ms >= shown_ms:
        return event, time_ms
    later = events_pb2.TableEvent()
    later.CopyFrom(event)
    later.time.FromMilliseconds(shown_ms)
    return later, shown_ms


def _unless_cancelled() -> None:
    """Raise CancelledError if the stream's task was cancelled (its client left) and the
    cancellation got lost on the way.

    Python 3.11's ``asyncio.wait_for``, which redis-py's commands go through when the client
    has a socket timeout, returns the reply and drops a cancellation that arrives as the reply
    does (fixed in Python 3.12). A stream cancelled while it read Redis then went on waiting
    for its table's next event, holding its stream slot and its seat's presence until a
    write to the gone client failed (the next heartbeat). The task still says it was
    cancelled: checked before each wait and each write, the stream ends at once.
    """
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


#: Every stream of a table is handed the same stored event: each viewer's version of it is
#: decoded once per process (shared, never changed), not once per stream.
_decoded = functools.lru_cache(maxsize=4096)(decode_event)


def keep_decoded_events_of(events: int) -> None:
    """Keep at most ``events`` decoded events in this process (4,096 unless set); those kept are forgotten."""
    global _decoded  # noqa: PLW0603 -- the process's one cache, resized
    _decoded = functools.lru_cache(maxsize=events)(decode_event)


async def _start(
    store: TableStore, table_id: str, after_sequence: int | None, after_write: int, latest: int
) -> tuple[int | None, int]:
    """Where a stream goes on from -- ``after_sequence`` when every event after it is still kept
    and (given ``after_write``) the caller's last event is still the table's; None for a fresh
    snapshot of the state at the ``latest`` sequence -- and the time of the table's event there
    (0 if none is kept). Beyond the ``latest`` sequence, without ``after_write``:
    SEQUENCE_OUT_OF_RANGE."""
    resume_after, caller_last = await _resume_point(store, table_id, after_sequence, after_write, latest)
    sequence = latest if resume_after is None else resume_after
    if caller_last is None or caller_last.sequence != sequence:  # not already read to check the resume
        caller_last = await _logged(store, table_id, sequence) if sequence else None
    return resume_after, caller_last.time_ms if caller_last is not None else 0


async def _resume_point(
    store: TableStore, table_id: str, after_sequence: int | None, after_write: int, latest: int
) -> tuple[int | None, StoredEvent | None]:
    """See :func:`_start`; with the caller's last event when it was read to check ``after_write``."""
    if after_sequence is None:
        return None, None
    caller_last = None
    if after_write:
        caller_last = await _logged(store, table_id, after_sequence)
        if caller_last is None or caller_last.write != after_write:
            return None, None  # the caller's history is no longer the table's
    if after_sequence > latest:
        raise SequenceOutOfRange(
            f"sequence {after_sequence} is beyond the table's latest, {latest}",
            metadata={"table_id": table_id, "latest_sequence": str(latest)},
        )
    if after_sequence == latest:
        return after_sequence, caller_last
    oldest = await store.oldest_sequence(table_id)
    return (after_sequence if oldest is not None and after_sequence + 1 >= oldest else None), caller_last


async def _logged(store: TableStore, table_id: str, sequence: int) -> StoredEvent | None:
    """The table's event ``sequence`` if its log still has it."""
    entries = await store.read_entries(table_id, max(sequence - 1, 0), count=1)
    return entries[0] if entries and entries[0].sequence == sequence else None


def _event(entry: StoredEvent, viewer: int | None) -> tuple[events_pb2.TableEvent, int | None, bool]:
    """The event as ``viewer`` sees it, the viewer from now on, and whether the stream ends."""
    event = _decoded(entry.payload, viewer, entry.sequence, entry.time_ms, entry.write)
    kind = event.WhichOneof("payload")
    if kind == "seat_left" and event.seat_left.seat == viewer:
        viewer = None  # the seat is someone else's from now on: watch on as a spectator
    return event, viewer, kind == "table_closed"
