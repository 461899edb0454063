"""Entrants at a table: bundled bots, gRPC executables and stdio bots, each playing one seat.

Whatever an entrant does -- crash, hang, print garbage, answer an illegal move -- its seat
player never raises into the runner: it records the fault, stops acting for the seat, and
leaves the rest to the referee's clock and timeout policy. A process that crashed or hung
is not used again; the entrant's next game starts a fresh one.

Each process's standard error is kept per game (:class:`CappedLog`: the first and the last
half of ``cap`` bytes, with the count of bytes dropped between them).

Under ``[sandbox]`` (:mod:`dizhu.tournament.sandbox`) every process is confined and lives for
one game: stdio bots and ``per_game = false`` executables are started afresh for each, so
nothing an entrant started outlives its game. A limit that ends one is a crash whose note
names the limit (``crashes: killed: memory limit 512 MiB ...``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import importlib
import json
import logging
import math
import os
import shutil
import signal
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from dizhu.client import (
    Bot,
    BotRunner,
    DizhuError,
    InvalidArgument,
    MoveRefused,
    OutOfTurn,
    RetryableError,
    StreamingViews,
    TableClient,
    TableClosed,
    to_beat,
)
from dizhu.client.bots import BOT_KINDS
from dizhu.rules.deal import derive_seed
from dizhu.tournament import stdio
from dizhu.tournament.config import ConfigError, EntrantSpec, SandboxSpec
from dizhu.tournament.sandbox import REFEREE_SOCKET, Confined, Sandbox, unreachable
from dizhu.v1 import table_pb2

__all__ = ["CannotStart", "CappedLog", "EntrantPlayers", "Seat", "SeatReport", "check_entrant"]

_log = logging.getLogger("dizhu.tournament.players")
_CLOSED: Final = table_pb2.PHASE_CLOSED
#: How long past its deadline a stdio bot's reply is still awaited before it counts as hung.
REPLY_MARGIN_S: Final = 1.0
#: How long a gRPC executable may take to exit once its table is closed.
EXIT_GRACE_S: Final = 3.0
#: Longest line a stdio bot may write.
LINE_LIMIT: Final = 1 << 20
#: How often a process is looked at while waiting for it to exit.
_EXIT_POLL_S: Final = 0.02


class CappedLog:
    """Bytes written to it, keeping the first and the last ``cap // 2`` bytes."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def write(self, chunk: bytes) -> None:
        room = self.cap // 2 - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        excess = len(self.tail) - (self.cap - self.cap // 2)
        if excess > 0:
            del self.tail[:excess]
            self.dropped += excess

    def text(self) -> str:
        middle = f"\n[... {self.dropped} bytes dropped ...]\n".encode() if self.dropped else b""
        return bytes(self.head + middle + self.tail).decode(errors="replace")


@dataclasses.dataclass(slots=True)
class SeatReport:
    """What happened to one seat's player during a game."""

    faults: Counter[str] = dataclasses.field(default_factory=Counter)
    #: The process's standard error (once the game is over), then the runner's notes on the faults.
    log: str = ""
    #: Lines of standard output skipped as garbage, and the first of them (noted once, at the end).
    skipped_lines: int = 0
    first_skipped: str = ""

    def fault(self, name: str, note: str) -> None:
        """Count one fault of kind ``name`` and note why, for the entrant's log."""
        self.faults[name] += 1
        self.note(f"{name}: {note}")

    def note(self, text: str) -> None:
        self.log += f"{_line_break(self.log)}[runner] {text}\n"

    def prepend_stderr(self, text: str) -> None:
        """Put the process's standard error before the notes taken so far."""
        self.log = text + _line_break(text) + self.log if self.log else text

    def skip_line(self, line: bytes | None) -> None:
        """Count a line that is not the awaited reply (``None``: a line over :data:`LINE_LIMIT`)."""
        self.faults["garbage"] += 1
        if not self.skipped_lines:
            self.first_skipped = f"a line over {LINE_LIMIT} bytes" if line is None else repr(_excerpt(line))
        self.skipped_lines += 1

    def note_skipped_lines(self) -> None:
        if self.skipped_lines:
            self.note(
                f"garbage: {self.skipped_lines} line(s) on standard output were not the awaited reply "
                f"and were skipped (the first: {self.first_skipped})"
            )
            self.skipped_lines = 0


