"""Seat presence: whether a seat's player is here (``SeatView.connected``), and SeatPresence events.

A seat is connected while it is occupied and, on any referee process,

- has a ``WatchTable`` stream open with its seat token: the stream holds a lease that its
  process renews every third of ``lease_s``; if the process dies, the lease lapses
  ``lease_s`` after its last renewal; or
- made a call with its seat token (``GetTable``, ``Bid``, ``Play``, ``Settle``, ...; taking
  the seat counts too) within the last ``window_s``.

The leases live in Redis (:mod:`dizhu.store.presence`). Whoever changes them -- a call, a
stream opening or closing, a process's sweeper finding a lease lapsed -- announces any
change once, as a ``SeatPresence`` event in the table's stream, and records it in the
table's state hash, where every read of the table finds it: views are marked from that,
never from a process's memory. Nothing is announced once a table is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Final

import structlog
from google.protobuf.message import Message

from dizhu.referee.table import TableState, TableStatus
from dizhu.service.event_codec import encode_public
from dizhu.service.loop_failures import LoopFailures
from dizhu.store.presence import UNKNOWN, PresenceOutcome, PresenceStore
from dizhu.v1 import events_pb2, table_pb2

__all__ = ["Presence", "StreamLease", "mark_presence", "occupied_mask", "run_presence_sweeper"]

_log = structlog.get_logger("dizhu.presence")
_ATTEMPTS: Final = 4


def occupied_mask(table: TableState) -> int:
    """The occupied seats of ``table``, bit ``s`` for seat ``s``."""
    return sum(1 << seat for seat, held in enumerate(table.seats) if held.occupied)


def mark_presence(message: Message, mask: int) -> None:
    """Set ``connected`` on every seat of a view, or of the view a response carries (its ``table``)."""
    view = message if isinstance(message, table_pb2.TableView) else getattr(message, "table", None)
    if isinstance(view, table_pb2.TableView):
        for seat in view.seats:
            seat.connected = seat.occupied and bool(mask >> seat.seat & 1)


class Presence:
    """The presence of every table, as one referee process sees and changes it.

    ``read`` returns a table's current state (None if there is none): the version presence
    events carry and the seats that can be connected.
    """

    def __init__(
        self,
        store: PresenceStore,
        read: Callable[[str], Awaitable[TableState | None]],
        *,
        window_s: float = 30.0,
        lease_s: float = 15.0,
        now: Callable[[], float] = time.time,
        remembered: int,
    ) -> None:
        self._store = store
        self._read = read
        self.window_s = window_s
        self.lease_s = lease_s
        self._now = now
        #: When this process last extended each (table, seat)'s call lease (monotonic seconds), for
        #: at most ``remembered`` pairs: the seats of as many tables as it keeps decoded (forgetting
        #: costs one write, never a wrong answer).
        self._refreshed: dict[tuple[str, int], float] = {}
        self._remembered = remembered
        #: The streams' leases held by this process.
        self.leases: set[StreamLease] = set()

    @property
    def refreshes_kept(self) -> int:
        """How many (table, seat) refreshes this process remembers now (at most ``remembered``)."""
        return len(self._refreshed)

    def now_ms(self) -> int:
        return int(self._now() * 1000)

    def _events(self, table: TableState) -> list[bytes]:
        when = dt.datetime.fromtimestamp(self._now(), tz=dt.UTC)
        events = []
        for seat in range(table.variant.players):
            for connected in (False, True):
                event = events_pb2.TableEvent(version=table.version)
                event.time.FromDatetime(when)
                event.seat_presence.CopyFrom(events_pb2.SeatPresence(seat=seat, connected=connected))
                events.append(encode_public(event))
        return events

    async def update(
        self,
        table_id: str,
        leases: Sequence[tuple[str, int]],
        table: TableState | None,
        *,
        extending: bool = False,
        swept_ms: int | None = None,
    ) -> int | None:
        """Apply ``leases``, announcing what changed; the seats connected now (None: no table).

        ``extending`` and ``swept_ms``: see :meth:`dizhu.store.presence.PresenceStore.update`.
        """
        for _ in range(_ATTEMPTS):
            if table is None:
                result = await self._store.update(
                    table_id,
                    now_ms=self.now_ms(),
                    version=UNKNOWN,
                    occupied=UNKNOWN,
                    leases=leases,
                    extending=extending,
                    swept_ms=swept_ms,
                )
            else:
                result = await self._store.update(
                    table_id,
                    now_ms=self.now_ms(),
                    version=table.version,
                    occupied=occupied_mask(table),
                    closed=table.status is TableStatus.CLOSED,
                    leases=leases,
                    events=self._events(table),
                    extending=extending,
                    swept_ms=swept_ms,
                )
            if result.outcome is PresenceOutcome.OK:
                return result.mask
            if result.outcome is PresenceOutcome.GONE:
                return None
            leases, swept_ms = (), None  # applied already: only the announcement is left to do
            table = await self._read(table_id)
            if table is None:
                return None
        _log.warning("presence_contended", table_id=table_id)
        return None

    def _due(self, table_id: str, seat: int, announced: int) -> bool:
        """Whether this process should extend the seat's call lease now (else it was done recently)."""
        now = time.monotonic()
        last = self._refreshed.get((table_id, seat))
        if announced >> seat & 1 and last is not None and now - last < self.window_s / 4:
            return False
        if len(self._refreshed) >= self._remembered:
            self._refreshed.clear()
        self._refreshed[table_id, seat] = now
        return True

    async def called(self, table: TableState, seat: int, announced: int) -> None:
        """``seat`` made a call with its token."""
        if self._due(table.table_id, seat, announced):
            await self.update(table.table_id, [self._call_lease(seat)], table)

    def _call_lease(self, seat: int) -> tuple[str, int]:
        """The lease a call gives ``seat``: until ``window_s`` from now."""
        return f"{seat}:act", self.now_ms() + int(self.window_s * 1000)

    def predicted(self, before: TableState, after: TableState, actor: int | None, announced: int) -> int:
        """The seats connected once :meth:`changed` has run: what a response reports."""
        if after.status is TableStatus.CLOSED:
            return 0
        occupied = occupied_mask(after)
        # Seats are shared by the states a change leaves them alone in: then none was taken.
        joined = 0 if after.seats is before.seats else occupied & ~occupied_mask(before)
        acting = 1 << actor if actor is not None else 0
        return (announced | joined | acting) & occupied

    async def changed(self, before: TableState, after: TableState, actor: int | None, announced: int) -> int | None:
        """A change of the table was saved: ``actor`` (a seat, if a seat made it) called,
        seats taken count as calls, seats left lose their leases, a closed table its presence.

        The seats announced connected now, as far as this process knows (None: unknown)."""
        if after.status is TableStatus.CLOSED:
            return await self.update(after.table_id, (), after)
        if after.seats is before.seats:  # no seat taken or left (see predicted): only the actor called
            if actor is not None and after.seats[actor].occupied and self._due(after.table_id, actor, announced):
                return await self.update(after.table_id, [self._call_lease(actor)], after)
            return announced
        occupied_before, occupied_after = occupied_mask(before), occupied_mask(after)
        seats = range(len(after.seats))
        left = [seat for seat in seats if occupied_before >> seat & 1 and not occupied_after >> seat & 1]
        joined = {seat for seat in seats if occupied_after >> seat & 1 and not occupied_before >> seat & 1}
        callers = joined | ({actor} if actor is not None and occupied_after >> actor & 1 else set())
        leases = [(f"{seat}:*", 0) for seat in left]
        leases += [self._call_lease(seat) for seat in sorted(callers) if self._due(after.table_id, seat, announced)]
        return await self.update(after.table_id, leases, after) if leases else announced

    @contextlib.asynccontextmanager
    async def stream_lease(self, table: TableState, seat: int | None) -> AsyncIterator[StreamLease]:
        """While the block runs, ``seat`` counts as connected (its open stream); nothing for a
        spectator (``seat`` None) or a closed table. The lease can be given up early."""
        lease = StreamLease(self, table.table_id, seat)
        if seat is not None and table.status is not TableStatus.CLOSED:
            await lease.take(table)
        try:
            yield lease
        finally:
            await lease.release()

    async def close(self) -> None:
        """Release every lease this process still holds (at shutdown, before Redis closes)."""
        await asyncio.gather(*(lease.release() for lease in list(self.leases)), return_exceptions=True)

    async def sweep(self, limit: int = 100) -> int:
        """Announce the seats whose last lease lapsed, at tables the due index points to; how many tables."""
        tables = await self._store.due(self.now_ms(), limit)
        for table_id, due_ms in tables:
            await self.update(table_id, (), None, swept_ms=due_ms)
        return len(tables)


