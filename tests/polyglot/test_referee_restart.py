"""Every client of the repository rides out a restart of the referee under its table.

A rolling restart as an operator does it: the ``dizhu serve`` process under two 3p tables,
seating the six clients (the Go, Java, Rust and C++ example bots, the Python SDK's bot and the
Node client's bot), gets SIGTERM mid-round, and a new one starts a few seconds later on the same
port over the same Redis (the same data). Each client sends its failed calls again and reopens
its WatchTable stream until the new referee answers, then plays its table to the end (exit 0).
The clients' retry horizon is longer (a minute and more, see their READMEs); the gap here is
short so that the test stays quick.
"""

from __future__ import annotations

import time
import uuid

from dizhu.testing import free_port, serve_process
from dizhu.v1 import table_pb2
from tests.support.polyglot_tables import (
    API_KEY,
    closed_view,
    create_table,
    finish,
    split_into_tables,
    start_seats,
    wait_until_playing,
)

#: Seconds between the old referee's exit and the new one's start.
RESTART_GAP_S = 3
ROUNDS = 3


def test_every_client_plays_its_table_to_the_end_through_a_referee_restart(
    redis_url: str, every_client: dict[str, list[str]]
) -> None:
    port = free_port()
    flags = ["--key-prefix", f"restart-{uuid.uuid4().hex[:8]}", "--api-key", API_KEY, "--grace", "1"]
    flags += ["--log-level", "warning"]
    tables = split_into_tables(every_client, seats=3)
    with serve_process(redis_url, args=flags, port=port) as first:
        table_ids = [create_table(every_client["go"], first.target, "3p", rounds=ROUNDS) for _ in tables]
        processes = {}
        for table_id, players in zip(table_ids, tables, strict=True):
            processes.update(start_seats(players, first.target, table_id))
        wait_until_playing(first.target, table_ids)
        first.process.terminate()
        first.process.wait(timeout=60)
        time.sleep(RESTART_GAP_S)
        with serve_process(redis_url, args=flags, port=port) as second:
            finished = finish(processes)
            views = [closed_view(second.target, table_id) for table_id in table_ids]
    assert sorted(finished) == sorted(every_client)
    for view in views:
        assert view.phase == table_pb2.PHASE_CLOSED
        assert view.close_reason == table_pb2.CLOSE_REASON_ROUND_LIMIT
        assert view.round == ROUNDS
        assert sum(seat.balance for seat in view.seats) == 0