def _line_break(text: str) -> str:
    return "\n" if text and not text.endswith("\n") else ""


def _excerpt(line: bytes, limit: int = 80) -> str:
    text = line.decode(errors="replace").rstrip("\n")
    return text if len(text) <= limit else f"{text[:limit]}... ({len(line)} bytes)"


@dataclasses.dataclass(frozen=True, slots=True)
class Seat:
    """One seat of one game, as handed to an entrant."""

    game: str
    game_index: int
    target: str
    client: TableClient
    seat: int
    token: str
    variant: str
    tournament_seed: bytes
    #: Set once the table is closed (or given up).
    closed: asyncio.Event


def _bot(spec: EntrantSpec, seed: bytes) -> Bot:
    """A fresh bot for one seat: bundled by name, else ``module:Class`` (made with the seed if it takes one)."""
    if spec.bot is not None and spec.bot in BOT_KINDS:
        return BOT_KINDS[spec.bot](seed)
    assert spec.bot is not None
    module_name, class_name = spec.bot.split(":")
    cls: Any = getattr(importlib.import_module(module_name), class_name)
    if not (isinstance(cls, type) and issubclass(cls, Bot)):
        raise TypeError(f"{spec.bot} is not a dizhu.client.Bot")
    factory: Callable[..., Bot] = cls
    try:
        return factory(seed)
    except TypeError:  # a bot that takes no seed
        return factory()


def check_entrant(spec: EntrantSpec, cwd: Path, sandbox: SandboxSpec | None = None) -> None:
    """Fail now if the entrant cannot play: a ``module:Class`` bot that cannot be made (ImportError,
    AttributeError, TypeError), a program that is not there or cannot be run, confined with
    ``sandbox`` too (:class:`ConfigError`, naming the entrant and its key)."""
    if spec.bot is not None:
        _bot(spec, bytes(32))
        return
    key, argv = ("command", spec.command) if spec.command else ("stdio", spec.stdio)
    cwd = spec.folder or cwd
    program = argv[0]
    if "{" in program:  # a placeholder: known only once a game is given
        return
    where = f"entrants.{spec.name}.{key}: the program {program!r}"
    if sandbox is not None and (why := unreachable(sandbox, cwd, program)):
        raise ConfigError(f"{where} {why}")
    if os.sep not in program:
        if shutil.which(program) is None:
            raise ConfigError(f"{where} is not on the PATH")
        return
    path = cwd / program
    if not path.is_file():
        raise ConfigError(f"{where} does not exist (looked for {path})")
    if not os.access(path, os.X_OK):
        raise ConfigError(f"{where} is not executable ({path})")


class CannotStart(Exception):
    """An entrant's program could not be started (gone, or no longer executable, since the run began)."""


