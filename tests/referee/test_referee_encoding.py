"""A table's bytes in the store: the same whatever was encoded before, and read back unchanged.

``encode`` keeps the JSON of each table's growing lists (the deal's history, the timings)
from one state to the next: the bytes must not depend on what it kept.
"""

from __future__ import annotations

import random
import tracemalloc
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dizhu.referee import commands, table_codec
from dizhu.referee.replay import Timing
from dizhu.referee.table import (
    ClockSettings,
    CloseReason,
    NextRound,
    RoundResultKind,
    TableSettings,
    TableState,
    TableStatus,
    TimeoutPolicy,
)
from dizhu.referee.table_codec import decode, encode
from dizhu.rules import VARIANTS, Settlement
from dizhu.rules.random_play import random_action


def _states(variant: str, seed: int, table_id: str = "t-1") -> list[TableState]:
    """Every state of a table playing one random round (redeals included) from its creation."""
    chosen = VARIANTS[variant]
    names = [f"p{seat}" for seat in range(chosen.players)]
    created = commands.create_table(
        table_id, TableSettings(chosen, round_limit=1), [seed.to_bytes(32, "big")], names, 1_000, lambda: "token"
    )
    states = [created.outcome.table]
    rng = random.Random(seed)
    while states[-1].deal_running and states[-1].round is not None:
        state = states[-1]
        assert state.round is not None
        states.append(commands._act(state, random_action(state.round, rng), 2_000 + 7 * len(states)).table)
    return states


def _afresh(state: TableState, monkeypatch: pytest.MonkeyPatch) -> bytes:
    """``state`` encoded with nothing kept from before."""
    with monkeypatch.context() as patched:
        patched.setattr(table_codec, "_GROWING", table_codec._GrowingLists())
        return encode(state)


class TestEncoding:
    @settings(max_examples=10, deadline=None)
    @given(seed=st.integers(0, 2**32), variant=st.sampled_from(sorted(VARIANTS)), order=st.randoms())
    def test_the_bytes_do_not_depend_on_what_was_encoded_before(
        self, seed: int, variant: str, order: random.Random
    ) -> None:
        states = _states(variant, seed)
        # Another round of the same table id, whose history diverges from the first's.
        others = _states(variant, seed + 1)
        with pytest.MonkeyPatch.context() as monkeypatch:
            expected = {id(state): _afresh(state, monkeypatch) for state in states + others}
        in_order = [encode(state) for state in states]
        shuffled = states + others
        order.shuffle(shuffled)
        assert in_order == [expected[id(state)] for state in states]
        assert [encode(state) for state in shuffled] == [expected[id(state)] for state in shuffled]

    @settings(max_examples=10, deadline=None)
    @given(seed=st.integers(0, 2**32), variant=st.sampled_from(sorted(VARIANTS)))
    def test_every_state_reads_back_unchanged(self, seed: int, variant: str) -> None:
        for state in _states(variant, seed):
            assert decode(encode(state)) == state


