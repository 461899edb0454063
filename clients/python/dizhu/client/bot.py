"""Writing a bot: subclass :class:`Bot`, hand it to :func:`run_bot`.

A bot makes two kinds of decisions, and nothing else: how much to bid, and which legal
move to play. Everything around them -- reading the table, knowing when it is its turn,
asking the rules for the legal moves, retries, stale reads, reconnection, settling
rounds -- is the :class:`BotRunner`'s job.

Example, a complete bot that bids 1 when it holds a joker and plays its smallest move::

    import asyncio
    from dizhu.client import Bot, run_bot
    from dizhu.v1 import cards_pb2, rules_service_pb2, table_pb2

    class SmallestFirst(Bot):
        def choose_bid(self, view: table_pb2.TableView) -> int:
            jokers = [c for c in view.your_hand if c.rank >= cards_pb2.RANK_BLACK_JOKER]
            return 1 if jokers and view.highest_bid == 0 else 0

        def choose_play(
            self,
            view: table_pb2.TableView,
            legal: list[rules_service_pb2.LegalMove],
            can_pass: bool,
        ) -> list[cards_pb2.Card]:
            if not legal:
                return []                                   # pass (legal is empty only when following)
            smallest = min(legal, key=lambda m: (m.combination.main_rank, -m.combination.size))
            return list(smallest.cards)

    asyncio.run(run_bot(SmallestFirst(), "127.0.0.1:50051", table_id, seat_token))

Any of the bot's methods may be ``async def`` instead (a bot that asks a model server, or
thinks in a thread with ``asyncio.to_thread``): the runner awaits what they return.

The runner learns that the table changed from a ``WatchTable`` stream
(:class:`StreamingViews`, the default: it reads the seat's view with ``GetTable`` as soon
as an event announces a change that may ask something of the seat, so a bot answers within
a round trip of its turn, well before any turn deadline) or by polling ``GetTable``
(:class:`PollingViews`). Both implement :class:`ViewSource`; a bot never sees the difference.
"""

from __future__ import annotations

import abc
import asyncio
import dataclasses
import inspect
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from typing import Final, Protocol, TypeVar, cast

import grpc

from dizhu.client.client import RetryPolicy, TableClient
from dizhu.client.errors import DizhuError, MoveRefused, OutOfTurn, RetryableError, TableClosed
from dizhu.v1 import cards_pb2, events_pb2, rules_service_pb2, table_pb2, table_service_pb2

__all__ = [
    "Bot",
    "BotRunner",
    "Decision",
    "PollingViews",
    "StreamingViews",
    "ViewSource",
    "run_bot",
    "to_beat",
]

_log = logging.getLogger("dizhu.client.bot")
_CLOSED: Final = table_pb2.PHASE_CLOSED
_ROUND_OVER: Final = table_pb2.PHASE_ROUND_OVER
_AUCTION: Final = table_pb2.PHASE_AUCTION
_PLAY: Final = table_pb2.PHASE_PLAY
_T = TypeVar("_T")


async def _outcome(value: _T | Awaitable[_T]) -> _T:
    """What a bot method returned, awaited if it is ``async``."""
    if inspect.isawaitable(value):
        return cast(_T, await value)
    return value


