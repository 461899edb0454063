"""``TableClient``: an async, typed wrapper over the ``dizhu.v1`` stubs for one caller.

One client speaks for one caller of one table: the creator (after :meth:`TableClient.create_table`),
a seat (after :meth:`TableClient.join`, or built with a seat token) or a spectator (no
token). It

* sends the token as ``authorization: Bearer <token>`` on every call;
* gives every decision a fresh ``request_id`` and, when the call fails with UNAVAILABLE,
  DEADLINE_EXCEEDED or a transport CANCELLED, retries *the same request* (same id) with
  exponential backoff: the referee answers a repeated id with its first answer, so a
  retry never applies a move twice (AIP-155);
* remembers the highest table ``version`` it has seen and sends it as
  ``expected_version`` (AIP-154): if the table moved on, the call fails with
  :class:`~dizhu.client.errors.StaleState` and changes nothing;
* turns every failure into a :class:`~dizhu.client.errors.DizhuError`;
* follows the table with :meth:`TableClient.watch` (``WatchTable``): an async iterator of
  events that resumes after a lost connection from the last sequence received.

Example::

    async with TableClient("127.0.0.1:50051") as creator:
        created = await creator.create_table(player_names=["ann", "bob", "cy"], round_limit=1)
        ann = creator.for_seat(created.seat_tokens[0].token)
        view = await ann.get()
        if view.turn_seat == view.your_seat:
            await ann.bid(3)
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Sequence
from types import TracebackType
from typing import Any, Final, Self, TypeVar, cast

import grpc
from google.protobuf.message import Message

from dizhu.client.cards import NotationError, parse_cards, pick
from dizhu.client.connection import CHANNEL_OPTIONS, RetryPolicy, new_request_id, open_channel, tls_credentials
from dizhu.client.errors import (
    DizhuError,
    InvalidArgument,
    RetryableError,
    SequenceOutOfRange,
    Unavailable,
    from_rpc_error,
)
from dizhu.client.table_settings import Seconds, clock_settings, variant_of
from dizhu.v1 import (
    cards_pb2,
    events_pb2,
    rules_service_pb2,
    rules_service_pb2_grpc,
    table_pb2,
    table_service_pb2,
    table_service_pb2_grpc,
)

__all__ = [
    "CHANNEL_OPTIONS",
    "CardsLike",
    "RetryPolicy",
    "Seconds",
    "TableClient",
    "new_request_id",
    "open_channel",
    "tls_credentials",
]

_log = logging.getLogger("dizhu.client")

#: Cards as messages, or as notation (``"3 3 4"``; for a play, resolved against the hand).
CardsLike = str | Iterable[cards_pb2.Card]
_Response = TypeVar("_Response", bound=Message)
_THREE: Final = cards_pb2.VARIANT_THREE_PLAYER
_FOUR: Final = cards_pb2.VARIANT_FOUR_PLAYER


class TableClient:
    """One caller of one table; see the module docstring.

    ``target`` is ``"host:port"`` or any gRPC target (``"ipv4:10.0.0.1:50051,10.0.0.2:50051"``
    lists referees to fail over to): the client opens, and :meth:`close` closes, a channel
    with :data:`CHANNEL_OPTIONS` -- over TLS with ``credentials`` (see :func:`tls_credentials`),
    else in plaintext; or an open ``grpc.aio.Channel`` (left open by :meth:`close`). ``table_id`` and
    ``token`` may be given when known (a bot handed a seat), else set by
    :meth:`create_table` (creator token) or :meth:`join` (seat token).
    """

    def __init__(
        self,
        target: str | grpc.aio.Channel,
        *,
        table_id: str | None = None,
        token: str | None = None,
        api_key: str | None = None,
        retry: RetryPolicy | None = None,
        credentials: grpc.ChannelCredentials | None = None,
    ) -> None:
        if isinstance(target, str):
            self._channel = open_channel(target, credentials)
            self._owns_channel = True
        else:
            self._channel = target
            self._owns_channel = False
        self._tables: Any = table_service_pb2_grpc.TableServiceStub(self._channel)  # type: ignore[no-untyped-call]
        self._rules: Any = rules_service_pb2_grpc.RulesServiceStub(self._channel)  # type: ignore[no-untyped-call]
        self.table_id = table_id
        self.token = token
        self.api_key = api_key
        self.retry = retry or RetryPolicy()
        #: The highest table version seen (0: none yet); sent as ``expected_version``.
        self.version = 0
        #: The latest view received (for the highest version), or None.
        self.view: table_pb2.TableView | None = None
        #: The creator token, after :meth:`create_table`.
        self.creator_token: str | None = None

    # -- life cycle ------------------------------------------------------------------

    @property
    def channel(self) -> grpc.aio.Channel:
        """The channel the client calls through (shared by :meth:`for_seat` clients)."""
        return self._channel

    def for_seat(self, token: str, table_id: str | None = None) -> TableClient:
        """Another client over the same channel acting with ``token`` (e.g. a pre-assigned seat's)."""
        return TableClient(self._channel, table_id=table_id or self.table_id, token=token, retry=self.retry)

    async def close(self) -> None:
        """Close the channel if this client opened it (it does not close the table: see :meth:`close_table`)."""
        if self._owns_channel:
            await self._channel.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    # -- plumbing --------------------------------------------------------------------

    @property
    def seat(self) -> int | None:
        """This caller's seat, as the latest view says; None for a spectator or the creator."""
        if self.view is None or not self.view.HasField("your_seat"):
            return None
        return self.view.your_seat

    @property
    def variant(self) -> cards_pb2.Variant:
        """The table's variant, from the latest view (three-player before any view)."""
        if self.view is None or not self.view.settings.variant:
            return _THREE
        return self.view.settings.variant

    def _metadata(self, token: str | None = None) -> tuple[tuple[str, str], ...]:
        pairs: list[tuple[str, str]] = []
        if token := token or self.token:
            pairs.append(("authorization", f"Bearer {token}"))
        return tuple(pairs)

    def _table(self) -> str:
        if not self.table_id:
            raise ValueError("no table yet: create_table(), join() or pass table_id=")
        return self.table_id

    def _observe(self, view: table_pb2.TableView) -> table_pb2.TableView:
        """Remember ``view`` if it is the newest seen (a retried call may answer an older one)."""
        if view.table_id and (self.table_id is None or view.table_id == self.table_id) and view.version >= self.version:
            self.version = view.version
            self.view = view
        return view

    async def _call(
        self,
        method: Callable[..., Awaitable[Any]],
        request: Message,
        response_type: type[_Response],
        *,
        token: str | None = None,
        anonymous: bool = False,
        extra_metadata: Sequence[tuple[str, str]] = (),
    ) -> _Response:
        """Call ``method`` with ``request``, retrying the same request on transient failures.

        The caller's token (or ``token``) goes with the call unless ``anonymous``.
        """
        metadata = (*(() if anonymous else self._metadata(token)), *extra_metadata)
        delays = iter(self.retry.delays())
        while True:
            try:
                response = await method(request, metadata=metadata, timeout=self.retry.timeout_s)
            except grpc.aio.AioRpcError as rpc_error:
                error = from_rpc_error(rpc_error)
                delay = next(delays, None) if isinstance(error, RetryableError) else None
                # A wait the referee asks for (RetryInfo) is honoured, unless longer than the policy allows.
                if delay is None or error.retry_delay_s > self.retry.max_delay_s:
                    raise error from rpc_error
                await asyncio.sleep(max(delay, error.retry_delay_s))
                continue
            return cast(_Response, response)

    # -- TableService ----------------------------------------------------------------

    async def create_table(
        self,
        *,
        variant: int | str = "3p",
        player_names: Sequence[str] = (),
        round_limit: int = 1,
        seeds: Sequence[bytes] = (),
        next_round: table_pb2.NextRound = table_pb2.NEXT_ROUND_AUTOMATIC,
        spring: bool = False,
        first_dealer: int | None = None,
        max_redeals: int | None = None,
        decision_time: Seconds | None = None,
        first_decision_time: Seconds | None = None,
        time_bank: Seconds | None = None,
        timeout_policy: str | table_pb2.TimeoutPolicy = "auto_play",
        settings: table_pb2.TableSettings | None = None,
        request_id: str | None = None,
    ) -> table_service_pb2.CreateTableResponse:
        """Create a table; this client becomes its creator (``creator_token``) and follows it.

        The table plays ``round_limit`` rounds (default 1, so that bots run against it end;
        0 for no limit) and closes by itself. The turn clock is off unless ``decision_time``
        is given (seconds, or a ``timedelta``; whole milliseconds): then ``first_decision_time``
        (default: ``decision_time``), ``time_bank`` (default: none) and ``timeout_policy``
        (``"auto_play"`` or ``"forfeit"``) apply, see docs/tables.md. ``settings`` overrides
        every keyword setting when given. The seat tokens of ``player_names`` come back in
        the response's ``seat_tokens``: hand each to :meth:`for_seat`. ``request_id``
        (default: a fresh one) lets a caller that lost the answer -- a crash, a restart --
        ask again for the same table instead of a second one. It fetches the tokens again, so
        it is a secret: 16..64 random characters (make it with :func:`new_request_id`), kept
        like the tokens.
        """
        if settings is None:
            settings = table_pb2.TableSettings(
                variant=variant_of(variant),
                round_limit=round_limit,
                next_round=next_round,
                house_rules=table_pb2.HouseRules(spring=spring),
            )
            if first_dealer is not None:
                settings.first_dealer = first_dealer
            if max_redeals is not None:
                settings.max_redeals = max_redeals
            if decision_time is not None:
                settings.clock.CopyFrom(clock_settings(decision_time, first_decision_time, time_bank, timeout_policy))
            elif first_decision_time is not None or time_bank is not None:
                raise ValueError("first_decision_time and time_bank need a decision_time (the clock is off)")
        request = table_service_pb2.CreateTableRequest(
            request_id=request_id or new_request_id(),
            settings=settings,
            seeds=list(seeds),
            player_names=list(player_names),
        )
        extra = (("x-api-key", self.api_key),) if self.api_key else ()
        response = await self._call(
            self._tables.CreateTable, request, table_service_pb2.CreateTableResponse, extra_metadata=extra
        )
        self.table_id = response.table_id
        self.creator_token = response.creator_token
        self._observe(response.table)
        return response

    async def join(
        self, player_name: str, *, table_id: str | None = None, seat: int | None = None
    ) -> table_service_pb2.JoinTableResponse:
        """Take a free seat (``seat``, or the lowest free one); this client then acts for it."""
        if table_id is not None:
            self.table_id = table_id
        request = table_service_pb2.JoinTableRequest(
            table_id=self._table(), request_id=new_request_id(), player_name=player_name
        )
        if seat is not None:
            request.seat = seat
        response = await self._call(
            self._tables.JoinTable, request, table_service_pb2.JoinTableResponse, anonymous=True
        )
        self.token = response.seat_token
        self._observe(response.table)
        return response

    async def get(self) -> table_pb2.TableView:
        """The table as this caller sees it (its hand included for a seat token)."""
        request = table_service_pb2.GetTableRequest(table_id=self._table())
        response = await self._call(self._tables.GetTable, request, table_service_pb2.GetTableResponse)
        return self._observe(response.table)

    async def list_tables(self, *, page_size: int = 0, page_token: str = "") -> table_service_pb2.ListTablesResponse:
        """One page of the referee's open tables, the most recently active first (needs no table
        nor token): pass ``next_page_token`` back as ``page_token`` for the next page."""
        request = table_service_pb2.ListTablesRequest(page_size=page_size, page_token=page_token)
        return await self._call(self._tables.ListTables, request, table_service_pb2.ListTablesResponse, anonymous=True)

    def _expected(self, expected_version: int | None) -> int:
        return self.version if expected_version is None else expected_version

    async def bid(self, amount: int, *, expected_version: int | None = None) -> table_pb2.TableView:
        """Bid ``amount`` (1..3) or pass (0) in the auction; the view after it."""
        request = table_service_pb2.BidRequest(
            table_id=self._table(),
            request_id=new_request_id(),
            expected_version=self._expected(expected_version),
            amount=amount,
        )
        response = await self._call(self._tables.Bid, request, table_service_pb2.BidResponse)
        return self._observe(response.table)

    def _resolve(self, cards: CardsLike) -> list[cards_pb2.Card]:
        if not isinstance(cards, str):
            return list(cards)
        if not cards.strip():
            return []
        hand = list(self.view.your_hand) if self.view is not None else []
        try:
            return pick(hand, cards) if hand else parse_cards(cards, decks=2 if self.variant == _FOUR else 1)
        except NotationError as error:
            raise InvalidArgument(str(error), code=grpc.StatusCode.INVALID_ARGUMENT) from error

    async def play(self, cards: CardsLike, *, expected_version: int | None = None) -> table_service_pb2.PlayResponse:
        """Play ``cards`` (messages, or notation picked from the latest hand seen); empty passes."""
        request = table_service_pb2.PlayRequest(
            table_id=self._table(),
            request_id=new_request_id(),
            expected_version=self._expected(expected_version),
            cards=self._resolve(cards),
        )
        response = await self._call(self._tables.Play, request, table_service_pb2.PlayResponse)
        self._observe(response.table)
        return response

    async def pass_(self, *, expected_version: int | None = None) -> table_service_pb2.PlayResponse:
        """Pass in the trick (a play of no cards)."""
        return await self.play((), expected_version=expected_version)

    async def settle(self) -> table_service_pb2.SettleResponse:
        """The latest round's settlement and standings; records that this seat has seen them."""
        request = table_service_pb2.SettleRequest(table_id=self._table(), request_id=new_request_id())
        response = await self._call(self._tables.Settle, request, table_service_pb2.SettleResponse)
        self._observe(response.table)
        return response

    async def leave(self) -> table_pb2.TableView:
        """Give up the seat (forfeiting a round in play); the token stops working."""
        request = table_service_pb2.LeaveTableRequest(table_id=self._table(), request_id=new_request_id())
        response = await self._call(self._tables.LeaveTable, request, table_service_pb2.LeaveTableResponse)
        return self._observe(response.table)

    async def close_table(self) -> table_service_pb2.CloseTableResponse:
        """Close the table (creator token); the final standings."""
        request = table_service_pb2.CloseTableRequest(table_id=self._table(), request_id=new_request_id())
        token = self.creator_token or self.token
        response = await self._call(self._tables.CloseTable, request, table_service_pb2.CloseTableResponse, token=token)
        self._observe(response.table)
        return response

    async def watch(
        self,
        after_sequence: int | None = None,
        *,
        after_write_id: int = 0,
        idle_timeout_s: float = 45.0,
        on_reconnect: Callable[[DizhuError, int | None], None] | None = None,
    ) -> AsyncGenerator[events_pb2.TableEvent, None]:
        """The table's events as this caller may see them (``WatchTable``), until it closes.

        Without ``after_sequence`` the first event is a ``snapshot`` of the table; then one
        event per change, in order, and a ``heartbeat`` while the table is idle. The iterator
        ends after the ``table_closed`` event (or the snapshot of a closed table).

        A lost stream -- ``UNAVAILABLE``, ``CANCELLED``, ``DEADLINE_EXCEEDED``, a dropped
        connection, or nothing at all (not even a heartbeat) for ``idle_timeout_s`` -- is
        reopened, with backoff (``retry``'s delays, restarted by every message received),
        with ``after_sequence`` = the last sequence received and ``after_write_id`` = its
        ``write_id``, to the same target (so to any referee it routes to): the missed events
        follow, or a fresh snapshot if they are no longer kept or the store's history is no
        longer the one received (a store restored behind its last writes). Give
        ``after_write_id`` with ``after_sequence`` for the same check on the first opening.
        ``on_reconnect(error, after_sequence)`` is called before each reopening.
        ``SEQUENCE_OUT_OF_RANGE`` reopens without ``after_sequence`` (a fresh snapshot). When
        ``retry.attempts`` reopenings in a row fail, the last error is raised: call
        ``watch(last sequence)`` again later. Other errors (``TableNotFound``,
        ``Unauthenticated``, ...) are raised at once.

        Snapshots update :attr:`view` and :attr:`version` like any answer.
        """
        table_id = self._table()
        last, last_write = after_sequence, after_write_id
        delays = iter(self.retry.delays())
        while True:
            request = table_service_pb2.WatchTableRequest(table_id=table_id)
            if last is not None:
                request.after_sequence = last
                request.after_write_id = last_write
            call = self._tables.WatchTable(request, metadata=self._metadata())
            error: DizhuError
            try:
                while True:
                    try:
                        # Not asyncio.wait_for: on Python 3.11 it can swallow the caller's
                        # cancellation when the read completes at the same moment.
                        async with asyncio.timeout(idle_timeout_s):
                            response = await call.read()
                    except TimeoutError:
                        error = Unavailable(
                            f"no message on the event stream for {idle_timeout_s:g}s", code=grpc.StatusCode.UNAVAILABLE
                        )
                        break
                    if response is grpc.aio.EOF:
                        return  # the stream ends with OK only once the table is closed
                    event: events_pb2.TableEvent = response.event
                    delays = iter(self.retry.delays())
                    last, last_write = event.sequence, event.write_id
                    if event.HasField("snapshot"):
                        self._observe(event.snapshot)
                    yield event
                    if event.HasField("table_closed"):
                        return
            except grpc.aio.AioRpcError as rpc_error:
                error = from_rpc_error(rpc_error)
                if isinstance(error, SequenceOutOfRange) and last is not None:
                    last, last_write = None, 0
                elif not isinstance(error, RetryableError):
                    raise error from rpc_error
            finally:
                call.cancel()
            delay = 0.0 if last is None and isinstance(error, SequenceOutOfRange) else next(delays, None)
            if delay is None:
                raise error
            _log.info("event stream lost (%s); resuming after sequence %s in %.2fs", error.reason, last, delay)
            if on_reconnect is not None:
                on_reconnect(error, last)
            await asyncio.sleep(delay)

    # -- RulesService ----------------------------------------------------------------

    def _card_set(self, cards: CardsLike, variant: cards_pb2.Variant) -> cards_pb2.CardSet:
        if isinstance(cards, str):
            return cards_pb2.CardSet(cards=parse_cards(cards, decks=2 if variant == _FOUR else 1))
        return cards_pb2.CardSet(cards=list(cards))

    async def classify(self, cards: CardsLike, *, variant: int | str | None = None) -> rules_service_pb2.Classification:
        """How ``cards`` read as a combination of the variant (the table's by default)."""
        v = self.variant if variant is None else variant_of(variant)
        request = rules_service_pb2.ClassifyRequest(variant=v, cards=self._card_set(cards, v))
        response = await self._call(self._rules.Classify, request, rules_service_pb2.ClassifyResponse, anonymous=True)
        return response.classification

    async def legal_moves(
        self, hand: CardsLike, to_beat: CardsLike | None = None, *, variant: int | str | None = None
    ) -> rules_service_pb2.ListLegalMovesResponse:
        """Every combination ``hand`` can play (leading, or against ``to_beat``) and ``can_pass``."""
        v = self.variant if variant is None else variant_of(variant)
        request = rules_service_pb2.ListLegalMovesRequest(variant=v, hand=self._card_set(hand, v))
        if to_beat is not None:
            request.to_beat.CopyFrom(self._card_set(to_beat, v))
        return await self._call(
            self._rules.ListLegalMoves, request, rules_service_pb2.ListLegalMovesResponse, anonymous=True
        )

    async def compare(
        self, a: CardsLike, b: CardsLike, *, variant: int | str | None = None
    ) -> rules_service_pb2.CompareResponse:
        """Whether play ``b`` beats play ``a``, with both classifications."""
        v = self.variant if variant is None else variant_of(variant)
        request = rules_service_pb2.CompareRequest(variant=v, a=self._card_set(a, v), b=self._card_set(b, v))
        return await self._call(self._rules.Compare, request, rules_service_pb2.CompareResponse, anonymous=True)