class EntrantProcess:
    """One running entrant process: its pipes, and its standard error read into the current game's log."""

    def __init__(
        self,
        transport: asyncio.SubprocessTransport,
        process: asyncio.subprocess.Process,
        cap: int,
        confined: Confined | None = None,
    ) -> None:
        #: Held to let go of the pipes ourselves: a child the process left behind may keep them open.
        self.transport = transport
        self.process = process
        self.log = CappedLog(cap)
        #: Its sandbox's watch, when confined; whether the limit that ended it is noted already.
        self.confined = confined
        self.limit_noted = False
        if confined is not None:
            confined.watch(process.pid)
        self._next_id = 0
        self._stderr = asyncio.create_task(self._read_stderr())

    @classmethod
    async def start(
        cls,
        argv: Sequence[str],
        cwd: Path,
        env: dict[str, str],
        cap: int,
        *,
        stdout: bool,
        confined: Confined | None = None,
    ) -> EntrantProcess:
        """Start ``argv`` in ``cwd`` with the runner's environment and ``env`` (``confined``: with
        ``env`` alone, as :meth:`Sandbox.confine` made them)."""
        # asyncio.create_subprocess_exec's own steps, keeping the transport it does not return.
        loop = asyncio.get_running_loop()
        try:
            transport, protocol = await loop.subprocess_exec(
                lambda: asyncio.subprocess.SubprocessStreamProtocol(limit=LINE_LIMIT, loop=loop),
                *argv,
                cwd=cwd,
                env=env if confined is not None else {**os.environ, **env},
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE if stdout else asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,  # its own process group: the runner's terminal's signals are not the bot's
            )
        except OSError as error:
            if confined is not None:
                await confined.close(None)
            raise CannotStart(f"{argv[0]!r} could not be started: {error.strerror or error}") from error
        return cls(transport, asyncio.subprocess.Process(transport, protocol, loop), cap, confined)

    async def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        while chunk := await self.process.stderr.read(65536):
            self.log.write(chunk)

    @property
    def alive(self) -> bool:
        return self.process.returncode is None

    def new_log(self, cap: int) -> CappedLog:
        """Start the next game's log; the previous one is returned by whoever held it."""
        self.log = CappedLog(cap)
        return self.log

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def send(self, message: dict[str, Any]) -> bool:
        """Write one JSON line; False if the process no longer reads."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
            await self.process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            return False
        return True

    async def read_reply(self, request_id: int, timeout_s: float, report: SeatReport) -> dict[str, Any] | str:
        """The reply to ``request_id``, or ``"hang"`` (none in time) or ``"crash"`` (end of output).

        Lines that are not a JSON object with this id are counted as ``garbage`` and skipped.
        """
        assert self.process.stdout is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            try:
                line = await asyncio.wait_for(self.process.stdout.readline(), max(0.0, deadline - loop.time()))
            except TimeoutError:
                return "hang"
            except ValueError:  # a line over LINE_LIMIT
                report.skip_line(None)
                continue
            if not line:
                return "crash"
            message = stdio.parse_line(line)
            if message is not None and message.get("id") == request_id:
                return message
            report.skip_line(line)

    async def stop(self, grace_s: float = 1.0) -> None:
        """Close its input; SIGTERM, then SIGKILL, its process group; let go of its pipes.

        The group is signalled even once the process itself has exited: a child it left behind
        is the entrant's too. Nothing waits on a pipe past the grace periods, since a process
        that left the group may hold it open for ever.
        """
        if self.process.stdin is not None and not self.process.stdin.is_closing():
            self.process.stdin.close()
        await self.exited(grace_s)
        for signum in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self.process.pid, signum)
            except OSError:  # nobody left in the group
                break
            if await self.exited(grace_s) and await self._stderr_read(grace_s):
                break
        await self._stderr_read(grace_s)
        if self.confined is not None:  # its sandbox's every process, gone with it
            await self.confined.close(self.process.returncode)
        self.transport.close()  # what is still open (a stranger holds it) is closed on our side
        await self._stderr_read(grace_s)

    async def exited(self, timeout_s: float = math.inf) -> bool:
        """Whether the process exited within ``timeout_s``, its pipes held by others or not.

        (``Process.wait()`` also waits for the pipes to close, which a child may never let happen.)
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while self.process.returncode is None and loop.time() < deadline:
            await asyncio.sleep(_EXIT_POLL_S)
        return self.process.returncode is not None

    async def _stderr_read(self, timeout_s: float) -> bool:
        """Whether its standard error reached its end (every writer gone) within ``timeout_s``."""
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(self._stderr), timeout_s)
        return self._stderr.done()