class Bot(abc.ABC):
    """A player: decides bids and plays from what its seat sees. See the module docstring.

    Both methods get the seat's :class:`~dizhu.v1.table_pb2.TableView` (``your_hand``,
    ``your_seat``, the auction, the landlord, the current ``trick``, every seat's
    ``cards_left``, and ``history``: every bid and play of the round so far, for counting
    cards). They may be plain functions or ``async def``: keep them quick either way, or
    they hold up the table -- and on a table with a clock (``view.turn_deadline``) a
    decision that comes too late is made by the referee instead.
    """

    #: The name the bot takes a seat with when the runner joins for it.
    name: str = "bot"

    @abc.abstractmethod
    def choose_bid(self, view: table_pb2.TableView) -> int | Awaitable[int]:
        """0 to pass, else one of ``view.legal_bids`` (a bid not among them is turned into a pass)."""

    @abc.abstractmethod
    def choose_play(
        self, view: table_pb2.TableView, legal: list[rules_service_pb2.LegalMove], can_pass: bool
    ) -> Sequence[cards_pb2.Card] | Awaitable[Sequence[cards_pb2.Card]]:
        """The cards to play, usually ``legal[i].cards``; empty to pass (only when ``can_pass``).

        ``legal`` is every combination the hand can play now (when following: the ones that
        beat the trick's last play, bombs and rocket included), each with the exact cards.
        """

    def on_round_over(self, settlement: table_service_pb2.SettleResponse) -> Awaitable[None] | None:
        """Called once per finished round with its settlement, reveal and standings."""
        return None


@dataclasses.dataclass(frozen=True, slots=True)
class Decision:
    """What a runner did, for observers (a narrator, a logger): one per accepted call."""

    #: The seat that acted.
    seat: int
    #: ``"bid"``, ``"play"`` (cards empty: a pass) or ``"settle"``.
    action: str
    #: The view just before the decision (the seat's own: it shows that seat's hand).
    before: table_pb2.TableView
    #: The view the referee answered with, after the decision.
    after: table_pb2.TableView
    amount: int = 0
    cards: tuple[cards_pb2.Card, ...] = ()
    #: How the cards were read (unset message for a pass).
    combination: cards_pb2.Combination = dataclasses.field(default_factory=cards_pb2.Combination)
    settlement: table_service_pb2.SettleResponse | None = None


class ViewSource(Protocol):
    """Where a runner gets table views from: a WatchTable stream or polling."""

    async def next_view(self, after_version: int) -> table_pb2.TableView:
        """A view with a version above ``after_version`` (or of a closed table), waiting as needed."""
        ...

    async def aclose(self) -> None:
        """Release what the source holds (a stream); the runner calls it when it stops."""
        ...


class PollingViews:
    """A :class:`ViewSource` polling ``GetTable``.

    Every ``interval_s`` for the first ``hot_s`` seconds of a wait (the other seats are
    usually quick), then backing off exponentially up to ``max_interval_s`` while the
    table stays idle (a slow player, a free seat). On a table with a clock the interval
    never exceeds a tenth of the decision time, so that the seat notices its turn in time.
    """

    def __init__(
        self, client: TableClient, *, interval_s: float = 0.01, hot_s: float = 1.0, max_interval_s: float = 1.0
    ) -> None:
        self.client = client
        self.interval_s = interval_s
        self.hot_s = hot_s
        self.max_interval_s = max_interval_s

    def _longest_wait(self) -> float:
        view = self.client.view
        decision_s = view.settings.clock.decision_time.ToTimedelta().total_seconds() if view is not None else 0.0
        if decision_s > 0:
            return max(self.interval_s, min(self.max_interval_s, decision_s / 10))
        return self.max_interval_s

    async def next_view(self, after_version: int) -> table_pb2.TableView:
        loop = asyncio.get_running_loop()
        started = loop.time()
        delay = self.interval_s
        while True:
            view = await self.client.get()
            if view.version > after_version or view.phase == _CLOSED:
                return view
            await asyncio.sleep(delay)
            if loop.time() - started > self.hot_s:
                delay = min(delay * 2, self._longest_wait())

    async def aclose(self) -> None:
        """Nothing to release."""


