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
creator's open tables, refuses new tables when Redis is nearly full and keeps only the latest
rounds' replays; what each write tells the store's indexes is :mod:`dizhu.service.table_indexing`'s.
The clock's changes (timeouts, closing tables nobody acts at any more:
:mod:`dizhu.service.janitor`) are written through it too. The reads are
:mod:`dizhu.service.table_reads`'s.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import time
from collections.abc import Callable
from typing import Final, TypeVar

import structlog
from google.protobuf.message import Message

from dizhu.config import ServerConfig
from dizhu.referee import encode
from dizhu.referee.auth import Principal, Role, resolve
from dizhu.referee.commands import Context, Created, Mint, Outcome, timeout
from dizhu.referee.errors import RefereeError, RequestIdReused, StoreFull, TableNotFound, Unavailable
from dizhu.referee.events import RoundEnded
from dizhu.referee.signing import SigningKeys
from dizhu.referee.table import TableState, TableStatus
from dizhu.referee.tokens import TokenKeys
from dizhu.service.answers import Answers, fingerprint
from dizhu.service.decoded_tables import DecodedTables
from dizhu.service.event_codec import encode_event
from dizhu.service.identifiers import valid_request_id, valid_table_id
from dizhu.service.metadata import Credentials
from dizhu.service.metrics import TIMEOUTS
from dizhu.service.presence import Presence, mark_presence
from dizhu.service.table_indexing import TableIndexing
from dizhu.store import Answer, Change, Saved, SaveOutcome, TableStore

__all__ = ["TablePolicy", "UnitOfWork"]

ResponseT = TypeVar("ResponseT", bound=Message)
#: Each timeout is told under the clock's name, whichever applied it: the clock task or a request.
_clock_log = structlog.get_logger("dizhu.clock")
_MAX_ATTEMPTS = 16
#: How long a creation refused for want of memory is told to wait.
_STORE_FULL_RETRY_MS: Final = 5_000
#: The declared settings, for a policy made without a configuration.
_DEFAULTS: Final = ServerConfig()


@dataclasses.dataclass(frozen=True, slots=True)
class TablePolicy:
    """What the unit of work does to keep tables bounded, made of the server's settings (:meth:`of`)."""

    #: Close a table no client acted at for this long (the clock's actions do not count); 0: never.
    idle_close_ms: int
    #: Close a table after this many rounds in a row played by the clock alone; 0: never.
    unattended_rounds: int
    #: Replays kept per table: the latest rounds'.
    replays_per_table: int
    #: Refuse new tables once Redis uses more than this fraction of its ``maxmemory``.
    create_memory_fraction: float
    #: Open tables a creator with a name (``owner``) may hold.
    max_open_tables: int

    @classmethod
    def of(cls, config: ServerConfig = _DEFAULTS) -> TablePolicy:
        """The policy ``config`` sets (the declared defaults unless given)."""
        return cls(
            idle_close_ms=int(config.idle_close_s * 1000),
            unattended_rounds=config.unattended_rounds,
            replays_per_table=config.replays_per_table,
            create_memory_fraction=1.0 - config.memory_reserve,
            max_open_tables=config.max_open_tables,
        )


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


