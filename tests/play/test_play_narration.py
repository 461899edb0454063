"""``dizhu play``'s loop against a real referee: what is narrated, in which order, and when it asks.

The person is played by a script that answers each question the loop shows; the screen writes
into a terminal kept here, so that the test sees the output exactly as it stood when each
question was asked. The referee is a real one (gRPC, the tests' Redis), its bots bundled ones.
"""

from __future__ import annotations

import asyncio
import io
import re
from collections.abc import AsyncIterator, Callable

import pytest
from rich.console import Console

from dizhu.bots import BotHost
from dizhu.client import TableClient
from dizhu.client.cards import format_cards
from dizhu.demo import Narrator
from dizhu.play import PlayOptions, play
from dizhu.play.screen import Screen, kind_name
from dizhu.testing import local_referee
from dizhu.v1 import table_pb2

SEED = bytes.fromhex("ab" * 32)
#: A hang guard for a whole table (never a timing assertion).
TABLE_S = 120.0
QUESTION = re.compile(r"(Your bid|Your play|Round over)[^\n]*> $")
DECISION = re.compile(r"^ +\S.* \((?:[^()]*, )?seat \d[^)]*\) (bids \d|passes|plays )", re.MULTILINE)


class Terminal(io.StringIO):
    """What the screen wrote, and a signal whenever it ends with a question."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = asyncio.Event()
        self._awaited: dict[str, asyncio.Event] = {}

    def write(self, text: str) -> int:
        written = super().write(text)
        shown = self.getvalue()
        if QUESTION.search(shown[-200:]):
            self.asked.set()
        for awaited, event in self._awaited.items():
            if awaited in shown[-len(awaited) - len(text) :]:
                event.set()
        return written

    def when_shown(self, text: str) -> asyncio.Event:
        """An event set by the very write that shows ``text``."""
        return self._awaited.setdefault(text, asyncio.Event())

    def type(self, line: str) -> None:
        """What a terminal's echo shows of a typed line."""
        super().write(line + "\n")


@pytest.fixture
def terminal() -> Terminal:
    return Terminal()


def _screen(terminal: Terminal) -> Screen:
    return Screen(Console(file=terminal, width=160, color_system=None, highlight=False))


#: What an answer returns to type nothing and wait for the next question.
SILENT = "(silent)"


async def person(terminal: Terminal, answer: Callable[[str], object]) -> AsyncIterator[str]:
    """Waits for each question and types what ``answer`` (given the output so far) says; None: end of input."""
    while True:
        await terminal.asked.wait()
        terminal.asked.clear()
        line = answer(terminal.getvalue())
        if asyncio.iscoroutine(line):
            line = await line
        if line is None:
            return
        if line == SILENT:
            continue
        assert isinstance(line, str)
        terminal.type(line)
        yield line


def simple_player(output: str) -> str:
    """Bid 3 if nobody bid yet (else pass), lead the first legal play, pass when following, go on after a round."""
    last = output.rstrip().rsplit("\n", 1)[-1]
    if last.startswith("Your bid"):
        return "3" if "highest so far 0)" in last else "p"
    if last.startswith("Your play (you lead"):
        return "m1"
    if last.startswith("Your play"):
        return "p"
    return ""


def _deal_section(output: str, view: table_pb2.TableView) -> str:
    header = f"=== Round {view.round} (deal {view.deal_number}"
    assert header in output, f"the deal of the question was not narrated: {header!r}\n{output}"
    return output[output.rindex(header) :]


