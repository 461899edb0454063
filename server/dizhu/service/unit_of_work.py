"""Load, decide, save: how one request changes one table, safely under concurrency.

Every mutation is: one Redis round trip to read the table and the caller's recorded answer
for the request id; the pure referee command; one atomic compare-and-set that writes the
new state, appends its events and records the answer. A retry of an answered request gets
the first answer back (never applied twice); a request that loses a race to a concurrent
change is decided again on the new state (so two conflicting requests never both apply, and
the loser gets the precise reason, e.g. NOT_YOUR_TURN or STALE_STATE).

When this process wrote (or read) the table last and the caller expects that very version,
the read is skipped: the change is decided on the state this process holds and the
compare-and-set writes it only if the store still holds exactly those bytes and that
presence -- and, as always, only if the request id has no answer yet. A move then costs one
round trip. A refusal, a change that changes nothing, or a conflict is decided again on the
table as read, so every answer but a successful change still comes from a fresh read.

Answers are keyed by a hash of the caller's token and the request id, so one seat can never
read another's answer, carry a fingerprint of the request so a reused request id is refused,
and hold no token (``dizhu.service.answers``).

Besides, the unit of work keeps tables from living forever (:class:`TablePolicy`): it counts each
creator's open tables, refuses new tables when Redis is nearly full, closes tables nobody
acts at any more, and keeps only the latest rounds' replays.
"""

from __future__ import annotations

import base64
import collections
import dataclasses
import hashlib
import time
from collections.abc import Callable
from typing import Final, NamedTuple, TypeVar

import structlog
from google.protobuf.message import Message

from dizhu.referee import decode, encode
from dizhu.referee.auth import Principal, Role, resolve
from dizhu.referee.commands import Context, Created, Mint, Outcome, abandon, timeout
from dizhu.referee.errors import (
    InvalidArgument,
    QuotaExceeded,
    RefereeError,
    RequestIdReused,
    StoreFull,
    TableNotFound,
    Unavailable,
)
from dizhu.referee.events import RoundEnded
from dizhu.referee.signing import SigningKeys
from dizhu.referee.table import TableState, TableStatus
from dizhu.referee.tokens import TokenKeys
from dizhu.service.answers import Answers, fingerprint
from dizhu.service.errors import is_store_trouble
from dizhu.service.event_codec import encode_event
from dizhu.service.metadata import Credentials
from dizhu.service.metrics import ABANDONED
from dizhu.service.presence import Presence, mark_presence, occupied_mask
from dizhu.store import Saved, SaveOutcome, TableStore
from dizhu.store.keys import validate_request_id, validate_table_id

__all__ = ["MAX_REQUEST_ID", "MAX_TABLE_ID", "MIN_SECRET_REQUEST_ID", "Snapshot", "TablePolicy", "UnitOfWork"]

ResponseT = TypeVar("ResponseT", bound=Message)
_log = structlog.get_logger("dizhu.unit_of_work")
_MAX_ATTEMPTS = 16
#: The contract's limits (the store's keys would take up to 128 characters).
MAX_REQUEST_ID: Final = 64
MAX_TABLE_ID: Final = 64
#: The request id of CreateTable and JoinTable is a secret (it alone fetches their answer,
#: tokens included, again): at least this long, from a random source (docs/security.md).
MIN_SECRET_REQUEST_ID: Final = 16
#: A client action is written to the activity index at most this often per table.
_ACTIVITY_GRANULARITY_MS: Final = 60_000
#: How long a creator over its open-table quota is told to wait.
_QUOTA_RETRY_MS: Final = 60_000
#: How long a creation refused for want of memory is told to wait.
_STORE_FULL_RETRY_MS: Final = 5_000


