"""A person's seat at a table, in the terminal: the loop of ``dizhu play``.

The person is an ordinary client of the referee: a seat token, a ``WatchTable`` stream
(narrated as it comes, and telling when to read the seat's view again) and the same calls
a bot makes. The bundled bots in the other seats are ordinary clients too
(:class:`dizhu.bots.BotHost`). By default the referee is one started in this process with an
embedded Redis (:func:`dizhu.process.local_referee`); ``target`` names a running one.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as dt
import sys
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import grpc

from dizhu.bots import BotHost
from dizhu.client import DizhuError, MoveRefused, OutOfTurn, PermissionDenied, TableClient, Unauthenticated, to_beat
from dizhu.client.bots import BOT_KINDS
from dizhu.client.cards import format_cards
from dizhu.demo import Narrator, demo_seeds
from dizhu.play.commands import Bid, Help, NextRound, Play, Quit, Unclear, read_command
from dizhu.play.screen import HELP, HELP_4P, Screen, kind_name, seconds_left
from dizhu.v1 import cards_pb2, rules_service_pb2, table_pb2

__all__ = ["PlayOptions", "play", "stdin_lines"]


@dataclasses.dataclass(frozen=True)
class PlayOptions:
    """What ``dizhu play`` was asked for."""

    variant: str = "3p"
    rounds: int = 3
    #: The bot of each other seat (default: heuristic).
    bots: Sequence[str] | None = None
    name: str = "guest"
    #: Seconds per decision (whole milliseconds, 0.1 at least); 0: no clock.
    clock_s: float = 60
    seed: bytes | None = None
    #: A running referee (``host:port``); None: one in this process.
    target: str | None = None
    #: Join this table (a free seat) instead of creating one with bots.
    table_id: str | None = None
    #: ``target`` serves TLS (``dizhu play --tls`` / ``--tls-ca``).
    credentials: grpc.ChannelCredentials | None = None


async def stdin_lines() -> AsyncIterator[str]:
    """Lines typed on standard input (a daemon thread reads them, so that quitting never waits for one)."""
    loop = asyncio.get_running_loop()
    lines: asyncio.Queue[str | None] = asyncio.Queue()

    def pump() -> None:
        for line in sys.stdin:
            loop.call_soon_threadsafe(lines.put_nowait, line)
        loop.call_soon_threadsafe(lines.put_nowait, None)

    threading.Thread(target=pump, name="stdin", daemon=True).start()
    while (line := await lines.get()) is not None:
        yield line


#: Seconds left at which a waiting question is asked again with the time left: the clock counts down.
COUNTDOWN_S = (30, 10, 5)
#: How long a person who left waits for the stream to tell how the round ended (a hang guard).
_TELL_LEAVING_S = 10.0


class _Seat:
    """The person's client, the latest view it read, and a signal when that or the narration changes."""

    def __init__(self, client: TableClient, screen: Screen) -> None:
        self.client = client
        self.screen = screen
        self.view = table_pb2.TableView()
        self.changed = asyncio.Event()
        self.settled_round = 0
        #: Set once the stream's first message was narrated.
        self.following = asyncio.Event()
        #: The question waiting for an answer (its text is made when shown: the time left changes).
        self.prompt: Callable[[], str] | None = None
        #: Whether the cursor stands after a question shown: the next line starts on a new line.
        self._open_line = False
        self._narrator: Narrator | None = None
        #: Set when the stream ended (the table closed, or it failed): nothing more will be told.
        self.stream_over = False
        #: Set once the person leaves the seat: its token stops working.
        self.leaving = False

    def narrate(self, line: str) -> None:
        if self._open_line:
            self.screen.console.print()
            self._open_line = False
        self.screen.say(line)

    def ask(self, prompt: Callable[[], str] | None) -> None:
        """Show ``prompt`` (None: no question is waiting)."""
        self.prompt = prompt
        if prompt is not None:
            if self._open_line:
                self.screen.console.print()
            self.screen.console.print(prompt(), end="")
            self._open_line = True

    def answered(self) -> None:
        """A line was typed: the terminal's echo ended the question's line."""
        self.prompt = None
        self._open_line = False

    def name(self, seat: table_pb2.SeatView) -> str:
        """The seat's player as the final balances name them: one who left by the name the narration knew."""
        if seat.player_name:
            return seat.player_name
        known = self._narrator.names[seat.seat] if self._narrator is not None else ""
        return f"{known} (left)" if known else f"seat {seat.seat} (free)"

    def told(self, view: table_pb2.TableView) -> bool:
        """Whether the narration has told everything ``view`` shows (or will tell nothing more)."""
        return self.stream_over or (self._narrator is not None and self._narrator.has_told(view))

    async def read(self) -> None:
        try:
            view = await self.client.get()
        except (Unauthenticated, PermissionDenied):
            if not self.leaving:
                raise
            self.client.token = None  # the seat's token is revoked: read on as a spectator, as the stream does
            view = await self.client.get()
        if view.version >= self.view.version:
            self.view = view
            self.changed.set()

    async def follow(self, kinds: Sequence[str]) -> None:
        """Narrate the table's stream and read the view after every change, until the table closes."""
        try:
            async for event in self.client.watch():
                if self._narrator is None:
                    view = event.snapshot if event.HasField("snapshot") else self.view
                    self._narrator = Narrator(view, kinds, self.narrate)
                    self.following.set()
                else:
                    self._narrator.on_event(event)
                kind = event.WhichOneof("payload")
                if not self._open_line and self.prompt is not None:
                    if kind != "heartbeat" and event.version > self.view.version:
                        self.prompt = None  # the table changed under the question: the turn loop asks what is asked now
                    else:
                        self.ask(self.prompt)  # lines were narrated under the question: ask it again
                if kind == "seat_presence" or (kind != "heartbeat" and event.version > self.view.version):
                    await self.read()
                self.changed.set()
            await self.read()
        finally:
            self.stream_over = True
            self.following.set()
            self.changed.set()

    async def until_told(self, view: table_pb2.TableView) -> None:
        """Wait until the narration has told ``view`` (the stream goes on after the seat is left)."""
        while not self.told(view):
            self.changed.clear()
            await self.changed.wait()