def _running_states(count: int) -> list[TableState]:
    """A state from the middle of the deal of ``count`` tables (each a random 3p round's, under its own id)."""
    states = []
    for index in range(count):
        running = [state for state in _states("3p", index, f"t-{index}") if state.status is TableStatus.IN_ROUND]
        states.append(running[len(running) * 2 // 3])
    return states


class TestWhatIsKept:
    """Kept from one state to the next: the running deals' lists, at most a bound of tables, at their
    exact bytes (tests/grpc/test_grpc_memory.py: and nothing of a deal once it is over)."""

    def test_at_most_the_bound_of_tables_the_latest_written(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(table_codec, "_GROWING", table_codec._GrowingLists(size=3))
        states = _running_states(5)
        for state in states:
            encode(state)
        assert [state.table_id in table_codec._GROWING for state in states] == [False, False, True, True, True]

    def test_a_deal_no_longer_running_is_forgotten(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(table_codec, "_GROWING", table_codec._GrowingLists())
        states = _states("3p", 5)
        encode(states[-2])
        assert states[-2].status is TableStatus.IN_ROUND
        assert "t-1" in table_codec._GROWING
        encode(states[-1])
        assert states[-1].status is not TableStatus.IN_ROUND
        assert "t-1" not in table_codec._GROWING

    def test_a_running_deal_costs_its_json_and_no_more(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """The bytes ``orjson.dumps`` returns occupy at least 4 KiB each however short: kept one per
        entry, they cost ~250 KiB per table. What is kept is less than the whole table's JSON."""
        states = _running_states(40)
        json_bytes = sum(len(encode(state)) for state in states)
        monkeypatch.setattr(table_codec, "_GROWING", table_codec._GrowingLists())
        tracemalloc.start()
        try:
            before = tracemalloc.take_snapshot()
            for state in states:
                encode(state)
            after = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
        kept = sum(
            stat.size_diff
            for stat in after.compare_to(before, "filename")
            if stat.traceback[0].filename == table_codec.__file__
        )
        assert len(table_codec._GROWING) == len(states)
        assert kept < json_bytes, f"{kept // len(states):,} B kept a table for {json_bytes // len(states):,} B of JSON"


#: A table as this format stores it, written by the encoder of format 1 (every stored entry
#: holds a value no other entry holds, so a field read from another's place shows).
_STORED = (Path(__file__).parent / "testdata" / "table_format_1.json").read_bytes().strip()


class TestStoredFormat:
    """Tables already in the store keep loading: format 1, field by field, and back to the same bytes."""

    def test_a_stored_table_reads_field_by_field(self) -> None:
        state = decode(_STORED)
        assert (state.table_id, state.status, state.version) == ("golden-1", TableStatus.IN_ROUND, 16)
        assert (state.created_ms, state.updated_ms, state.deal_number) == (1_700_000_000_000, 1_700_000_009_000, 2)
        settings_ = state.settings
        assert (settings_.variant.name, settings_.house_rules.spring) == ("3p", False)
        assert settings_.clock == ClockSettings(15_000, 25_000, 60_000, TimeoutPolicy.FORFEIT)
        assert (settings_.round_limit, settings_.redeal_cap) == (7, 4)
        assert (settings_.next_round, settings_.first_dealer) == (NextRound.WHEN_ALL_SETTLED, 2)
        assert state.seeds == (bytes(range(32)), bytes(range(1, 33)))
        assert [(seat.name, seat.reserved, seat.occupied) for seat in state.seats] == [
            ("north", True, True),
            ("", False, False),
            ("west", False, True),
        ]
        assert state.seats[2].token_hash == bytes(range(32))
        match = state.match
        assert (match.dealer, match.rounds_played, match.redeals, match.balances) == (1, 2, 1, (6, -2, -4))
        assert (match.redeal_cap, match.round_limit) == (4, 7)
        assert state.round is not None
        assert len(state.round.history) == 5
        assert (state.turn.started_ms, state.turn.deadline_ms) == (1_700_000_008_000, 1_700_000_083_000)
        assert (state.turn.banks_ms, state.turn.timeouts) == ((41_000, 52_000, 60_000), (0, 2, 1))
        assert state.timings[-1] == Timing(1_700_000_002_000, 15_000, True)
        assert [(deal.deal_number, deal.timings) for deal in state.earlier_deals] == [
            (1, (Timing(1_699_999_999_000, 500, False),))
        ]
        assert (state.awaiting_settle, state.close_reason) == (frozenset({0, 2}), CloseReason.ABANDONED)
        assert (state.upkeep.active_ms, state.upkeep.attended, state.upkeep.unattended_rounds) == (
            1_700_000_007_000,
            True,
            2,
        )
        assert (state.upkeep.unattended_limit, state.upkeep.owner) == (3, "acme")
        result = state.last_result
        assert result is not None
        assert (result.round, result.kind, result.bid, result.winner) == (2, RoundResultKind.FARMERS_WON, 2, 1)
        assert (result.forfeited_by, result.forfeit_cause) == (0, "timeout")
        assert result.settlement == Settlement(8, (-16, 8, 8), 0, False, 2, True)
        assert (result.reveal.round, result.reveal.deal_number, result.reveal.seed) == (2, 3, bytes(range(2, 34)))

    def test_a_stored_table_is_written_back_to_the_same_bytes(self, monkeypatch: pytest.MonkeyPatch) -> None:
        state = decode(_STORED)
        assert _afresh(state, monkeypatch) == _STORED
        assert encode(state) == encode(state) == _STORED  # the second through the kept lists

    def test_a_table_stored_before_its_care_entry_is_active_since_its_last_change(self) -> None:
        plain = orjson.loads(_STORED)
        del plain["care"]
        state = decode(orjson.dumps(plain))
        assert (state.upkeep.active_ms, state.upkeep.attended, state.upkeep.unattended_rounds) == (
            1_700_000_009_000,
            True,
            0,
        )
        assert (state.upkeep.unattended_limit, state.upkeep.owner) == (0, "")

    def test_another_format_is_refused(self) -> None:
        plain = orjson.loads(_STORED)
        plain["v"] = 2
        with pytest.raises(ValueError, match="unsupported table format 2"):
            decode(orjson.dumps(plain))