@dataclasses.dataclass(frozen=True, slots=True)
class TablePolicy:
    """What the unit of work does to keep tables bounded (the server's flags; docs/security.md)."""

    #: Close a table no client acted at for this long (the clock's actions do not count); 0: never.
    idle_close_ms: int = 6 * 60 * 60 * 1000
    #: Close a table after this many rounds in a row played by the clock alone; 0: never.
    unattended_rounds: int = 5
    #: Replays kept per table: the latest rounds'.
    replays_per_table: int = 256
    #: Refuse new tables once Redis uses more than this fraction of its ``maxmemory``.
    create_memory_fraction: float = 0.9
    #: Open tables a creator with a name (``owner``) may hold.
    max_open_tables: int = 100


def _valid_table_id(table_id: str) -> str:
    if len(table_id) > MAX_TABLE_ID:
        raise InvalidArgument("table_id", f"a table id is at most {MAX_TABLE_ID} characters")
    try:
        return validate_table_id(table_id)
    except ValueError:
        raise InvalidArgument("table_id", f"a table id is 1..{MAX_TABLE_ID} characters of [A-Za-z0-9._:-]") from None


def _valid_request_id(request_id: str, *, secret: bool = False) -> str:
    if not request_id:
        raise InvalidArgument("request_id", "every change needs a request_id (a fresh UUID per decision)")
    shortest = MIN_SECRET_REQUEST_ID if secret else 1
    try:
        if not shortest <= len(request_id) <= MAX_REQUEST_ID:
            raise ValueError(request_id)
        return validate_request_id(request_id)
    except ValueError:
        raise InvalidArgument(
            "request_id",
            f"a request id is {shortest}..{MAX_REQUEST_ID} printable ASCII characters"
            + (" from a random source (a UUID4): it is the secret that fetches this answer again" if secret else ""),
        ) from None


class _Minting:
    """Mints the tokens of one request and remembers their recipes (for its recorded answer)."""

    def __init__(self, keys: TokenKeys, table_id: str) -> None:
        self._keys = keys
        self._table_id = table_id
        self.recipes: dict[str, str] = {}

    def __call__(self) -> str:
        minted = self._keys.mint(self._table_id)
        self.recipes[minted.token] = minted.recipe
        return minted.token


class Snapshot(NamedTuple):
    """A table as read for one caller (see :meth:`UnitOfWork.snapshot`)."""

    table: TableState
    principal: Principal
    #: The sequence of the last event the table reflects.
    sequence: int
    #: The seats connected, bit ``s`` for seat ``s``.
    presence: int
    #: The write id of the event ``sequence`` names (see :class:`dizhu.store.StoredEvent`).
    write: int = 0


class _Known(NamedTuple):
    """A table as this process last read or wrote it."""

    data: bytes
    table: TableState
    #: The seats announced connected when it was read or written; None if unknown since.
    presence: int | None