def _phase(view: table_pb2.TableView, settled_round: int) -> str:
    mine = view.HasField("your_seat") and view.HasField("turn_seat") and view.turn_seat == view.your_seat
    if mine and view.phase == table_pb2.PHASE_AUCTION:
        return "auction"
    if mine and view.phase == table_pb2.PHASE_PLAY:
        return "play"
    if view.phase == table_pb2.PHASE_ROUND_OVER and view.last_settlement.round > settled_round:
        return "round_over"
    return "wait"


async def _legal(seat: _Seat) -> list[rules_service_pb2.LegalMove]:
    view = seat.view
    answer = await seat.client.legal_moves(list(view.your_hand), to_beat(view), variant=view.settings.variant)
    return list(answer.moves)


def _prompt(view: table_pb2.TableView, phase: str) -> str:
    clock = seconds_left(view)
    timer = f" [{clock} s left]" if clock is not None else ""
    if phase == "auction":
        return f"Your bid (1-3, 0 or p to pass; highest so far {view.highest_bid}){timer} > "
    if phase == "play":
        if to_beat(view) is None:
            return f"Your play (you lead; h for help){timer} > "
        return f"Your play (beat {_play_to_beat(view)}, or p to pass; h for help){timer} > "
    return "Round over: Enter for the next round, q to leave > "


def _play_to_beat(view: table_pb2.TableView) -> str:
    """The play the seat must beat, with whose it is: ``Bob's pair 7c 7d``."""
    beat = view.to_beat
    return f"{view.seats[beat.seat].player_name}'s {kind_name(beat.combination)} {format_cards(beat.cards)}"


def _question(view: table_pb2.TableView, phase: str) -> str:
    """What identifies a question: a decision by the table's version, a finished round by its number
    (the other seats' Settle calls change the version, not the question)."""
    if phase == "round_over":
        return f"round_over/{view.last_settlement.round}"
    return f"{phase}/{view.version}"


def _next_countdown(view: table_pb2.TableView) -> float | None:
    """Seconds until the time left reaches the next of ``COUNTDOWN_S`` (None: no clock or none left)."""
    if not view.HasField("turn_deadline"):
        return None
    left = (view.turn_deadline.ToDatetime(tzinfo=dt.UTC) - dt.datetime.now(tz=dt.UTC)).total_seconds()
    marks = [left - mark for mark in COUNTDOWN_S if left - mark > 0.05]
    return min(marks) if marks else None


