"""View benchmark: what a ``TableView`` costs as a round goes on and its ``history`` grows.

Every response of a move carries the caller's view, and every view of a running round
carries the round's whole public history. The history is built from encoded entries made
once per decision (``dizhu.service.convert``); the baseline, in the same run, builds the
same entries as messages afresh, as a straightforward conversion would. Random 3p and 4p
rounds are played with the rules core and a seat's view is timed after 0, 20, 40, ...
decisions.

Run: ``python bench/bench_views.py [--seconds 0.5]``.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from dizhu.referee import commands
from dizhu.referee.auth import Principal, Role
from dizhu.referee.replay import DealRecord
from dizhu.referee.table import TableSettings, TableState
from dizhu.rules import FOUR_PLAYER, THREE_PLAYER, Variant
from dizhu.rules.random_play import random_action
from dizhu.service import convert
from dizhu.service.convert import views
from dizhu.v1 import table_pb2


def _per_call_us(work: Callable[[], object], seconds: float) -> float:
    calls = 0
    started = time.perf_counter()
    while (elapsed := time.perf_counter() - started) < seconds:
        for _ in range(50):
            work()
        calls += 50
    return elapsed / calls * 1e6


def _tables(variant: Variant, every: int, seed: int) -> list[TableState]:
    """The table after 0, ``every``, 2 * ``every``, ... decisions of one random round."""
    names = [f"p{seat}" for seat in range(variant.players)]
    settings = TableSettings(variant, round_limit=1)
    table = commands.create_table("bench", settings, [bytes(32)], names, 0, lambda: "").outcome.table
    rng = random.Random(seed)
    found = []
    decisions = 0
    while table.deal_running and table.round is not None:
        if decisions % every == 0:
            found.append(table)
        table = commands._act(table, random_action(table.round, rng), 0).table
        decisions += 1
    return found


def _fresh_history(table: TableState) -> None:
    """The baseline: the same history entries, built as messages afresh."""
    view = table_pb2.TableView()
    for record in (*table.earlier_deals, DealRecord(table.deal_number, table.round, table.timings)):
        for action, timing in zip(record.state.history, record.timings, strict=True):
            view.MergeFromString(_uncached(record.deal_number, action, timing.timed_out))


_uncached = views._history_entry.__wrapped__
_SEAT_0 = Principal(Role.SEAT, 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.5, help="time per measurement (default: %(default)s)")
    parser.add_argument("--every", type=int, default=20, help="decisions between measurements (default: %(default)s)")
    args = parser.parse_args()
    print(
        "| variant | decisions so far | cards played | view, µs | history: cached, µs | afresh, µs | afresh / cached |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for variant in (THREE_PLAYER, FOUR_PLAYER):
        for table in _tables(variant, args.every, seed=7):
            assert table.round is not None
            view_us = _per_call_us(lambda t=table: convert.table_view(t, _SEAT_0), args.seconds)
            cached_us = _per_call_us(lambda t=table: views._fill_history(table_pb2.TableView(), t), args.seconds)
            fresh_us = _per_call_us(lambda t=table: _fresh_history(t), args.seconds)
            played = sum(len(getattr(action, "cards", ())) for action in table.round.history)
            print(
                f"| {variant.name} | {len(table.round.history)} | {played} | {view_us:.0f} | {cached_us:.1f} | "
                f"{fresh_us:.1f} | {fresh_us / cached_us:.1f}x |"
            )


if __name__ == "__main__":
    main()