class _DecodedTables:
    """The last state this process decoded or wrote for each table, by its exact bytes.

    Consecutive moves at a table mostly reach the same process, which then skips decoding:
    the bytes read from the store are compared with the ones it has (the store stays the
    truth; a table changed elsewhere simply has other bytes). A table this process wrote last
    is also where its next move starts from without reading it (see :meth:`UnitOfWork.mutate`).
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._tables: collections.OrderedDict[str, _Known] = collections.OrderedDict()

    def __len__(self) -> int:
        return len(self._tables)

    def __contains__(self, table_id: object) -> bool:
        return table_id in self._tables

    def keep(self, table_id: str, data: bytes, table: TableState, presence: int | None) -> None:
        if table.status is TableStatus.CLOSED:  # never changed again: nothing to start a move from
            self._tables.pop(table_id, None)
            return
        self._tables[table_id] = _Known(data, table, presence)
        self._tables.move_to_end(table_id)
        if len(self._tables) > self._size:
            self._tables.popitem(last=False)

    def decode(self, table_id: str, data: bytes, presence: int) -> TableState:
        known = self._tables.get(table_id)
        table = known.table if known is not None and known.data == data else decode(data)
        self.keep(table_id, data, table, presence)
        return table

    def at(self, table_id: str, version: int) -> tuple[bytes, TableState, int] | None:
        """The table as last known here (its bytes, state and announced seats), if that was at
        ``version`` with its presence known."""
        known = self._tables.get(table_id)
        if known is None or known.presence is None or known.table.version != version:
            return None
        return known.data, known.table, known.presence

    def announced(self, table_id: str, presence: int | None) -> None:
        """The seats announced connected at the table changed here to ``presence`` (None: unknown)."""
        known = self._tables.get(table_id)
        if known is not None and known.presence != presence:
            self._tables[table_id] = known._replace(presence=presence)


class UnitOfWork:
    """Runs referee commands against the store for the table service: each call's unit of work
    (:meth:`mutate`: load, decide, save, answer), and what those calls share in this process."""

    def __init__(
        self,
        store: TableStore,
        *,
        keys: TokenKeys | None = None,
        signing: SigningKeys | None = None,
        policy: TablePolicy | None = None,
        now: Callable[[], float] = time.time,
        cache_size: int = 4096,
        presence_window_s: float = 30.0,
        presence_lease_s: float = 15.0,
    ) -> None:
        self._store = store
        self.keys = keys or TokenKeys.ephemeral()
        #: Signs every round's record as it is stored (docs/replay.md, "Signatures").
        self.signing = signing or SigningKeys.ephemeral()
        self.policy = policy or TablePolicy()
        self._now = now
        self._decoded = _DecodedTables(cache_size)
        #: When this process last indexed each table's activity (bounded like the decoded tables).
        self._marked: collections.OrderedDict[str, int] = collections.OrderedDict()
        self._cache_size = cache_size
        #: Who is at which table (SeatView.connected); see :mod:`dizhu.service.presence`.
        self.presence = Presence(
            store.presence(), self.table, window_s=presence_window_s, lease_s=presence_lease_s, now=now
        )

    def _now_ms(self) -> int:
        return int(self._now() * 1000)

    async def table(self, table_id: str) -> TableState | None:
        """The table as stored now, None if there is none."""
        loaded = await self._store.load(_valid_table_id(table_id), "anon", None)
        return None if loaded.state is None else self._decoded.decode(table_id, loaded.state, loaded.presence)

    async def open_tables(self, start: int, count: int) -> tuple[list[TableState], bool]:
        """Up to ``count`` open tables from position ``start`` of the activity index (the most
        recently active first), and whether the index may hold more after them. Entries of
        tables closed or gone meanwhile are skipped (they leave the index as they close)."""
        listed = await self._store.active_tables(start, count)
        found = [await self.table(table_id) for table_id in listed]
        still_open = [table for table in found if table is not None and table.status is not TableStatus.CLOSED]
        return still_open, len(listed) == count

    async def snapshot(self, table_id: str, credentials: Credentials) -> Snapshot:
        """The table, who the caller is, the sequence of the last event the table reflects, and
        who is connected (a seat's read counts as a call: see :mod:`dizhu.service.presence`)."""
        loaded = await self._store.load(_valid_table_id(table_id), "anon", None)
        if loaded.state is None:
            raise TableNotFound(f"no table {table_id}", metadata={"table_id": table_id})
        table = self._decoded.decode(table_id, loaded.state, loaded.presence)
        principal = resolve(table, credentials.token())
        if table.status is TableStatus.CLOSED:
            return Snapshot(table, principal, loaded.sequence, 0, loaded.write)
        presence = loaded.presence & occupied_mask(table)
        if principal.role is Role.SEAT and principal.seat is not None:
            await self.presence.called(table, principal.seat, loaded.presence)
            presence |= 1 << principal.seat
        return Snapshot(table, principal, loaded.sequence, presence, loaded.write)

    async def _save(
        self,
        before: TableState,
        outcome: Outcome,
        now_ms: int,
        principal: str,
        request_id: str | None,
        answer: bytes | None,
        *,
        by_client: bool,
        announced: int | None,
        decided_on: bytes | None = None,
    ) -> Saved:
        """One compare-and-set of ``outcome`` over ``before``: state, events, round records, answer.

        ``announced``: the seats announced connected that the change was decided with (None:
        unknown). ``decided_on``: the stored state ``before`` was decoded from, when the change
        was decided without reading it (then the write also checks it and ``announced``).
        Then the indexes: the turn clock's; for a closed table, the activity index and its
        creator's quota let go of it; for a client's change, the activity index is refreshed.
        """
        after = outcome.table
        clocked = bool(after.settings.clock.decision_ms)
        closing = after.status is TableStatus.CLOSED
        if clocked and after.deadline_ms:
            # Before the write, the deadline may only be made earlier (never later, never
            # dropped): if this process dies right after the write, the clock still looks in
            # time. An early entry only makes the clock look once more.
            await self._store.index_deadline(after.table_id, after.version, after.deadline_ms, early=True)
        ended = [event for event in outcome.events if isinstance(event, RoundEnded) and event.replay]
        kept = self.policy.replays_per_table  # the latest rounds' replays; the one that many before goes
        data = encode(after)
        saved = await self._store.save(
            after.table_id,
            before.version,
            after.version,
            data,
            self._events(outcome, now_ms),
            principal,
            request_id,
            answer,
            finished=closing,
            records=[(f"replay:{event.result.round}", self.signing.sign(event.replay).encode()) for event in ended],
            drop_records=[f"replay:{event.result.round - kept}" for event in ended if event.result.round > kept],
            decided_on=decided_on,
            presence=None if decided_on is None else announced,
            time_ms=now_ms,
        )
        if saved.outcome is not SaveOutcome.SAVED:
            return saved
        self._decoded.keep(after.table_id, data, after, announced)
        if clocked:
            await self._store.index_deadline(after.table_id, after.version, after.deadline_ms or None, final=closing)
        if closing:
            await self._let_go(after)
        elif by_client:
            await self._mark_active(after.table_id, now_ms)
        return saved

    async def _let_go(self, table: TableState) -> None:
        """A closed table no longer counts as open: nor as active, nor against its creator's quota."""
        self._marked.pop(table.table_id, None)
        await self._store.forget_activity(table.table_id)
        if table.owner:
            await self._store.release_table(table.owner, table.table_id)

    async def _mark_active(self, table_id: str, now_ms: int) -> None:
        """Index a client's action, at most once a minute per table and process (the state holds the truth)."""
        marked = self._marked.get(table_id)
        if marked is not None and now_ms - marked < _ACTIVITY_GRANULARITY_MS:
            return
        await self._store.mark_active(table_id, now_ms)
        self._marked[table_id] = now_ms
        self._marked.move_to_end(table_id)
        if len(self._marked) > self._cache_size:
            self._marked.popitem(last=False)

    async def time_out(self, table_id: str) -> bool:
        """Apply the clock to a table whose indexed deadline passed; True if it acted.

        Several referee processes may try at once: the compare-and-set lets exactly one
        act, the others find the version moved on.
        """
        loaded = await self._store.load(table_id, "clock", None)
        if loaded.state is None:
            await self._store.index_deadline(table_id, loaded.version, None, final=True)
            return False
        table = self._decoded.decode(table_id, loaded.state, loaded.presence)
        now_ms = self._now_ms()
        outcome = timeout(table, now_ms)
        if not outcome.changed:
            # Not due (the index was early or stale): index this version's deadline instead; a
            # closed table is forgotten (a late write of an older version put it back).
            closed = table.status is TableStatus.CLOSED
            await self._store.index_deadline(table_id, table.version, table.deadline_ms or None, final=closed)
            return False
        saved = await self._save(table, outcome, now_ms, "clock", None, None, by_client=False, announced=None)
        return saved.outcome is SaveOutcome.SAVED

    async def quarantine(self, table_id: str, delay_ms: int) -> None:
        """Make the clock look at ``table_id`` again in ``delay_ms`` only: applying its timeout failed."""
        loaded = await self._store.load(table_id, "clock", None)
        await self._store.defer_deadline(table_id, loaded.version, self._now_ms() + delay_ms)

    async def close_idle(self, limit: int = 100) -> int:
        """Close the tables no client acted at for ``policy.idle_close_ms``; how many were closed.

        The activity index may lag (a client's action is indexed at most once a minute), so
        each candidate's own state decides; a table found active is indexed again.
        """
        if not self.policy.idle_close_ms:
            return 0
        now_ms = self._now_ms()
        before_ms = now_ms - self.policy.idle_close_ms
        closed = 0
        for table_id, _ in await self._store.inactive_tables(before_ms, limit):
            try:
                closed += await self._close_if_idle(table_id, now_ms, before_ms)
            except Exception as error:
                if is_store_trouble(error):
                    raise
                # One table that cannot be read must not stop the sweep: look at it again later.
                _log.error("idle_close_failed", table_id=table_id, exc_info=True)
                await self._store.mark_active(table_id, now_ms)
        return closed

    async def _close_if_idle(self, table_id: str, now_ms: int, before_ms: int) -> int:
        loaded = await self._store.load(table_id, "clock", None)
        if loaded.state is None:
            await self._store.forget_activity(table_id)
            return 0
        table = self._decoded.decode(table_id, loaded.state, loaded.presence)
        if table.status is TableStatus.CLOSED:
            await self._let_go(table)
            return 0
        if table.active_ms >= before_ms:
            await self._store.mark_active(table_id, table.active_ms)
            return 0
        saved = await self._save(
            table, abandon(table, now_ms), now_ms, "clock", None, None, by_client=False, announced=None
        )
        if saved.outcome is not SaveOutcome.SAVED:
            return 0
        ABANDONED.inc()
        _log.info("table_abandoned", table_id=table_id)
        return 1

    async def read_replay(self, table_id: str, round_number: int) -> str:
        """The JSON record of a finished round."""
        record = await self._store.read_record(_valid_table_id(table_id), f"replay:{round_number}")
        if record is None:
            raise TableNotFound(
                f"no finished round {round_number} at table {table_id}",
                metadata={"table_id": table_id, "round": str(round_number)},
            )
        return record.decode()

    def _events(self, outcome: Outcome, now_ms: int) -> list[bytes]:
        players = outcome.table.variant.players
        return [encode_event(event, players, outcome.table.version, now_ms) for event in outcome.events]

    async def mutate(
        self,
        method: str,
        request: Message,
        table_id: str,
        credentials: Credentials,
        expected_version: int,
        command: Callable[[TableState, Context], Outcome],
        respond: Callable[[Outcome, Principal], ResponseT],
        answers: Answers[ResponseT],
        *,
        secret_request_id: bool = False,
    ) -> ResponseT:
        """Apply ``command`` to the table once, whatever the retries and races.

        ``secret_request_id``: the request id alone fetches the answer again (JoinTable): it
        must be long enough to be a secret.
        """
        table_id = _valid_table_id(table_id)
        request_id = _valid_request_id(getattr(request, "request_id", ""), secret=secret_request_id)
        print_ = fingerprint(method, request)
        answer_principal = credentials.answer_principal
        # The table as this process last wrote or read it, if the caller expects that version:
        # the change is then decided without reading the table, and written only if the store
        # still holds exactly that state (and presence). Anything else -- a refusal, a no-op, a
        # conflict -- is decided again below on the table as read, as every change used to be.
        known = self._decoded.at(table_id, expected_version) if expected_version else None
        data: bytes | None
        for _ in range(_MAX_ATTEMPTS):
            if known is not None:
                data, table, announced = known
                known = None
            else:
                loaded = await self._store.load(table_id, answer_principal, request_id)
                if loaded.state is None:
                    raise TableNotFound(f"no table {table_id}", metadata={"table_id": table_id})
                if loaded.answer is not None:
                    return answers.open(loaded.answer, print_, table_id, self.keys)
                data, announced = None, loaded.presence
                table = self._decoded.decode(table_id, loaded.state, announced)
            now_ms = self._now_ms()
            minting = _Minting(self.keys, table_id)
            try:
                principal = resolve(table, credentials.token())
                outcome = command(table, Context(principal, now_ms, expected_version, minting))
                if data is not None and not outcome.changed:
                    continue
                response = respond(outcome, principal)
            except RefereeError:
                if data is None:
                    raise
                continue  # a refusal is given on the table as read, never on one remembered
            actor = principal.seat if principal.role is Role.SEAT else None
            mark_presence(response, self.presence.predicted(table, outcome.table, actor, announced))
            if not outcome.changed:
                return response
            sealed = answers.seal(print_, response, minting.recipes)
            saved = await self._save(
                table,
                outcome,
                now_ms,
                answer_principal,
                request_id,
                sealed,
                by_client=True,
                announced=announced,
                decided_on=data,
            )
            if saved.outcome is SaveOutcome.SAVED:
                self._decoded.announced(table_id, await self.presence.changed(table, outcome.table, actor, announced))
                return response
            if saved.outcome is SaveOutcome.DUPLICATE and saved.answer is not None:
                return answers.open(saved.answer, print_, table_id, self.keys)
        raise Unavailable("the table changed too often under this request; retry with the same request_id")

    async def create(
        self,
        request: Message,
        api_principal: str,
        owner: str,
        build: Callable[[str, int, Mint], Created],
        respond: Callable[[Created], ResponseT],
        answers: Answers[ResponseT],
    ) -> ResponseT:
        """Create a table whose id derives from the request id, so a retry finds its first answer.

        ``owner`` (when not "") counts the table against that creator's quota of open tables.
        A new table is refused while Redis is nearly full, so that running tables keep room.
        """
        request_id = _valid_request_id(getattr(request, "request_id", ""), secret=True)
        print_ = fingerprint("CreateTable", request)
        digest = hashlib.sha256(f"create\0{api_principal}\0{request_id}".encode()).digest()
        table_id = base64.b32encode(digest).decode().rstrip("=").lower()[:20]
        loaded = await self._store.load(table_id, "create", request_id)
        if loaded.answer is not None:
            return answers.open(loaded.answer, print_, table_id, self.keys)
        if (await self._store.memory()).above(self.policy.create_memory_fraction):
            raise StoreFull(
                "the table store is nearly full: no new tables for now (running tables keep their room)",
                retry_after_ms=_STORE_FULL_RETRY_MS,
            )
        now_ms = self._now_ms()
        minting = _Minting(self.keys, table_id)
        created = build(table_id, now_ms, minting)
        response = respond(created)
        if owner:
            await self._reserve(owner, table_id, now_ms)
        data = encode(created.outcome.table)
        try:
            saved = await self._store.create(
                table_id,
                data,
                created.outcome.table.version,
                self._events(created.outcome, now_ms),
                "create",
                request_id,
                answers.seal(print_, response, minting.recipes),
                time_ms=now_ms,
            )
        except BaseException:
            if owner:
                await self._store.release_table(owner, table_id)
            raise
        if saved.outcome is SaveOutcome.SAVED:
            table = created.outcome.table
            self._decoded.keep(table_id, data, table, 0)  # a new table has announced no one yet
            await self._mark_active(table_id, now_ms)
            if table.deadline_ms:
                await self._store.index_deadline(table_id, table.version, table.deadline_ms)
            return response
        if saved.outcome is SaveOutcome.DUPLICATE and saved.answer is not None:
            return answers.open(saved.answer, print_, table_id, self.keys)
        raise RequestIdReused("this request_id already created a table whose answer is no longer kept")

    async def _reserve(self, owner: str, table_id: str, now_ms: int) -> None:
        """Count a new table against ``owner``'s quota; QUOTA_EXCEEDED if it is full."""
        most = self.policy.max_open_tables
        if await self._store.reserve_table(owner, table_id, most, now_ms):
            return
        # Full: a reservation whose release was lost (a process died meanwhile) may be stale.
        if await self._store.release_finished(owner) < most and await self._store.reserve_table(
            owner, table_id, most, now_ms
        ):
            return
        raise QuotaExceeded(
            f"this client has {most} open tables, as many as it may; close one first",
            retry_after_ms=_QUOTA_RETRY_MS,
            metadata={"limit": "open_tables", "max": str(most)},
        )
