"""A table's bytes in the store: the same whatever was encoded before, and read back unchanged.

``encode`` keeps the JSON of each table's growing lists (the deal's history, the timings)
from one state to the next: the bytes must not depend on what it kept.
"""

from __future__ import annotations

import random
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dizhu.referee import commands, table
from dizhu.referee.table import TableSettings, TableState, TableStatus, decode, encode
from dizhu.rules import VARIANTS
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
        patched.setattr(table, "_GROWING", table._GrowingLists())
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
        monkeypatch.setattr(table, "_GROWING", table._GrowingLists(size=3))
        states = _running_states(5)
        for state in states:
            encode(state)
        assert [state.table_id in table._GROWING for state in states] == [False, False, True, True, True]

    def test_a_deal_no_longer_running_is_forgotten(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(table, "_GROWING", table._GrowingLists())
        states = _states("3p", 5)
        encode(states[-2])
        assert states[-2].status is TableStatus.IN_ROUND
        assert "t-1" in table._GROWING
        encode(states[-1])
        assert states[-1].status is not TableStatus.IN_ROUND
        assert "t-1" not in table._GROWING

    def test_a_running_deal_costs_its_json_and_no_more(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """The bytes ``orjson.dumps`` returns occupy at least 4 KiB each however short: kept one per
        entry, they cost ~250 KiB per table. What is kept is less than the whole table's JSON."""
        states = _running_states(40)
        json_bytes = sum(len(encode(state)) for state in states)
        monkeypatch.setattr(table, "_GROWING", table._GrowingLists())
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
            if stat.traceback[0].filename == table.__file__
        )
        assert len(table._GROWING) == len(states)
        assert kept < json_bytes, f"{kept // len(states):,} B kept a table for {json_bytes // len(states):,} B of JSON"
