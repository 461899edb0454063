"""Seat presence in Redis: leases with an expiry, and the presence each table last announced.

A seat is connected while it holds an unexpired lease: one per open ``WatchTable`` stream
(renewed by the stream's process; it lapses on its own if that process dies) and one for
its latest call (``<seat>:act``). The leases of a table are one sorted set, scored by
expiry, beside the table's other keys (same hash tag)::

    <prefix>:{t:<table_id>}:presence   zset: member "<seat>:<lease id>" or "<seat>:act", score = expiry (ms)
    <prefix>:{t:<table_id>}:state      hash field "presence": the seats last announced connected (bitmask)
    <prefix>:{presence:<n>}:due        zset: member = table id, score = when one of its leases may lapse (ms)

Every change goes through one script (:data:`PRESENCE`) that applies the lease changes,
drops expired leases, and -- when the connected seats differ from the announced ones --
appends one event per seat that came or went to the table's event stream and records the
new mask, all at once, so each change is announced exactly once whichever process sees
it first. The store knows bytes and integers only: the caller builds the events.

The due index tells every process's sweeper which tables may have a lease lapsing. It is
sharded like the clock's (:func:`~dizhu.store.keys.index_shard`), so it lives apart from
the table (on Redis Cluster, on another node): the script cannot write it, and the store
keeps it right around the script. Its invariant: a table's entry is never later than the
earliest expiry of the table's leases (an early entry only makes a sweeper look once more).

- A change that adds a lease lowers the entry to the new expiry before the script (so a
  process dying after the script leaves no lease unindexed) and to the earliest expiry
  after it (``ZADD LT``: entries only ever move earlier this way).
- Extending or removing leases only makes the earliest expiry later: nothing to write.
- A sweeper that looked at a due entry sets it to the earliest expiry the script found, or
  removes it when no lease is left -- only if nobody moved it since the sweeper read it
  (:data:`PRESENCE_DUE`, a compare-and-set): a lease added meanwhile lowers it again.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from dizhu.store.connection import StoreClient
from dizhu.store.keys import INDEX_SHARDS, index_keys, index_shard, table_keys
from dizhu.store.scripts import STAMP_WRITE

__all__ = ["PRESENCE", "PRESENCE_DUE", "UNKNOWN", "PresenceOutcome", "PresenceStore", "PresenceUpdate"]

#: A version or seat mask the caller does not know: the script then announces nothing and
#: answers CONFLICT when there is something to announce (the caller reads the table and retries).
UNKNOWN: Final = -1

PRESENCE = (
    """
-- Change a table's presence leases, then announce the seats that came or went.
-- KEYS[1]  state hash     <prefix>:{t:<id>}:state      fields version, seq, presence (announced mask),
--                                                       time, write (the last event's stamp, STAMP_WRITE)
-- KEYS[2]  leases zset    <prefix>:{t:<id>}:presence   member "<seat>:<lease>", score = expiry (ms)
-- KEYS[3]  event stream   <prefix>:{t:<id>}:events
-- ARGV[1]  now (ms): also the announcements' time (never earlier than the previous event's)
-- ARGV[2]  the table version the events carry, "-1" if unknown
-- ARGV[3]  the occupied seats (bitmask), "-1" if unknown
-- ARGV[4]  approximate maximum length of the stream (MAXLEN ~)
-- ARGV[5]  "1" for a closed table: forget its presence, announce nothing (TableClosed is the last event)
-- ARGV[6]  n, the number of lease changes; then n x (member, expiry ms): expiry "0" removes the
--          member, member "<seat>:*" removes every lease of the seat; otherwise ZADD GT (a lease
--          is only ever extended)
-- ARGV[7+2n ...]  per seat s: the event "s went away", then the event "s is here"
-- return   {"GONE"} if the table does not exist (its presence is forgotten);
--          {"CONFLICT", version, earliest} if a change is due but ARGV[2..3] are unknown or stale
--          (the lease changes are applied, nothing is announced);
--          {"OK", mask, earliest} with the seats connected now, announced;
--          earliest: the earliest expiry of the leases left (ms), "0" if none is.
"""
    + STAMP_WRITE
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[2])
  return {'GONE'}
end
if ARGV[5] == '1' then
  redis.call('DEL', KEYS[2])
  return {'OK', redis.call('HGET', KEYS[1], 'presence') or '0', '0'}
end
local now = tonumber(ARGV[1])
local changes = tonumber(ARGV[6])
for i = 0, changes - 1 do
  local member, expiry = ARGV[7 + 2 * i], ARGV[8 + 2 * i]
  if string.sub(member, -2) == ':*' then
    local prefix = string.sub(member, 1, -2)
    for _, held in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
      if string.sub(held, 1, #prefix) == prefix then redis.call('ZREM', KEYS[2], held) end
    end
  elseif expiry == '0' then
    redis.call('ZREM', KEYS[2], member)
  else
    redis.call('ZADD', KEYS[2], 'GT', expiry, member)
  end
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local occupied = tonumber(ARGV[3])
local mask = 0
for _, held in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  local bit = 2 ^ tonumber(string.match(held, '^(%d+):'))
  if math.floor(mask / bit) % 2 == 0 and (occupied < 0 or math.floor(occupied / bit) % 2 == 1) then
    mask = mask + bit
  end
end
local earliest = '0'
local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if first[2] then
  earliest = first[2]
  local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
  redis.call('PEXPIREAT', KEYS[2], tonumber(last[2]) + 60000)
end
local state = redis.call('HMGET', KEYS[1], 'version', 'seq', 'presence')
local announced = tonumber(state[3] or '0')
if mask == announced then return {'OK', string.format('%d', mask), earliest} end
if occupied < 0 or state[1] ~= ARGV[2] then return {'CONFLICT', state[1] or '0', earliest} end
local seq = tonumber(state[2] or '0')
local events = 7 + 2 * changes
local time_ms, write = stamp_write(KEYS[1], ARGV[1])
for seat = 0, (#ARGV - events + 1) / 2 - 1 do
  local bit = 2 ^ seat
  local was, is = math.floor(announced / bit) % 2, math.floor(mask / bit) % 2
  if was ~= is then
    seq = seq + 1
    local id, event = string.format('%d-1', seq), ARGV[events + 2 * seat + is]
    redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[4], id, 'e', event, 't', time_ms, 'w', write)
  end
end
redis.call('HSET', KEYS[1], 'presence', string.format('%d', mask), 'seq', string.format('%d', seq))
if seq > tonumber(state[2] or '0') then
  redis.call('HSET', KEYS[1], 'time', time_ms, 'write', write)
  -- Announced like a move's events (dizhu.store.notifications).
  redis.call('PUBLISH', KEYS[3], string.format('%d', seq))
end
return {'OK', string.format('%d', mask), earliest}
"""
)