def _time_left_s(view: table_pb2.TableView) -> float | None:
    if not view.HasField("turn_deadline"):
        return None
    return max(0.0, view.turn_deadline.ToMilliseconds() / 1000 - time.time())


def _my_turn(view: table_pb2.TableView) -> bool:
    return (
        view.phase in (table_pb2.PHASE_AUCTION, table_pb2.PHASE_PLAY)
        and view.HasField("turn_seat")
        and view.HasField("your_seat")
        and view.turn_seat == view.your_seat
    )


class EntrantPlayers:
    """The players of one entrant for a runner: its bots, or a pool of its processes."""

    def __init__(
        self,
        spec: EntrantSpec,
        *,
        cwd: Path,
        stderr_cap: int,
        game_timeout_s: float,
        environment: Mapping[str, str] | None = None,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.spec = spec
        self.cwd = spec.folder or cwd
        #: Confines every process of the entrant, each for one game; None: plain children.
        self.sandbox = sandbox
        #: Given to every process of the entrant (how to reach the referee: ``DIZHU_TLS``, ...).
        self.environment = dict(environment or {})
        self.cap = stderr_cap
        self.game_timeout_s = game_timeout_s
        self._idle: list[EntrantProcess] = []
        self._all: set[EntrantProcess] = set()

    async def play(self, seat: Seat) -> SeatReport:
        """Play ``seat`` until its table closes; never raises (but for cancellation)."""
        report = SeatReport()
        try:
            if self.spec.kind == "bot":
                await self._play_bot(seat, report)
            elif self.spec.kind == "stdio":
                await self._play_stdio(seat, report)
            elif self.spec.per_game:
                await self._play_executable(seat, report)
            else:
                await self._play_persistent(seat, report)
        except CannotStart as error:
            report.fault("crashes", str(error))
        except DizhuError as error:
            report.fault("crashes", f"the seat's connection to the referee failed: {error}")
        report.note_skipped_lines()
        return report

    async def aclose(self) -> None:
        """Stop every process still running."""
        await asyncio.gather(*(process.stop() for process in self._all))
        self._all.clear()
        self._idle.clear()

    # -- bundled and module:Class bots ----------------------------------------------------

    async def _play_bot(self, seat: Seat, report: SeatReport) -> None:
        bot_seed = derive_seed(seat.tournament_seed, f"bot:{self.spec.name}", seat.game_index)
        try:
            runner = BotRunner(_bot(self.spec, bot_seed), seat.client)
            await runner.run()
        except (DizhuError, asyncio.CancelledError):
            raise
        except Exception as error:  # the bot's own code failed: a crash of this entrant
            _log.warning("bot %s crashed in %s: %r", self.spec.name, seat.game, error)
            report.fault("crashes", f"the bot raised {type(error).__name__}: {error}")
            return
        if runner.refused:
            report.faults["illegal"] += runner.refused
            report.note(f"illegal: the referee refused {runner.refused} of the bot's moves")

    # -- processes --------------------------------------------------------------------------

    def _env(self, seat: Seat) -> dict[str, str]:
        return {
            "DIZHU_TARGET": seat.target if self.sandbox is None else f"unix:{REFEREE_SOCKET}",
            "DIZHU_TABLE_ID": seat.client.table_id or "",
            "DIZHU_SEAT_TOKEN": seat.token,
            "DIZHU_SEAT": str(seat.seat),
            "DIZHU_GAME": seat.game,
            "DIZHU_VARIANT": seat.variant,
            "DIZHU_ENTRANT": self.spec.name,
        }

    async def _acquire(self, argv: Sequence[str], seat: Seat, *, stdout: bool) -> EntrantProcess:
        while self._idle:
            process = self._idle.pop()
            if process.alive:
                process.new_log(self.cap)
                return process
            self._all.discard(process)
        environment = {**self.environment, "DIZHU_ENTRANT": self.spec.name}
        process = await self._start(argv, environment, seat if self.spec.command else None, stdout=stdout)
        self._all.add(process)
        return process

    async def _start(
        self, argv: Sequence[str], env: dict[str, str], referee: Seat | None, *, stdout: bool
    ) -> EntrantProcess:
        """A process of the entrant, confined when there is a sandbox (``referee``: the seat whose
        referee a gRPC entrant reaches; None for a stdio bot, which reaches nothing)."""
        if self.sandbox is None:
            return await EntrantProcess.start(argv, self.cwd, env, self.cap, stdout=stdout)
        target = None if referee is None else referee.target
        command, confined_env, confined = self.sandbox.confine(argv, folder=self.cwd, game=env, target=target)
        return await EntrantProcess.start(command, self.cwd, confined_env, self.cap, stdout=stdout, confined=confined)

    async def _release(self, process: EntrantProcess, report: SeatReport, *, healthy: bool) -> None:
        await asyncio.sleep(0)  # let the stderr reader take what the process wrote last
        if healthy and process.alive and self.sandbox is None:
            report.prepend_stderr(process.log.text())
            self._idle.append(process)
            return
        await process.stop()
        self._all.discard(process)
        _note_limit(process, report)
        report.prepend_stderr(process.log.text())

    async def _play_executable(self, seat: Seat, report: SeatReport) -> None:
        """A gRPC executable started for this game, with the seat in its arguments and environment."""
        env = self._env(seat)
        argv = [_substitute(arg, env) for arg in self.spec.command]
        process = await self._start(argv, {**self.environment, **env}, seat, stdout=False)
        self._all.add(process)
        try:
            await self._until_closed_or_exit(process, seat, report)
            await process.exited(EXIT_GRACE_S)
        finally:
            await asyncio.shield(process.stop())
            self._all.discard(process)
        _note_limit(process, report)
        report.prepend_stderr(process.log.text())

    async def _play_persistent(self, seat: Seat, report: SeatReport) -> None:
        """A gRPC executable kept for many games: each game is one JSON line on its standard input."""
        process = await self._acquire(self.spec.command, seat, stdout=False)
        assignment = {
            "protocol": "dizhu.exec/v1",
            "type": "game",
            **{k.lower()[6:]: v for k, v in self._env(seat).items()},
        }
        if not await process.send(assignment):
            report.fault("crashes", await _ended(process, "before it was given the game"))
            await self._release(process, report, healthy=False)
            return
        try:
            await self._until_closed_or_exit(process, seat, report)
        except asyncio.CancelledError:
            await asyncio.shield(self._release(process, report, healthy=False))
            raise
        await self._release(process, report, healthy=process.alive)

    async def _until_closed_or_exit(self, process: EntrantProcess, seat: Seat, report: SeatReport) -> None:
        """Wait for the table to close; a process that ends first crashed (unless the table was closing)."""
        closed = asyncio.ensure_future(seat.closed.wait())
        exited = asyncio.ensure_future(process.exited())
        try:
            await asyncio.wait({closed, exited}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            closed.cancel()
        if exited.done() and not seat.closed.is_set():
            view = await seat.client.get()
            if view.phase != _CLOSED:
                report.fault("crashes", await _ended(process, "before its table closed"))
        exited.cancel()

    # -- stdio bots ---------------------------------------------------------------------------

    async def _play_stdio(self, seat: Seat, report: SeatReport) -> None:
        process = await self._acquire(self.spec.stdio, seat, stdout=True)
        healthy = False  # unless the game ends normally: a process interrupted mid-request is not reused
        try:
            healthy = await self._stdio_seat(process, seat, report)
        finally:
            await asyncio.shield(self._release(process, report, healthy=healthy))

    async def _stdio_seat(self, process: EntrantProcess, seat: Seat, report: SeatReport) -> bool:
        """Relay decisions until the table closes; False once the process crashed or hung."""
        client = seat.client
        views = StreamingViews(client)
        try:
            view = await client.get()
            while view.phase != _CLOSED:
                if _my_turn(view):
                    outcome = await self._stdio_decision(process, seat, view, report)
                    if outcome is _GAVE_UP:  # it crashed or hung (counted and noted)
                        return False
                    if isinstance(outcome, table_pb2.TableView):
                        view = outcome
                        continue
                try:
                    view = await views.next_view(view.version)
                except RetryableError:
                    await asyncio.sleep(0.2)
                    view = await client.get()
        finally:
            await views.aclose()
        return True

    async def _stdio_decision(
        self, process: EntrantProcess, seat: Seat, view: table_pb2.TableView, report: SeatReport
    ) -> table_pb2.TableView | object | None:
        """Ask the process for one decision and send it: the view after it, :data:`_GAVE_UP`, or None (wait)."""
        client = seat.client
        legal = None
        if view.phase == table_pb2.PHASE_PLAY:
            legal = await client.legal_moves(list(view.your_hand), to_beat(view), variant=view.settings.variant)
        left = _time_left_s(view)
        request_id = process.next_id()
        message = stdio.request(request_id, seat.game, view, None if left is None else int(left * 1000), legal)
        if not await process.send(message):
            report.fault("crashes", await _ended(process, f"before request {request_id} (it no longer reads)"))
            return _GAVE_UP
        wait_s = self.game_timeout_s if left is None else left + REPLY_MARGIN_S
        reply = await process.read_reply(request_id, wait_s, report)
        if reply == "hang":
            report.fault(
                "hangs",
                f"no reply to request {request_id} within {wait_s:.1f} s (its deadline plus {REPLY_MARGIN_S:g} s): "
                "the process is stopped",
            )
            return _GAVE_UP
        if isinstance(reply, str):
            report.fault("crashes", await _ended(process, f"before its reply to request {request_id}"))
            return _GAVE_UP
        judged = stdio.judge_reply(reply, message["type"], view)
        if judged.fault is not None:
            report.fault(judged.fault, f"the reply to request {request_id}: {judged.detail}")
            return None  # the clock decides
        try:
            if legal is None:
                return await client.bid(judged.bid, expected_version=view.version)
            return (await client.play(list(judged.cards), expected_version=view.version)).table
        except (MoveRefused, InvalidArgument) as error:  # the referee judged the move: illegal
            report.fault("illegal", f"the referee refused the move of request {request_id}: {error.reason}")
            return None
        except (OutOfTurn, TableClosed):
            return await client.get()


#: A stdio process given up on (it crashed or hung): the seat is the clock's for the rest of the game.
_GAVE_UP: Final = object()


def _note_limit(process: EntrantProcess, report: SeatReport) -> None:
    """Count as a crash, once, a limit of its sandbox that ended the process unnoticed so far
    (met after its table closed, or by a child while the seat waited for the clock)."""
    if process.confined is None or process.limit_noted:
        return
    verdict = process.confined.explain(process.process.returncode)
    if verdict is not None:
        process.limit_noted = True
        report.fault("crashes", f"killed: {verdict}")


async def _ended(process: EntrantProcess, when: str) -> str:
    """How a process that stopped talking ended: the limit that killed it, its exit status, or its
    output closed while it runs."""
    if await process.exited(REPLY_MARGIN_S):
        code = process.process.returncode
        assert code is not None
        verdict = None if process.confined is None else process.confined.explain(code)
        if verdict is not None:
            process.limit_noted = True
            return f"killed: {verdict}, {when}"
        how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
    else:
        how = "closed its standard output"
    return f"the process {how} {when}"


def _substitute(arg: str, env: dict[str, str]) -> str:
    """``{target}``, ``{table_id}``, ``{seat_token}``, ``{seat}``, ``{game}``, ``{variant}``, ``{entrant}``."""
    for key, value in env.items():
        arg = arg.replace("{" + key.removeprefix("DIZHU_").lower() + "}", value)
    return arg
