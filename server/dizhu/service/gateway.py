"""Load, decide, save: how one request changes one table, safely under concurrency.

Every mutation is: one Redis round trip to read the table and the caller's recorded answer
for the request id; the pure referee command; one atomic compare-and-set that writes the
new state, appends its events and records the answer. A retry of an answered request gets
the first answer back (never applied twice); a request that loses a race to a concurrent
change is decided again on the new state (so two conflicting requests never both apply, and
the loser gets the precise reason, e.g. NOT_YOUR_TURN or STALE_STATE).

Answers are keyed by the caller's token hash, so one seat can never read another's answer,
and carry a fingerprint of the request so a reused request id is refused.
"""

from __future__ import annotations

import base64
import collections
import datetime
import hashlib
import time
from collections.abc import Callable
from typing import NamedTuple, TypeVar

from google.protobuf.message import Message

from dizhu.referee import decode, encode
from dizhu.referee.auth import Principal, Role, resolve
from dizhu.referee.commands import Context, Created, Outcome, timeout
from dizhu.referee.errors import InvalidArgument, RequestIdReused, TableNotFound, Unavailable
from dizhu.referee.events import RoundEnded
from dizhu.referee.table import TableState, TableStatus
from dizhu.service.event_codec import encode_event
from dizhu.service.metadata import Credentials
from dizhu.service.presence import Presence, mark_presence, occupied_mask
from dizhu.store import Saved, SaveOutcome, TableStore
from dizhu.store.keys import validate_request_id, validate_table_id

__all__ = ["Gateway", "Snapshot"]

ResponseT = TypeVar("ResponseT", bound=Message)
_FINGERPRINT = 32
_MAX_ATTEMPTS = 16
#: The contract's limit (the store's keys would take up to 128).
_MAX_REQUEST_ID = 64


def _fingerprint(method: str, request: Message) -> bytes:
    return hashlib.sha256(method.encode() + b"\0" + request.SerializeToString(deterministic=True)).digest()


def _valid_table_id(table_id: str) -> str:
    try:
        return validate_table_id(table_id)
    except ValueError:
        raise InvalidArgument("table_id", "a table id is 1..128 characters of [A-Za-z0-9._:-]") from None


def _valid_request_id(request_id: str) -> str:
    if not request_id:
        raise InvalidArgument("request_id", "every change needs a request_id (a fresh UUID per decision)")
    try:
        if len(request_id) > _MAX_REQUEST_ID:
            raise ValueError(request_id)
        return validate_request_id(request_id)
    except ValueError:
        raise InvalidArgument(
            "request_id", f"a request id is 1..{_MAX_REQUEST_ID} printable ASCII characters"
        ) from None


class Snapshot(NamedTuple):
    """A table as read for one caller (see :meth:`Gateway.snapshot`)."""

    table: TableState
    principal: Principal
    #: The sequence of the last event the table reflects.
    sequence: int
    #: The seats connected, bit ``s`` for seat ``s``.
    presence: int


