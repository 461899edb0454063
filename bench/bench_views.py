"""View benchmark: what a ``TableView`` costs as a round goes on and its ``history`` grows.

Every response of a move carries the caller's view, and every view of a running round
carries the round's whole public history. The history is built from encoded entries made
once per decision and a round digest kept from one view of a table to the next
(``dizhu.service.convert``); the baseline, in the same run, builds the same entries as
messages afresh, as a straightforward conversion would.

Measured as the referee meets views: ``--rounds`` random rounds per variant (each a new
deal), and the view after every decision of a round, once each, in order, so that each
view's digest takes in the one decision the last view did not have. Where the digest's
cache helps most, a view asked again at once (nothing new to take in), is measured apart
("again": each group's last table viewed again as many times). Figures are CPU µs per call
(this process's clock, so that waiting for a core on a shared machine counts for nobody),
means per group of ``--every`` decisions, each group timed as a whole.

Run: ``python bench/bench_views.py [--rounds 200] [--every 20]``.
"""

from __future__ import annotations

import argparse
import collections
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

#: Every round's table carries this id: a round's first view starts its digest afresh, as a new table's does.
_TABLE_ID = "bench"


def _round_tables(variant: Variant, seed: int) -> list[TableState]:
    """The table after 0, 1, 2, ... decisions of one random round (its deal from ``seed``)."""
    names = [f"p{seat}" for seat in range(variant.players)]
    settings = TableSettings(variant, round_limit=1)
    rng = random.Random(seed)
    table = commands.create_table(_TABLE_ID, settings, [rng.randbytes(32)], names, 0, lambda: "").outcome.table
    found = []
    while table.deal_running and table.round is not None:
        found.append(table)
        table = commands._act(table, random_action(table.round, rng), 0).table
    return found


def _fresh_history(table: TableState) -> None:
    """The baseline: the same history entries, built as messages afresh."""
    view = table_pb2.TableView()
    for record in (*table.earlier_deals, DealRecord(table.deal_number, table.round, table.timings)):
        for action, timing in zip(record.state.history, record.timings, strict=True):
            view.MergeFromString(_uncached(record.deal_number, action, timing.timed_out))


_uncached = views._history_entry.__wrapped__
_SEAT_0 = Principal(Role.SEAT, 0)


def _chunks(tables: list[TableState], every: int) -> list[list[TableState]]:
    return [tables[start : start + every] for start in range(0, len(tables), every)]


def _in_order(chunks: list[list[TableState]], work: Callable[[TableState], object]) -> list[float]:
    """CPU µs per call of ``work`` on each chunk's tables, once each, in order, the round's digest
    starting afresh (a chunk timed as a whole: one clock reading per call would weigh as much)."""
    views._DIGESTS.forget(_TABLE_ID)
    spent = []
    for chunk in chunks:
        started = time.process_time()
        for table in chunk:
            work(table)
        spent.append((time.process_time() - started) * 1e6 / len(chunk))
    return spent


def _views(chunks: list[list[TableState]]) -> tuple[list[float], list[float]]:
    """CPU µs per view of each chunk's tables in order, and per view of its last table asked again."""
    views._DIGESTS.forget(_TABLE_ID)
    first, again = [], []
    for chunk in chunks:
        started = time.process_time()
        for table in chunk:
            convert.table_view(table, _SEAT_0)
        first.append((time.process_time() - started) * 1e6 / len(chunk))
        started = time.process_time()
        for _ in chunk:
            convert.table_view(chunk[-1], _SEAT_0)
        again.append((time.process_time() - started) * 1e6 / len(chunk))
    return first, again


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200, help="random rounds per variant (default: %(default)s)")
    parser.add_argument("--every", type=int, default=20, help="decisions per group (default: %(default)s)")
    args = parser.parse_args()
    print(
        "| variant | decisions so far | cards played | view, µs | again, µs | history: in order, µs | afresh, µs "
        "| afresh / in order |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    seeds = iter(range(1, 1 << 30))
    for variant in (THREE_PLAYER, FOUR_PLAYER):
        sums: dict[int, dict[str, float]] = collections.defaultdict(lambda: collections.defaultdict(float))
        for _ in range(args.rounds):
            chunks = _chunks(_round_tables(variant, next(seeds)), args.every)
            first, again = _views(chunks)
            history = _in_order(chunks, lambda t: views._fill_history(table_pb2.TableView(), t))
            fresh = _in_order(chunks, _fresh_history)
            for index, chunk in enumerate(chunks):
                group = sums[index * args.every]
                group["n"] += len(chunk)
                group["cards"] += sum(len(getattr(a, "cards", ())) for t in chunk if t.round for a in t.round.history)
                for name, spent in (("view", first), ("again", again), ("history", history), ("fresh", fresh)):
                    group[name] += spent[index] * len(chunk)
        for decisions, group in sorted(sums.items()):
            if group["n"] < args.rounds * args.every // 4:  # too few rounds last this long for a mean
                continue
            mean = {name: group[name] / group["n"] for name in ("cards", "view", "again", "history", "fresh")}
            span = f"{decisions}-{decisions + args.every - 1}"
            print(
                f"| {variant.name} | {span} | {mean['cards']:.0f} | {mean['view']:.0f} | {mean['again']:.0f} | "
                f"{mean['history']:.1f} | {mean['fresh']:.1f} | {mean['fresh'] / mean['history']:.1f}x |"
            )


if __name__ == "__main__":
    main()
