"""A rolling restart: every ``dizhu serve`` stopped (SIGTERM) and started again, one at a time, while games run.

This is what Kubernetes does on a new release (deploy/k8s/referee.yaml: one pod at a time,
a PodDisruptionBudget, a grace period). Three referees over the Redis Cluster serve tables
that careful clients play through any of them (``resilient_play``), while followers watch
every table and resume, after their last sequence, on another referee whenever a stream
ends. Each referee in turn gets SIGTERM, must exit cleanly, and is started again on its port.

Then: no acknowledged decision is missing from any table's record, no table ended by itself
(they are closed by their creator at the end), every follower saw every event exactly once
and in order, and the clients met nothing but ``UNAVAILABLE`` on the way -- or ``CANCELLED``
for a call that reached a referee as its shutdown began (gRPC's own race; docs/api.md tells
clients to retry both with the same request id).
"""

from __future__ import annotations

import asyncio

from dizhu.v1 import table_pb2
from tests.support.local_cluster import LocalCluster
from tests.support.resilient_play import (
    GIVE_UP_S,
    RETRIED_ACROSS_RESTARTS,
    Follower,
    Player,
    Record,
    Referees,
    close_table,
    consecutive,
    create_tables,
    lost_moves,
    progress,
    read_log,
    summary,
)

REFEREES = 3
TABLES = 6


class TestRollingRestart:
    async def test_restarting_every_referee_in_turn_loses_no_move_and_ends_no_table(
        self, cluster: LocalCluster, redis_client: object
    ) -> None:
        referees = Referees(cluster.url, ["--redis-cluster", "--log-level", "warning", "--grace", "2"], REFEREES)
        try:
            await referees.start_all()
            tables = await create_tables(referees.endpoints[0], TABLES, round_limit=0)  # they close when told
            record = Record()
            players = [
                Player(referees.endpoints, table, record, seed=n, retried=RETRIED_ACROSS_RESTARTS)
                for n, table in enumerate(tables)
            ]
            followers = [
                Follower(referees.endpoints, table.table_id, record, seed=100 + n, retried=RETRIED_ACROSS_RESTARTS)
                for n, table in enumerate(tables)
            ]
            games = [asyncio.create_task(player.run(pause_s=0.02)) for player in players]
            watching = [asyncio.create_task(follower.run()) for follower in followers]
            await progress(players, 3, record)

            for index in range(REFEREES):
                assert await referees.stop(index) == 0, f"referee {index} did not stop cleanly"
                await progress(players, 3, record)  # the games go on with one referee fewer
                await referees.start(index)
                await progress(players, 3, record)

            for player in players:
                player.stopping.set()
            async with asyncio.timeout(GIVE_UP_S):
                await asyncio.gather(*games)
                for table in tables:
                    await close_table(referees.endpoints[0], table)
                await asyncio.gather(*watching)

            assert set(record.failures) <= RETRIED_ACROSS_RESTARTS, summary(record)
            assert not record.unexpected, summary(record)
            assert record.behind == 0, summary(record)
            assert sum(follower.resumed for follower in followers) > 0, "no stream was ever cut: nothing was tested"
            for table, follower in zip(tables, followers, strict=True):
                log = await read_log(referees.endpoints[0], table.table_id)
                assert log[-1].table_closed.reason == table_pb2.CLOSE_REASON_CLOSED_BY_CREATOR
                assert lost_moves(record.acknowledged[table.table_id], log) == []
                assert consecutive(follower.events)
                assert follower.events == log
        finally:
            await referees.aclose()