class TestRoundsAreToldBeforeTheQuestionAfterThem:
    async def test_every_question_comes_after_the_narration_of_what_its_table_shows(
        self, redis_url: str, terminal: Terminal
    ) -> None:
        """Two rounds, every settle waited for: the end of a round is told, then asked about once."""
        checked: list[str] = []
        async with local_referee(redis_url=redis_url, log_level=None) as target, TableClient(target) as spectator:

            async def answer(output: str) -> str | None:
                tables = await spectator.list_tables()
                spectator.table_id = tables.tables[0].table_id
                view = await spectator.get()
                question = output.rstrip().rsplit("\n", 1)[-1]
                if question.startswith("Round over"):
                    settled = view.last_settlement.round
                    assert f"Settlement of round {settled}:" in output, output
                    assert "sha256(seed) == commitment ✓" in output.rsplit("Settlement of round", 1)[1], output
                else:
                    shown = _deal_section(output, view)
                    told = len(DECISION.findall(shown))
                    made = sum(1 for action in view.history if action.deal_number == view.deal_number)
                    assert told == made, f"{made} decisions made, {told} narrated when asked:\n{shown}"
                    if view.phase == table_pb2.PHASE_PLAY:
                        assert "is the landlord at" in shown, shown
                checked.append(question)
                return simple_player(output)

            options = PlayOptions(rounds=2, clock_s=0, seed=SEED, target=target, name="Tester")
            status = await asyncio.wait_for(play(options, _screen(terminal), person(terminal, answer)), TABLE_S)
        output = terminal.getvalue()
        assert status == 0, output
        assert len(checked) > 4
        # The first round waits for the Settle of each seat: its end is asked about exactly once.
        assert output.count("Round over: Enter for the next round") == 1, output
        # The next round's table comes after its deal was narrated, never at the end of the last round.
        assert output.index("=== Round 2 (deal 1") < re.search(r"^Round 2\b", output, re.MULTILINE).start(), output
        assert output.index("Settlement of round 2:") < output.index("Final balances:"), output


class TestJoiningATable:
    async def test_a_joined_table_narrates_the_end_of_its_round_by_name(
        self, redis_url: str, terminal: Terminal
    ) -> None:
        """--target --table: the table is someone else's, with bots seated after the person."""
        async with local_referee(redis_url=redis_url, log_level=None) as target, TableClient(target) as creator:
            created = await creator.create_table(round_limit=1, seeds=[SEED])
            bots = BotHost(target, limit=2)
            try:
                options = PlayOptions(target=target, table_id=created.table_id, name="Tester")
                playing = asyncio.create_task(play(options, _screen(terminal), person(terminal, simple_player)))
                while not any(seat.occupied for seat in (await creator.get()).seats):
                    await asyncio.sleep(0.05)
                await bots.seat(created.table_id, ["heuristic", "heuristic"])
                status = await asyncio.wait_for(playing, TABLE_S)
            finally:
                await bots.close()
        output = terminal.getvalue()
        assert status == 0, output
        told = output[: output.index("Final balances:")]
        assert re.search(r"[ (]seat \d, \w+\) is out of cards: the (landlord|farmers) wins?\.", told), output
        assert "Settlement of round 1: stake" in told, output
        assert "sha256(seed) == commitment ✓" in told, output
        assert "Bob (heuristic bot, seat 1) takes a seat." in told, output
        assert "(seat 1" not in told, "a seat narrated without its name"
        assert ") (seat" not in told, "a name's parenthesis and the seat's side by side"
        assert "redeal" not in told, output


class TestTheClock:
    async def test_a_decision_the_clock_made_is_told_as_such_after_counting_down(
        self, redis_url: str, terminal: Terminal
    ) -> None:
        """Six seconds a decision, nobody answering: the question comes again with less time, then the clock bids."""
        async with local_referee(redis_url=redis_url, log_level=None) as target:

            def answer(output: str) -> str:
                return "q" if "(time ran out)" in output else SILENT

            options = PlayOptions(rounds=1, clock_s=6, seed=SEED, target=target, name="Tester")
            status = await asyncio.wait_for(play(options, _screen(terminal), person(terminal, answer)), TABLE_S)
        output = terminal.getvalue()
        assert status == 0, output
        assert "Tester (seat 0) passes (time ran out)" in output, output
        asked = output[: output.index("passes (time ran out)")]
        left = [int(seconds) for seconds in re.findall(r"Your bid [^\n]*\[(\d+) s left\] > ", asked)]
        assert len(left) >= 2, output
        assert left == sorted(left, reverse=True), left
        assert left[-1] < left[0], left


class TestASnapshotMidAuction:
    async def test_the_bids_before_the_snapshot_are_told_and_count_as_told(self, redis_url: str) -> None:
        """A stream opened after the first bid: the narration has told the table it shows."""
        async with local_referee(redis_url=redis_url, log_level=None) as target, TableClient(target) as creator:
            created = await creator.create_table(variant="4p", player_names=["A", "B", "C", "D"], seeds=[SEED])
            view = await creator.get()
            first = creator.for_seat(created.seat_tokens[view.turn_seat].token)
            await first.bid(0, expected_version=view.version)
            spectator = TableClient(creator.channel, table_id=created.table_id)
            snapshot = (await anext(spectator.watch())).snapshot
        lines: list[str] = []
        narrator = Narrator(snapshot, ["heuristic"] * 4, lines.append)
        assert snapshot.phase == table_pb2.PHASE_AUCTION
        assert len(snapshot.bids) == 1
        assert f"  {narrator.who(view.turn_seat)} passes" in lines
        assert narrator.has_told(snapshot)