class StreamingViews:
    """A :class:`ViewSource` following the table's ``WatchTable`` stream (:meth:`TableClient.watch`).

    The stream (opened with the client's token at the first :meth:`next_view`) says *when*
    the table changed; the view itself is read with ``GetTable``, once per change that
    is newer than the view the runner holds and may ask something of the seat (events of
    one change share its version; a burst of changes costs one read). A change whose every
    event is a bid or play that hands the turn to another seat (``next_seat``), another
    seat's ``Settle`` or a seat's presence asks nothing of this one and is not read: in a
    3p game a seat reads once per turn of its own rather than after every move. Events are
    only signals here, so unknown kinds within v1 are read like any change, and nothing is
    rebuilt from them.

    Each heartbeat (an idle table) also triggers a read, as a check that the stream
    missed nothing: a broken feed costs a heartbeat interval, never a hung bot.

    The stream resumes by itself after a lost connection (from the last sequence
    received; see :meth:`TableClient.watch`). If it gives up, :meth:`next_view` raises
    its :class:`~dizhu.client.errors.RetryableError` (the runner waits, reads the table
    and calls again) and the next call reopens it from the last sequence received.
    """

    def __init__(self, client: TableClient, *, idle_timeout_s: float = 45.0) -> None:
        self.client = client
        self.idle_timeout_s = idle_timeout_s
        #: The last sequence received (None before the first event).
        self.last_sequence: int | None = None
        #: The highest version an event announced (0: none yet).
        self.latest_version = 0
        #: The highest version of a change that may ask something of this seat (0: none yet).
        self.concerning_version = 0
        #: Whether the stream said the table is closed.
        self.closed = False
        #: Streams opened, and reconnections after a lost stream (for reports and tests).
        self.streams_opened = 0
        self.resumes = 0
        #: Changes found by a heartbeat's check before their event (a race, or a feed that lost events).
        self.missed = 0
        self._events: AsyncGenerator[events_pb2.TableEvent, None] | None = None

    def _resumed(self, error: DizhuError, after_sequence: int | None) -> None:
        self.resumes += 1
        _log.info("seat stream resuming after sequence %s (%s)", after_sequence, error.reason)

    async def _pump(self) -> str | None:
        """Wait for the next event, note what it says, and return its kind (None at the end)."""
        if self._events is None:
            if self.streams_opened:
                self.resumes += 1
            self.streams_opened += 1
            self._events = self.client.watch(
                self.last_sequence, idle_timeout_s=self.idle_timeout_s, on_reconnect=self._resumed
            )
        try:
            event = await anext(self._events)
        except StopAsyncIteration:
            self._events = None
            self.closed = True
            return None
        except BaseException:
            self._events = None  # a generator that raised is finished: the next call reopens
            raise
        self.last_sequence = event.sequence
        kind = event.WhichOneof("payload") or "unknown"
        if kind == "heartbeat":
            return kind
        self.latest_version = max(self.latest_version, event.version)
        if self._concerns_the_seat(event, kind):
            self.concerning_version = max(self.concerning_version, event.version)
        if kind == "table_closed" or (kind == "snapshot" and event.snapshot.phase == _CLOSED):
            self.closed = True
        return kind

    def _concerns_the_seat(self, event: events_pb2.TableEvent, kind: str) -> bool:
        """Whether the change ``event`` is part of may ask something of this seat (a turn, a
        settlement, a new deal, a closed table): anything but a bid or play that hands the turn
        to another seat, another seat's settle, a clock started for another seat or a presence.
        Unknown: yes (a seat not known yet, an event without ``next_seat``, a kind of event
        this runner does not know)."""
        seat = self.client.seat
        if seat is None:
            return True
        if kind in ("bid_made", "cards_played"):
            move = event.bid_made if kind == "bid_made" else event.cards_played
            return not move.HasField("next_seat") or move.next_seat == seat
        if kind == "seat_settled":
            return event.seat_settled.seat == seat
        if kind == "turn_deadline":
            return event.turn_deadline.seat == seat
        return kind != "seat_presence"

    async def next_view(self, after_version: int) -> table_pb2.TableView:
        while True:
            while not self.closed and self.concerning_version <= after_version:
                if await self._pump() == "heartbeat":
                    # An idle stream: check that it missed nothing (it never should).
                    view = await self.client.get()
                    if view.version > self.latest_version or view.phase == _CLOSED:
                        self.missed += 1
                        _log.info("version %d found on a heartbeat, before (or without) its event", view.version)
                    if view.version > after_version or view.phase == _CLOSED:
                        return view
            view = await self.client.get()
            if view.version > after_version or view.phase == _CLOSED:
                return view
            # An event announced a change this read does not show yet: ask again shortly.
            self.latest_version = self.concerning_version = view.version
            await asyncio.sleep(0.01)

    async def aclose(self) -> None:
        """Close the stream, if one is open."""
        events, self._events = self._events, None
        if events is not None:
            await events.aclose()