async def _act(seat: _Seat, command: Bid | Play | NextRound, version: int) -> None:
    if isinstance(command, Bid):
        seat.view = await seat.client.bid(command.amount, expected_version=version)
    elif isinstance(command, Play):
        seat.view = (await seat.client.play(list(command.cards), expected_version=version)).table
    else:
        settled = await seat.client.settle()
        seat.settled_round = settled.settlement.round
        seat.view = settled.table


class _Turns:
    """Prompts whenever the seat has something to decide, until the table closes or the person leaves.

    A question is shown only once the narration has told everything its view shows, so that the
    table never shows a move before it is narrated and the end of a round is told before the
    question after it.
    """

    def __init__(self, seat: _Seat, lines: AsyncIterator[str]) -> None:
        self.seat = seat
        self.screen = seat.screen
        self.lines = lines
        self.prompted = ""
        #: Whether the question shown was answered (a decision made, the seat left): one that was not
        #: and is no longer asked was answered by the clock, or ended by the table.
        self.answered = True
        #: The event loop's time when a question ended unanswered, and when the one shown was.
        self.taken_at: float | None = None
        self.shown_at = 0.0
        self.legal: list[rules_service_pb2.LegalMove] = []

    async def _show(self, view: table_pb2.TableView, phase: str) -> None:
        """The table, the hand, the legal plays and the prompt, once per question."""
        question = "" if phase == "wait" else _question(view, phase)
        if self.prompted != question and not self.answered:
            self.taken_at = asyncio.get_running_loop().time()
            self.answered = True
        if phase == "wait":
            self.seat.prompt = None
            self.prompted = ""
            return
        if self.prompted == question:
            if self.seat.prompt is None:
                self.seat.ask(lambda: _prompt(view, phase))  # after a refusal, a help, ...: the question again
            return
        self.prompted = question
        self.answered = False
        self.shown_at = asyncio.get_running_loop().time()
        self.seat.prompt = None
        if phase != "round_over":  # a finished round was narrated, settlement and all
            self.screen.table(view)
            if view.your_hand:
                self.screen.hand(view)
        self.legal = await _legal(self.seat) if phase == "play" else []
        if phase == "play":
            self.screen.legal(self.legal)
        self.seat.ask(lambda: _prompt(view, phase))

    async def _line(self, pending: asyncio.Future[Any], countdown_s: float | None) -> bool:
        """Wait for the line, a change of the table or the next countdown mark; whether the line came."""
        changed: asyncio.Future[Any] = asyncio.ensure_future(self.seat.changed.wait())
        await asyncio.wait({pending, changed}, timeout=countdown_s, return_when=asyncio.FIRST_COMPLETED)
        changed.cancel()
        if not pending.done() and not self.seat.changed.is_set() and self.seat.prompt is not None:
            self.seat.ask(self.seat.prompt)  # the time left reached a mark: ask again, counting down
        return pending.done()

    async def _leave(self, view: table_pb2.TableView, said: str) -> None:
        """Leave the seat, let the narration tell how that ended the round (abandoned in the auction,
        forfeited in the play), and say ``said``."""
        if view.HasField("your_seat"):
            self.seat.leaving = True
            left = await self.seat.client.leave()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.seat.until_told(left), _TELL_LEAVING_S)
        self.seat.narrate(said)

    def _stale(self, line: str, arrived: float) -> bool:
        """Whether ``line`` came before the question shown, after one the clock (or the table) answered:
        it was typed for that one, and answers nothing asked now."""
        if self.taken_at is None or arrived >= self.shown_at:
            return False
        self.taken_at = None
        said = line.strip()
        self.screen.say(f'Ignored "{said}": it was typed for a question the clock already answered.', "yellow")
        return True

    async def _obey(self, line: str, view: table_pb2.TableView, phase: str) -> bool:
        """Do what the line says; False when the person leaves."""
        self.seat.answered()
        command = read_command(line, phase=phase, hand=view.your_hand, legal=self.legal)
        if isinstance(command, Quit):
            self.answered = True
            await self._leave(view, "You left the table.")
            return False
        if isinstance(command, Help):
            self.screen.say(HELP)
            if view.settings.variant == cards_pb2.VARIANT_FOUR_PLAYER:
                self.screen.say(HELP_4P)
            if phase == "play":
                self.screen.legal(self.legal, per_kind=None)
        elif isinstance(command, Unclear):
            self.screen.say(command.why, "yellow")
        else:
            try:
                await _act(self.seat, command, view.version)
                self.answered = True
            except MoveRefused as error:
                self.screen.refused(error.reason, error.message)
            except OutOfTurn:
                self.screen.say("The table moved on meanwhile.", "yellow")
                await self.seat.read()
        return True

    async def _next_line(self) -> tuple[str, float]:
        """The next line and the event loop's time it came at, taken in the step that received it: a
        done callback would run an iteration later, after a question shown meanwhile, and the line
        typed before that question would pass for an answer to it."""
        line = await anext(self.lines)
        return line, asyncio.get_running_loop().time()

    async def run(self) -> int:
        pending: asyncio.Future[tuple[str, float]] | None = None
        try:
            while True:
                self.seat.changed.clear()  # before the view is read: a change while showing it is not lost
                view = self.seat.view
                if not self.seat.told(view):
                    if self.prompted and self.prompted != _question(view, _phase(view, self.seat.settled_round)):
                        self.seat.prompt = None  # the question shown is no longer asked
                    await self.seat.changed.wait()
                    continue
                if view.phase == table_pb2.PHASE_CLOSED:
                    return 0
                phase = _phase(view, self.seat.settled_round)
                await self._show(view, phase)
                if pending is None:
                    pending = asyncio.ensure_future(self._next_line())
                countdown = _next_countdown(view) if phase in ("auction", "play") else None
                if not await self._line(pending, countdown):
                    continue
                try:
                    line, arrived = pending.result()
                except StopAsyncIteration:
                    self.seat.answered()
                    await self._leave(self.seat.view, "End of input: you left the table.")
                    return 0
                pending = None
                if self._stale(line, arrived):
                    self.seat.answered()
                    continue
                if not await self._obey(line, view, phase):
                    return 0
        finally:
            if pending is not None:
                pending.cancel()