class TestThePlayToBeat:
    async def test_a_following_question_names_the_play_to_beat_and_who_made_it(
        self, redis_url: str, terminal: Terminal
    ) -> None:
        asked: list[tuple[str, str]] = []
        async with local_referee(redis_url=redis_url, log_level=None) as target, TableClient(target) as spectator:

            async def answer(output: str) -> str:
                question = output.rstrip().rsplit("\n", 1)[-1]
                if question.startswith("Your play (") and "you lead" not in question:
                    spectator.table_id = (await spectator.list_tables()).tables[0].table_id
                    view = await spectator.get()
                    beat = view.to_beat
                    expected = f"{view.seats[beat.seat].player_name}'s {kind_name(beat.combination)} "
                    asked.append((question, expected + format_cards(beat.cards)))
                return simple_player(output)

            options = PlayOptions(rounds=1, clock_s=0, seed=SEED, target=target, name="Tester")
            status = await asyncio.wait_for(play(options, _screen(terminal), person(terminal, answer)), TABLE_S)
        assert status == 0, terminal.getvalue()
        assert asked, terminal.getvalue()
        for question, play_to_beat in asked:
            assert question.startswith(f"Your play (beat {play_to_beat}, or p to pass; "), question


class TestAQuestionTheClockAnswered:
    async def test_it_is_not_asked_again_and_a_line_typed_for_it_answers_nothing_else(
        self, redis_url: str, terminal: Terminal
    ) -> None:
        """The clock bids for the silent person; "3", typed as the screen tells so, answers nothing asked
        after it (a play of the card 3, say): it is not the person's turn, the table moved on, or it is
        ignored as typed for the question the clock answered -- however soon the next question comes."""
        told = terminal.when_shown("Tester (seat 0) passes (time ran out)")
        async with local_referee(redis_url=redis_url, log_level=None) as target:

            async def lines() -> AsyncIterator[str]:
                await terminal.asked.wait()
                assert terminal.getvalue().rstrip().rsplit("\n", 1)[-1].startswith("Your bid"), terminal.getvalue()
                # Woken by the write that told the timeout, before the narration can go on to what the
                # bots did next: a later question cannot stand on the screen yet.
                await told.wait()
                terminal.asked.clear()
                terminal.type("3")
                yield "3"
                while True:  # then every later question is answered as a simple player would
                    await terminal.asked.wait()
                    terminal.asked.clear()
                    if "Final balances" in terminal.getvalue():
                        return
                    line = simple_player(terminal.getvalue())
                    terminal.type(line)
                    yield line

            # The person is asked first (the seed's face-up card is theirs); a clock of 2 s runs out.
            options = PlayOptions(rounds=1, clock_s=2, seed=SEED, target=target, name="Tester", bots=["random"] * 2)
            status = await asyncio.wait_for(play(options, _screen(terminal), lines()), TABLE_S)
        output = terminal.getvalue()
        assert status == 0, output
        timed_out = output.index("Tester (seat 0) passes (time ran out)")
        typed = output.index("3\n", timed_out)
        # The next question is a new one, shown with the table, not the one the clock answered asked again;
        # "3" was typed before that table.
        after = output[timed_out:]
        asked_next = re.search(r"Your (bid|play) ", after)
        shown_next = re.search(r"^Round 1 ", after[: asked_next.start()] if asked_next else "", re.MULTILINE)
        assert asked_next is None or shown_next, after
        assert shown_next is None or typed < timed_out + shown_next.start(), after
        # "3" went to the question it was typed for (too late) or to none; it played no card.
        outcomes = ("The table moved on meanwhile.", "it is not your turn", 'Ignored "3"')
        assert any(outcome in output[typed:] for outcome in outcomes), output[typed:]
        assert "refused" not in output, output
        assert "Tester (seat 0) bids 3" not in output, output
