"""The service's core scenarios, run again over a Redis Cluster (3 primaries, 1 replica each).

The test classes are the gRPC and live-table suites' own, imported unchanged: here their
fixtures (``tests/cluster/conftest.py``) give every referee a cluster client, so each table's
keys live on the node of its slot and the clock's and presence's index shards on all three.
Covered: complete games (3 and 4 players, several rounds), retried and racing requests on two
referees, event streams (first message, every event, resume, refusals, leaving), the turn
clock (auto-play, forfeit, time bank, two referees' clocks acting once), replays, and
presence (streams and calls).
"""

from __future__ import annotations

# Collected here too: each class runs over the cluster with this directory's fixtures.
from tests.grpc.test_grpc_concurrency import TestConflictingRequests
from tests.grpc.test_grpc_games import TestCompleteGames, TestSettleWhenAllSettled
from tests.grpc.test_grpc_idempotency import TestRetriedMoves, TestRetriedTableCalls, table
from tests.live.test_live_clock import TestAutoPlay, TestForfeit, TestTimeBank, TestTwoClocks
from tests.live.test_live_presence import TestCalls, TestStreams
from tests.live.test_live_replays import TestClockActions, TestGetReplay, TestVerifyMany
from tests.live.test_live_streams import TestEvents, TestFirstMessage, TestLeaving, TestRefusals, TestResume

__all__ = [
    "TestAutoPlay",
    "TestCalls",
    "TestClockActions",
    "TestCompleteGames",
    "TestConflictingRequests",
    "TestEvents",
    "TestFirstMessage",
    "TestForfeit",
    "TestGetReplay",
    "TestLeaving",
    "TestRefusals",
    "TestResume",
    "TestRetriedMoves",
    "TestRetriedTableCalls",
    "TestSettleWhenAllSettled",
    "TestStreams",
    "TestTimeBank",
    "TestTwoClocks",
    "TestVerifyMany",
    "table",
]