def to_beat(view: table_pb2.TableView) -> list[cards_pb2.Card] | None:
    """The cards the viewer must beat (the view's ``to_beat``); None when leading (the view leaves it unset)."""
    if not view.HasField("to_beat"):
        return None
    return list(view.to_beat.cards)


class BotRunner:
    """Plays ``bot`` for the seat of ``client`` until the table closes; see :meth:`run`.

    * Reads the table from ``views`` (default :class:`StreamingViews`: a ``WatchTable``
      stream saying when to read) and acts as soon as the view says it is the seat's
      turn; in ``PHASE_PLAY`` it asks ``RulesService`` for the legal moves of the exact
      hand against the view's ``to_beat`` (unset when it leads).
    * ``STALE_STATE``, ``NOT_YOUR_TURN``, ``WRONG_PHASE``: the table moved on; read again.
    * A move the rules refuse (the bot's mistake): logged, replaced by a pass or the
      smallest legal move, counted in ``refused``.
    * Transport failures (``UNAVAILABLE``, deadlines): the client retries each call with
      the same request id; if that is not enough the runner waits (exponential backoff up
      to ``max_reconnect_delay_s``) and reads the table again, ``max_reconnects`` times in
      a row at most, then raises.
    * In ``PHASE_ROUND_OVER`` it calls ``Settle`` once per round and passes the result to
      ``bot.on_round_over``. (With ``NEXT_ROUND_AUTOMATIC`` tables it settles nothing: the
      round's result is in the views.)
    * ``on_decision`` is called after every accepted call with a :class:`Decision`.
    """

    def __init__(
        self,
        bot: Bot,
        client: TableClient,
        *,
        views: ViewSource | None = None,
        on_decision: Callable[[Decision], None] | None = None,
        max_reconnects: int = 20,
        max_reconnect_delay_s: float = 5.0,
    ) -> None:
        self.bot = bot
        self.client = client
        self.views: ViewSource = views if views is not None else StreamingViews(client)
        self.on_decision = on_decision
        self.max_reconnects = max_reconnects
        self.max_reconnect_delay_s = max_reconnect_delay_s
        #: Decisions accepted, moves the rules refused, and reconnections, for reports.
        self.decisions = 0
        self.refused = 0
        self.reconnects = 0
        self._settled_round = 0

    async def run(self) -> table_pb2.TableView:
        """Play until the table is closed; the final view. The view source is closed at the end."""
        try:
            return await self._run()
        finally:
            await self.views.aclose()

    async def _run(self) -> table_pb2.TableView:
        failures = 0
        view = await self._read(0)
        while view.phase != _CLOSED:
            try:
                after = await self._step(view)
                view = after if after is not None else await self.views.next_view(view.version)
                failures = 0
            except OutOfTurn as error:
                _log.debug("re-reading after %s", error.reason)
                view = await self._read(0)
            except TableClosed:
                view = await self._read(0)
            except RetryableError as error:
                failures += 1
                self.reconnects += 1
                if failures > self.max_reconnects:
                    raise
                delay = min(0.1 * 2 ** (failures - 1), self.max_reconnect_delay_s)
                _log.warning("connection trouble (%s); reading the table again in %.2fs", error.reason, delay)
                await asyncio.sleep(delay)
                view = await self._read(failures)
        return view

    async def _read(self, failures: int) -> table_pb2.TableView:
        """The table now, riding out transient failures."""
        while True:
            try:
                return await self.client.get()
            except RetryableError:
                failures += 1
                self.reconnects += 1
                if failures > self.max_reconnects:
                    raise
                await asyncio.sleep(min(0.1 * 2 ** (failures - 1), self.max_reconnect_delay_s))

    def _my_turn(self, view: table_pb2.TableView) -> bool:
        return view.HasField("turn_seat") and view.HasField("your_seat") and view.turn_seat == view.your_seat

    async def _step(self, view: table_pb2.TableView) -> table_pb2.TableView | None:
        """Act on ``view`` if there is something to do; the view after, or None to wait for a change."""
        if view.phase == _ROUND_OVER and view.last_settlement.round > self._settled_round:
            return await self._settle(view)
        if not self._my_turn(view):
            return None
        if view.phase == _AUCTION:
            return await self._bid(view)
        if view.phase == _PLAY:
            return await self._play(view)
        return None

    def _report(self, decision: Decision) -> None:
        self.decisions += 1
        if self.on_decision is not None:
            self.on_decision(decision)

    async def _settle(self, view: table_pb2.TableView) -> table_pb2.TableView:
        response = await self.client.settle()
        self._settled_round = max(self._settled_round, response.settlement.round)
        await _outcome(self.bot.on_round_over(response))
        self._report(Decision(view.your_seat, "settle", view, response.table, settlement=response))
        return response.table

    async def _bid(self, view: table_pb2.TableView) -> table_pb2.TableView:
        amount = await _outcome(self.bot.choose_bid(view))
        if amount not in view.legal_bids:  # a bid the seat may not make is turned into a pass
            amount = 0
        after = await self.client.bid(amount, expected_version=view.version)
        self._report(Decision(view.your_seat, "bid", view, after, amount=amount))
        return after

    async def _play(self, view: table_pb2.TableView) -> table_pb2.TableView:
        beat = to_beat(view)
        options = await self.client.legal_moves(list(view.your_hand), beat, variant=view.settings.variant)
        legal = list(options.moves)
        cards = list(await _outcome(self.bot.choose_play(view, legal, options.can_pass)))
        try:
            response = await self.client.play(cards, expected_version=view.version)
        except MoveRefused as error:
            self.refused += 1
            fallback = [] if options.can_pass or not legal else list(legal[0].cards)
            _log.warning("the bot's move was refused (%s); playing %s instead", error, fallback or "a pass")
            cards = fallback
            response = await self.client.play(cards, expected_version=view.version)
        self._report(
            Decision(view.your_seat, "play", view, response.table, cards=tuple(cards), combination=response.combination)
        )
        return response.table


async def run_bot(
    bot: Bot,
    target: str,
    table_id: str,
    seat_token: str | None = None,
    *,
    player_name: str | None = None,
    retry: RetryPolicy | None = None,
    on_decision: Callable[[Decision], None] | None = None,
    views: Callable[[TableClient], ViewSource] = StreamingViews,
    credentials: grpc.ChannelCredentials | None = None,
) -> table_pb2.TableView:
    """Play ``bot`` at ``table_id`` on the referee at ``target`` until the table closes.

    With ``seat_token`` the bot plays that seat (a pre-assigned one); without, it joins
    the table as ``player_name`` (default ``bot.name``). ``views`` makes the view source
    from the client (default :class:`StreamingViews`; :class:`PollingViews` polls).
    ``credentials``: the referee serves TLS (see :func:`~dizhu.client.tls_credentials`).
    Returns the closed table's view.
    """
    async with TableClient(target, table_id=table_id, token=seat_token, retry=retry, credentials=credentials) as client:
        if seat_token is None:
            await client.join(player_name or bot.name)
        return await BotRunner(bot, client, views=views(client), on_decision=on_decision).run()
