"""Every client of the repository reaches a referee listening on a Unix socket (``unix:/path``).

A tournament's sandbox gives its entrants no network, only a socket file: the referee listens
on one beside its TCP address (``dizhu serve --unix-socket <path>``), and each of the six clients (the Go,
Java, Rust and C++ example bots, the Python SDK's bot and the Node client's bot) is given
``--target unix:<path>``, as gRPC names such an address in every language, and plays its seat
of one of two 3p tables to the end.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from dizhu.v1 import table_pb2
from tests.support.polyglot_tables import API_KEY, closed_view, create_table, finish, split_into_tables, start_seats
from tests.support.referees import served_referee


def test_every_client_plays_through_a_referee_on_a_unix_socket(
    redis_url: str, every_client: dict[str, list[str]]
) -> None:
    # A short folder of its own: a socket's path is limited to about a hundred bytes.
    with tempfile.TemporaryDirectory(prefix="dizhu-") as folder:
        socket = Path(folder) / "referee.sock"
        target = f"unix:{socket}"
        with served_referee(redis_url, "unix", api_key=API_KEY, flags=["--unix-socket", str(socket)]):
            tables = split_into_tables(every_client, seats=3)
            table_ids = [create_table(every_client["go"], target, "3p", rounds=1) for _ in tables]
            seated = {}
            for table_id, players in zip(table_ids, tables, strict=True):
                seated.update(start_seats(players, target, table_id))
            finished = finish(seated)
            views = [closed_view(target, table_id) for table_id in table_ids]
    assert sorted(finished) == sorted(every_client)
    assert all(view.phase == table_pb2.PHASE_CLOSED for view in views)
    assert all(view.close_reason == table_pb2.CLOSE_REASON_ROUND_LIMIT for view in views)
    seated_names = [sorted(seat.player_name for seat in view.seats) for view in views]
    assert seated_names == [sorted(name for name, _ in players) for players in tables]