PRESENCE_DUE = """
-- Set a table's entry in the presence due index, unless it moved since the caller read it.
-- KEYS[1]  due index      <prefix>:{presence:<n>}:due   member = table id, score = when to look (ms)
-- ARGV[1]  table id
-- ARGV[2]  the entry's score when the caller read it (ms)
-- ARGV[3]  the new score (ms), "0" to remove the entry
-- return   1 if the entry changed, 0 if it had moved (or was gone) meanwhile
local seen = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not seen or tonumber(seen) ~= tonumber(ARGV[2]) then return 0 end
if ARGV[3] == '0' then return redis.call('ZREM', KEYS[1], ARGV[1]) end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
"""


class PresenceOutcome(enum.Enum):
    """How a :meth:`PresenceStore.update` ended."""

    OK = "OK"
    """Applied; ``mask`` holds the seats connected now, announced."""
    CONFLICT = "CONFLICT"
    """The leases changed but a change of presence is due and the version or seats given
    were unknown or stale: read the table and call again (without the lease changes)."""
    GONE = "GONE"
    """The table does not exist; its presence is forgotten."""


@dataclass(frozen=True, slots=True)
class PresenceUpdate:
    """The result of :meth:`PresenceStore.update`."""

    outcome: PresenceOutcome
    #: For OK: the seats connected now (bit ``s`` for seat ``s``).
    mask: int = 0


class PresenceStore:
    """The presence keys of every table under ``prefix`` (see the module docstring)."""

    def __init__(self, redis: StoreClient, *, prefix: str = "dizhu", events_maxlen: int = 10_000) -> None:
        self._redis = redis
        self._prefix = prefix
        self._due_keys = [index_keys(prefix, shard).presence_due for shard in range(INDEX_SHARDS)]
        self._events_maxlen = events_maxlen
        self._script = redis.register_script(PRESENCE)
        self._set_due = redis.register_script(PRESENCE_DUE)

    async def update(
        self,
        table_id: str,
        *,
        now_ms: int,
        version: int,
        occupied: int,
        closed: bool = False,
        leases: Sequence[tuple[str, int]] = (),
        events: Sequence[bytes] = (),
        extending: bool = False,
        swept_ms: int | None = None,
    ) -> PresenceUpdate:
        """Apply ``leases`` (``(member, expiry_ms)``, see :data:`PRESENCE`) and announce any change.

        ``version`` and ``occupied`` (a seat bitmask) may be :data:`UNKNOWN`. ``events`` holds,
        for each seat, its "went away" event then its "is here" event, carrying ``version``.
        ``closed`` forgets the table's presence and announces nothing. ``extending``: the
        leases only extend leases held already (a renewal), so the due index needs nothing.
        ``swept_ms``: the caller is a sweeper that found the table due at this score; the
        entry is then set to the table's earliest expiry, or removed (see the module docstring).
        """
        keys = table_keys(self._prefix, table_id)
        due_key = self._due_keys[index_shard(table_id)]
        args: list[Any] = [now_ms, version, occupied, self._events_maxlen, int(closed), len(leases)]
        for member, expiry_ms in leases:
            args += [member, expiry_ms]
        args += events
        added = [expiry for member, expiry in leases if expiry > 0 and not member.endswith(":*")]
        if added and not extending:
            await self._redis.zadd(due_key, {table_id: min(added)}, lt=True)
        reply = await self._script(keys=[keys.state, keys.presence, keys.events], args=args)
        outcome = PresenceOutcome(_text(reply[0]))
        earliest = int(float(reply[2])) if outcome is not PresenceOutcome.GONE else 0
        if added and not extending and earliest:
            await self._redis.zadd(due_key, {table_id: earliest}, lt=True)
        if swept_ms is not None:
            await self._set_due(keys=[due_key], args=[table_id, swept_ms, earliest])
        return PresenceUpdate(outcome, int(reply[1]) if outcome is PresenceOutcome.OK else 0)

    async def due(self, now_ms: int, limit: int = 100) -> list[tuple[str, int]]:
        """Tables with a lease that may lapse at or before ``now_ms``: ``(table_id, indexed ms)``, earliest first."""
        async with self._redis.pipeline(transaction=False) as pipe:
            for due_key in self._due_keys:
                pipe.zrangebyscore(due_key, "-inf", now_ms, start=0, num=limit, withscores=True)
            shards: list[list[Any]] = await pipe.execute()
        entries = sorted((int(score), _text(member)) for entries in shards for member, score in entries)
        return [(table_id, score) for score, table_id in entries[:limit]]


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
