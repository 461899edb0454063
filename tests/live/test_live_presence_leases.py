"""A stream's presence lease is given up for good when it is released, even by a renewal that
swallowed its cancellation.

A renewal waits on Redis; redis-py's reads (through Python 3.11's ``asyncio.wait_for``) can drop a
cancellation that lands as the reply arrives. The renewal task then lived on, renewing the lease
every third of its span, and the release that waited for it never ended: a referee stopping with
an open stream waited until it was killed (30 s under ``dizhu.testing.serve_process``). The store
is the tests' real Redis; only the renewal's wait is made to swallow its cancellation, every time,
where redis-py does it now and then.
"""

from __future__ import annotations

import asyncio
from typing import Any

import redis.asyncio

from dizhu.referee.commands import create_table
from dizhu.referee.table import TableSettings, TableState
from dizhu.rules import VARIANTS
from dizhu.service.presence import Presence, StreamLease
from dizhu.store import TableStore

SEED = bytes(range(32))
#: Renewals every 10 ms: a renewal after the release would show within the test's wait.
LEASE_S = 0.03


async def _no_table(table_id: str) -> TableState | None:
    return None  # asked only to redo an announcement another process raced: none here


class _SwallowingRenewals(Presence):
    """Presence whose renewals wait on a Redis reply that swallows a cancellation landing meanwhile."""

    def __init__(self, store: TableStore) -> None:
        super().__init__(store.presence(), _no_table, lease_s=LEASE_S, remembered=16)
        self.renewals = 0
        self.renewing = asyncio.Event()
        self.swallowing = True

    async def update(self, *args: Any, extending: bool = False, **kwargs: Any) -> int | None:
        if extending:
            self.renewals += 1
            self.renewing.set()
            try:
                await asyncio.sleep(0.05)  # the reply on its way
            except asyncio.CancelledError:
                if not self.swallowing:
                    raise
                # dropped, as redis-py's read can drop it
        return await super().update(*args, extending=extending, **kwargs)


async def test_a_released_lease_is_renewed_no_more_and_its_release_ends(redis_client: redis.asyncio.Redis) -> None:
    store = TableStore(redis_client)
    await store.load_scripts()
    created = create_table("t-lease", TableSettings(VARIANTS["3p"]), [SEED], ["ann"], 1_000, lambda: "token")
    presence = _SwallowingRenewals(store)
    lease = StreamLease(presence, "t-lease", 0)
    await lease.take(created.outcome.table)
    await asyncio.wait_for(presence.renewing.wait(), 5)  # a renewal is waiting on Redis
    try:
        await asyncio.wait_for(lease.release(), 5)

        renewed = presence.renewals
        await asyncio.sleep(LEASE_S)
        assert presence.renewals == renewed
        assert not presence.leases
    finally:  # a renewal that lived on would keep the event loop from closing
        presence.swallowing = False
        for task in asyncio.all_tasks():
            if task.get_name().startswith("presence-"):
                task.cancel()