class UnitOfWork:
    """Runs referee commands against the store for the table service: each call's unit of work
    (:meth:`mutate`: load, decide, save, answer), and what those calls share in this process.

    ``decoded``: this process's decoded tables, shared with its reads and the clock's work;
    ``presence``: who is at which table (a change announces the actor's call).
    """

    def __init__(
        self,
        store: TableStore,
        decoded: DecodedTables,
        presence: Presence,
        *,
        keys: TokenKeys | None = None,
        signing: SigningKeys | None = None,
        policy: TablePolicy | None = None,
        now: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self.keys = keys or TokenKeys.ephemeral()
        #: Signs every round's record as it is stored (docs/replay.md, "Signatures").
        self.signing = signing or SigningKeys.ephemeral()
        self.policy = policy or TablePolicy.of()
        self._now = now
        self._decoded = decoded
        #: What each write tells the store's indexes (the janitor lets closed tables go through it too).
        self.indexing = TableIndexing(
            store.indexes, max_open_tables=self.policy.max_open_tables, remembered=decoded.size
        )
        self.presence = presence

    def _now_ms(self) -> int:
        return int(self._now() * 1000)

    async def _save(
        self,
        before: TableState,
        outcome: Outcome,
        now_ms: int,
        answer: Answer,
        *,
        by_client: bool,
        announced: int | None,
        decided_on: bytes | None = None,
    ) -> Saved:
        """One compare-and-set of ``outcome`` over ``before``: state, events, round records, ``answer``.

        ``announced``: the seats announced connected that the change was decided with (None:
        unknown). ``decided_on``: the stored state ``before`` was decoded from, when the change
        was decided without reading it (then the write also checks it and ``announced``).
        The indexes are told before and after the write (:class:`TableIndexing`).
        """
        after = outcome.table
        await self.indexing.before_write(after)
        ended = [event for event in outcome.events if isinstance(event, RoundEnded) and event.replay]
        kept = self.policy.replays_per_table  # the latest rounds' replays; the one that many before goes
        data = encode(after)
        change = Change(
            after.table_id,
            before.version,
            after.version,
            data,
            self._events(outcome, now_ms),
            answer,
            finished=after.status is TableStatus.CLOSED,
            records=[(f"replay:{event.result.round}", self.signing.sign(event.replay).encode()) for event in ended],
            drop_records=[f"replay:{event.result.round - kept}" for event in ended if event.result.round > kept],
            decided_on=decided_on,
            presence=None if decided_on is None else announced,
            time_ms=now_ms,
        )
        saved = await self._store.save(change)
        if saved.outcome is not SaveOutcome.SAVED:
            return saved
        self._decoded.keep(after.table_id, data, after, announced)
        await self.indexing.written(after, now_ms, by_client=by_client)
        return saved

    async def save_clock_change(self, before: TableState, outcome: Outcome, now_ms: int) -> bool:
        """Write the clock's change ``outcome`` over ``before`` (no caller, no answer); True if written.

        False when the table moved on meanwhile: another process or a client acted first.
        """
        saved = await self._save(before, outcome, now_ms, Answer("clock"), by_client=False, announced=None)
        return saved.outcome is SaveOutcome.SAVED

    async def save_timeout(self, before: TableState, outcome: Outcome, now_ms: int) -> bool:
        """Write the clock's timeout ``outcome`` over ``before``, counted and logged; True if written."""
        if not await self.save_clock_change(before, outcome, now_ms):
            return False
        TIMEOUTS.inc()
        _clock_log.info("timed_out", table_id=before.table_id)
        return True

    async def _time_out_first(self, table: TableState, now_ms: int) -> bool:
        """Apply the clock to ``table`` if its deadline passed; True if the table is to be read again.

        The clock task looks only every ``--clock-interval``; a request that arrives between a
        deadline and that look must not be decided on the table as it was before the deadline
        (a move then would be taken late), so the timeout is applied here first, exactly as the
        clock would (same compare-and-set: one of the two writes it, the other finds it done).
        """
        timed_out = timeout(table, now_ms)
        if not timed_out.changed:
            return False
        await self.save_timeout(table, timed_out, now_ms)
        return True

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
        table_id = valid_table_id(table_id)
        request_id = valid_request_id(getattr(request, "request_id", ""), secret=secret_request_id)
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
            if await self._time_out_first(table, now_ms):
                continue  # decided on the table as the clock left it
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
                Answer(answer_principal, request_id, sealed),
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
        request_id = valid_request_id(getattr(request, "request_id", ""), secret=True)
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
            await self.indexing.reserve(owner, table_id, now_ms)
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
                await self.indexing.release(owner, table_id)
            raise
        if saved.outcome is SaveOutcome.SAVED:
            table = created.outcome.table
            self._decoded.keep(table_id, data, table, 0)  # a new table has announced no one yet
            await self.indexing.created(table, now_ms)
            return response
        if saved.outcome is SaveOutcome.DUPLICATE and saved.answer is not None:
            return answers.open(saved.answer, print_, table_id, self.keys)
        raise RequestIdReused("this request_id already created a table whose answer is no longer kept")