class StreamLease:
    """One open stream's hold on its seat's presence, renewed in the background until released."""

    def __init__(self, presence: Presence, table_id: str, seat: int | None) -> None:
        self._presence = presence
        self._table_id = table_id
        self._member = f"{seat}:{uuid.uuid4().hex[:12]}"
        self._renewal: asyncio.Task[None] | None = None
        self._releasing: asyncio.Future[None] | None = None
        #: False once released: a renewal ends at its next turn even if its cancellation was lost.
        self._renewing = True

    def _expiry_ms(self) -> int:
        return self._presence.now_ms() + int(self._presence.lease_s * 1000)

    async def take(self, table: TableState) -> None:
        self._presence.leases.add(self)
        await self._presence.update(self._table_id, [(self._member, self._expiry_ms())], table)
        self._renewal = asyncio.create_task(self._renew(), name=f"presence-{self._member}")

    async def _renew(self) -> None:
        # Not ``while True``: redis-py's reads (through Python 3.11's ``asyncio.wait_for``) can drop
        # a cancellation that lands as Redis answers, and a renewal that lived on renewed the lease
        # for ever and held the release (and so a referee's shutdown) that waited for it.
        while self._renewing:
            await asyncio.sleep(self._presence.lease_s / 3)
            try:
                await self._presence.update(self._table_id, [(self._member, self._expiry_ms())], None, extending=True)
            except Exception:
                _log.warning("presence_renewal_failed", table_id=self._table_id, exc_info=True)

    async def release(self) -> None:
        """Stop holding the seat (the stream ended, or the seat was left); idempotent.

        Runs to its end even if the caller is cancelled (a stream ending at shutdown), so
        that :meth:`Presence.close` can wait for it before Redis closes.
        """
        if self._releasing is None:
            self._releasing = asyncio.ensure_future(self._release())
        await asyncio.shield(self._releasing)

    async def _release(self) -> None:
        try:
            self._renewing = False
            if self._renewal is not None:
                self._renewal.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._renewal
                await self._presence.update(self._table_id, [(self._member, 0)], None)
        except Exception:  # the lease lapses by itself
            _log.warning("presence_release_failed", table_id=self._table_id, exc_info=True)
        finally:
            self._presence.leases.discard(self)


async def run_presence_sweeper(presence: Presence, *, interval_s: float, stopping: asyncio.Event) -> None:
    """Sweep every ``interval_s`` until ``stopping`` is set (as the turn clock runs)."""
    failures = LoopFailures("presence_sweep")
    while not stopping.is_set():
        try:
            await presence.sweep()
        except asyncio.CancelledError:
            raise
        except Exception as error:
            failures.failed(error)
        else:
            failures.succeeded()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stopping.wait(), interval_s)