async def play(options: PlayOptions, screen: Screen, lines: AsyncIterator[str]) -> int:
    """Seat the person (and bots), play until the table closes or the person leaves; an exit status."""
    players = 4 if options.variant == "4p" else 3
    others = list(options.bots or ["heuristic"] * (players - 1))
    if len(others) != players - 1 or not set(others) <= set(BOT_KINDS):
        raise ValueError(f"--bots needs {players - 1} names among {', '.join(sorted(BOT_KINDS))}")
    async with contextlib.AsyncExitStack() as stack:
        if options.target is None:
            from dizhu.process import local_referee

            target = await stack.enter_async_context(local_referee())
        else:
            target = options.target
        credentials = options.credentials if options.target is not None else None
        client = await stack.enter_async_context(
            TableClient(target, table_id=options.table_id, credentials=credentials)
        )
        bots = BotHost(target, limit=players, credentials=credentials)
        stack.push_async_callback(bots.close)
        if options.table_id is None:
            settings = table_pb2.TableSettings(
                variant=cards_pb2.VARIANT_FOUR_PLAYER if players == 4 else cards_pb2.VARIANT_THREE_PLAYER,
                round_limit=options.rounds,
                next_round=table_pb2.NEXT_ROUND_WHEN_ALL_SETTLED,
            )
            if options.clock_s:
                settings.clock.decision_time.FromMilliseconds(round(options.clock_s * 1000))
                settings.clock.timeout_policy = table_pb2.TIMEOUT_POLICY_AUTO_PLAY
            seeds = demo_seeds(options.seed, options.rounds) if options.seed is not None else ()
            created = await client.create_table(settings=settings, seeds=seeds)
            await client.join(options.name, seat=0)
            await bots.seat(created.table_id, others)
            screen.say(f"Table {created.table_id} on {target}: you are seat 0 against {', '.join(others)} bots.")
        else:
            joined = await client.join(options.name)
            screen.say(f"Table {options.table_id} on {target}: you are seat {joined.seat}.")
        seat = _Seat(client, screen)
        await seat.read()
        following = asyncio.create_task(seat.follow(["person", *others]))
        await asyncio.wait(
            {following, asyncio.ensure_future(seat.following.wait())}, return_when=asyncio.FIRST_COMPLETED
        )
        try:
            status = await _Turns(seat, lines).run()
        except DizhuError as error:
            screen.refused(error.reason, error.message)
            status = 1
        finally:
            following.cancel()
            with contextlib.suppress(asyncio.CancelledError, DizhuError):
                await following
        final = seat.view
        if final.phase == table_pb2.PHASE_CLOSED:
            standings = sorted(final.seats, key=lambda s: -s.balance)
            screen.say("Final balances: " + ", ".join(f"{seat.name(s)} {s.balance:+d}" for s in standings), "bold")
        return status