class _DecodedTables:
    """The last state this process decoded or encoded for each table, by its exact bytes.

    Consecutive moves at a table mostly reach the same process, which then skips decoding:
    the bytes read from the store are compared with the ones it has (the store stays the
    truth; a table changed elsewhere simply has other bytes).
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._tables: collections.OrderedDict[str, tuple[bytes, TableState]] = collections.OrderedDict()

    def _keep(self, table_id: str, data: bytes, table: TableState) -> None:
        self._tables[table_id] = (data, table)
        self._tables.move_to_end(table_id)
        if len(self._tables) > self._size:
            self._tables.popitem(last=False)

    def decode(self, table_id: str, data: bytes) -> TableState:
        known = self._tables.get(table_id)
        if known is not None and known[0] == data:
            return known[1]
        table = decode(data)
        self._keep(table_id, data, table)
        return table

    def encode(self, table: TableState) -> bytes:
        data = encode(table)
        self._keep(table.table_id, data, table)
        return data


class Gateway:
    """Runs referee commands against the store for the table service."""

    def __init__(
        self,
        store: TableStore,
        *,
        now: Callable[[], float] = time.time,
        cache_size: int = 4096,
        presence_window_s: float = 30.0,
        presence_lease_s: float = 15.0,
    ) -> None:
        self._store = store
        self._now = now
        self._decoded = _DecodedTables(cache_size)
        #: Who is at which table (SeatView.connected); see :mod:`dizhu.service.presence`.
        self.presence = Presence(
            store.presence(), self.table, window_s=presence_window_s, lease_s=presence_lease_s, now=now
        )

    def _now_ms(self) -> int:
        return int(self._now() * 1000)

    async def table(self, table_id: str) -> TableState | None:
        """The table as stored now, None if there is none."""
        loaded = await self._store.load(_valid_table_id(table_id), "anon", None)
        return None if loaded.state is None else self._decoded.decode(table_id, loaded.state)

    async def snapshot(self, table_id: str, credentials: Credentials) -> Snapshot:
        """The table, who the caller is, the sequence of the last event the table reflects, and
        who is connected (a seat's read counts as a call: see :mod:`dizhu.service.presence`)."""
        loaded = await self._store.load(_valid_table_id(table_id), "anon", None)
        if loaded.state is None:
            raise TableNotFound(f"no table {table_id}", metadata={"table_id": table_id})
        table = self._decoded.decode(table_id, loaded.state)
        principal = resolve(table, credentials.token())
        if table.status is TableStatus.CLOSED:
            return Snapshot(table, principal, loaded.sequence, 0)
        presence = loaded.presence & occupied_mask(table)
        if principal.role is Role.SEAT and principal.seat is not None:
            await self.presence.called(table, principal.seat, loaded.presence)
            presence |= 1 << principal.seat
        return Snapshot(table, principal, loaded.sequence, presence)

    async def _save(
        self,
        before: TableState,
        outcome: Outcome,
        now_ms: int,
        principal: str,
        request_id: str | None,
        answer: bytes | None,
    ) -> Saved:
        """One compare-and-set of ``outcome`` over ``before``: state, events, round records, answer."""
        after = outcome.table
        clocked = bool(after.settings.clock.decision_ms)
        closing = after.status is TableStatus.CLOSED
        if clocked and after.deadline_ms:
            # Before the write, the deadline may only be made earlier (never later, never
            # dropped): if this process dies right after the write, the clock still looks in
            # time. An early entry only makes the clock look once more.
            await self._store.index_deadline(after.table_id, after.version, after.deadline_ms, early=True)
        records = [
            (f"replay:{event.result.round}", event.replay.encode())
            for event in outcome.events
            if isinstance(event, RoundEnded) and event.replay
        ]
        saved = await self._store.save(
            after.table_id,
            before.version,
            after.version,
            self._decoded.encode(after),
            self._events(outcome, now_ms),
            principal,
            request_id,
            answer,
            finished=closing,
            records=records,
        )
        if clocked and saved.outcome is SaveOutcome.SAVED:
            await self._store.index_deadline(after.table_id, after.version, after.deadline_ms or None, final=closing)
        return saved

    async def time_out(self, table_id: str) -> bool:
        """Apply the clock to a table whose indexed deadline passed; True if it acted.

        Several referee processes may try at once: the compare-and-set lets exactly one
        act, the others find the version moved on.
        """
        loaded = await self._store.load(table_id, "clock", None)
        if loaded.state is None:
            await self._store.index_deadline(table_id, loaded.version, None, final=True)
            return False
        table = self._decoded.decode(table_id, loaded.state)
        now_ms = self._now_ms()
        outcome = timeout(table, now_ms)
        if not outcome.changed:
            # Not due (the index was early or stale): index this version's deadline instead.
            await self._store.index_deadline(table_id, table.version, table.deadline_ms or None)
            return False
        saved = await self._save(table, outcome, now_ms, "clock", None, None)
        return saved.outcome is SaveOutcome.SAVED

    async def read_replay(self, table_id: str, round_number: int) -> str:
        """The JSON record of a finished round."""
        record = await self._store.read_record(_valid_table_id(table_id), f"replay:{round_number}")
        if record is None:
            raise TableNotFound(
                f"no finished round {round_number} at table {table_id}",
                metadata={"table_id": table_id, "round": str(round_number)},
            )
        return record.decode()

    def _replay(self, answer: bytes, fingerprint: bytes, parse: Callable[[bytes], ResponseT]) -> ResponseT:
        if answer[:_FINGERPRINT] != fingerprint:
            raise RequestIdReused("this request_id was already used for a different request")
        return parse(answer[_FINGERPRINT:])

    def _events(self, outcome: Outcome, now_ms: int) -> list[bytes]:
        when = datetime.datetime.fromtimestamp(now_ms / 1000, tz=datetime.UTC)
        players = outcome.table.variant.players
        return [encode_event(event, players, outcome.table.version, when) for event in outcome.events]

    async def mutate(
        self,
        method: str,
        request: Message,
        table_id: str,
        credentials: Credentials,
        expected_version: int,
        command: Callable[[TableState, Context], Outcome],
        respond: Callable[[Outcome, Principal], ResponseT],
        parse: Callable[[bytes], ResponseT],
    ) -> ResponseT:
        """Apply ``command`` to the table once, whatever the retries and races."""
        table_id = _valid_table_id(table_id)
        request_id = _valid_request_id(getattr(request, "request_id", ""))
        fingerprint = _fingerprint(method, request)
        answer_principal = credentials.answer_principal
        for _ in range(_MAX_ATTEMPTS):
            loaded = await self._store.load(table_id, answer_principal, request_id)
            if loaded.state is None:
                raise TableNotFound(f"no table {table_id}", metadata={"table_id": table_id})
            if loaded.answer is not None:
                return self._replay(loaded.answer, fingerprint, parse)
            table = self._decoded.decode(table_id, loaded.state)
            now_ms = self._now_ms()
            principal = resolve(table, credentials.token())
            outcome = command(table, Context(principal, now_ms, expected_version))
            response = respond(outcome, principal)
            actor = principal.seat if principal.role is Role.SEAT else None
            mark_presence(response, self.presence.predicted(table, outcome.table, actor, loaded.presence))
            if not outcome.changed:
                return response
            saved = await self._save(
                table, outcome, now_ms, answer_principal, request_id, fingerprint + response.SerializeToString()
            )
            if saved.outcome is SaveOutcome.SAVED:
                await self.presence.changed(table, outcome.table, actor, loaded.presence)
                return response
            if saved.outcome is SaveOutcome.DUPLICATE and saved.answer is not None:
                return self._replay(saved.answer, fingerprint, parse)
        raise Unavailable("the table changed too often under this request; retry with the same request_id")

    async def create(
        self,
        request: Message,
        api_principal: str,
        build: Callable[[str, int], Created],
        respond: Callable[[Created], ResponseT],
        parse: Callable[[bytes], ResponseT],
    ) -> ResponseT:
        """Create a table whose id derives from the request id, so a retry finds its first answer."""
        request_id = _valid_request_id(getattr(request, "request_id", ""))
        fingerprint = _fingerprint("CreateTable", request)
        digest = hashlib.sha256(f"create\0{api_principal}\0{request_id}".encode()).digest()
        table_id = base64.b32encode(digest).decode().rstrip("=").lower()[:20]
        loaded = await self._store.load(table_id, "create", request_id)
        if loaded.answer is not None:
            return self._replay(loaded.answer, fingerprint, parse)
        now_ms = self._now_ms()
        created = build(table_id, now_ms)
        response = respond(created)
        saved = await self._store.create(
            table_id,
            self._decoded.encode(created.outcome.table),
            created.outcome.table.version,
            self._events(created.outcome, now_ms),
            "create",
            request_id,
            fingerprint + response.SerializeToString(),
        )
        if saved.outcome is SaveOutcome.SAVED:
            table = created.outcome.table
            if table.deadline_ms:
                await self._store.index_deadline(table_id, table.version, table.deadline_ms)
            return response
        if saved.outcome is SaveOutcome.DUPLICATE and saved.answer is not None:
            return self._replay(saved.answer, fingerprint, parse)
        raise RequestIdReused("this request_id already created a table whose answer has expired")
