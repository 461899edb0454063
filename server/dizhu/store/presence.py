"""Seat presence in Redis: leases with an expiry, and the presence each table last announced.

A seat is connected while it holds an unexpired lease: one per open ``WatchTable`` stream
(renewed by the stream's process; it lapses on its own if that process dies) and one for
its latest call (``<seat>:act``). The leases of a table are one sorted set, scored by
expiry, beside the table's other keys (same hash tag)::

    <prefix>:{t:<table_id>}:presence   zset: member "<seat>:<lease id>" or "<seat>:act", score = expiry (ms)
    <prefix>:{t:<table_id>}:state      hash field "presence": the seats last announced connected (bitmask)
    <prefix>:{presence}:due            zset: member = table id, score = its earliest lease expiry (ms)

Every change goes through one script (:data:`PRESENCE`) that applies the lease changes,
drops expired leases, and -- when the connected seats differ from the announced ones --
appends one event per seat that came or went to the table's event stream and records the
new mask, all at once, so each change is announced exactly once whichever process sees
it first. The due index tells every process's sweeper which tables may have a lease
lapsing. The store knows bytes and integers only: the caller builds the events.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from redis.asyncio import Redis

from dizhu.store.keys import table_keys, validate_table_id

__all__ = ["PRESENCE", "UNKNOWN", "PresenceOutcome", "PresenceStore", "PresenceUpdate"]

#: A version or seat mask the caller does not know: the script then announces nothing and
#: answers CONFLICT when there is something to announce (the caller reads the table and retries).
UNKNOWN: Final = -1

PRESENCE = """
-- Change a table's presence leases, then announce the seats that came or went.
-- KEYS[1]  state hash     <prefix>:{t:<id>}:state      fields version, seq, presence (announced mask)
-- KEYS[2]  leases zset    <prefix>:{t:<id>}:presence   member "<seat>:<lease>", score = expiry (ms)
-- KEYS[3]  event stream   <prefix>:{t:<id>}:events
-- KEYS[4]  due index      <prefix>:{presence}:due      member = table id, score = earliest expiry (ms)
-- ARGV[1]  now (ms)
-- ARGV[2]  table id
-- ARGV[3]  the table version the events carry, "-1" if unknown
-- ARGV[4]  the occupied seats (bitmask), "-1" if unknown
-- ARGV[5]  approximate maximum length of the stream (MAXLEN ~)
-- ARGV[6]  "1" for a closed table: forget its presence, announce nothing (TableClosed is the last event)
-- ARGV[7]  n, the number of lease changes; then n x (member, expiry ms): expiry "0" removes the
--          member, member "<seat>:*" removes every lease of the seat; otherwise ZADD GT (a lease
--          is only ever extended)
-- ARGV[8+2n ...]  per seat s: the event "s went away", then the event "s is here"
-- return   {"GONE"} if the table does not exist (its presence is forgotten);
--          {"CONFLICT", version} if a change is due but ARGV[3..4] are unknown or stale
--          (the lease changes are applied, nothing is announced);
--          {"OK", mask} with the seats connected now, announced.
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[2])
  redis.call('ZREM', KEYS[4], ARGV[2])
  return {'GONE'}
end
if ARGV[6] == '1' then
  redis.call('DEL', KEYS[2])
  redis.call('ZREM', KEYS[4], ARGV[2])
  return {'OK', redis.call('HGET', KEYS[1], 'presence') or '0'}
end
local now = tonumber(ARGV[1])
local changes = tonumber(ARGV[7])
for i = 0, changes - 1 do
  local member, expiry = ARGV[8 + 2 * i], ARGV[9 + 2 * i]
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
local occupied = tonumber(ARGV[4])
local mask = 0
for _, held in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  local bit = 2 ^ tonumber(string.match(held, '^(%d+):'))
  if math.floor(mask / bit) % 2 == 0 and (occupied < 0 or math.floor(occupied / bit) % 2 == 1) then
    mask = mask + bit
  end
end
local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if first[2] then
  redis.call('ZADD', KEYS[4], first[2], ARGV[2])
  local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
  redis.call('PEXPIREAT', KEYS[2], tonumber(last[2]) + 60000)
else
  redis.call('ZREM', KEYS[4], ARGV[2])
end
local state = redis.call('HMGET', KEYS[1], 'version', 'seq', 'presence')
local announced = tonumber(state[3] or '0')
if mask == announced then return {'OK', string.format('%d', mask)} end
if occupied < 0 or state[1] ~= ARGV[3] then return {'CONFLICT', state[1]} end
local seq = tonumber(state[2] or '0')
local events = 8 + 2 * changes
for seat = 0, (#ARGV - events + 1) / 2 - 1 do
  local bit = 2 ^ seat
  local was, is = math.floor(announced / bit) % 2, math.floor(mask / bit) % 2
  if was ~= is then
    seq = seq + 1
    redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[5], string.format('%d-1', seq), 'e', ARGV[events + 2 * seat + is])
  end
end
redis.call('HSET', KEYS[1], 'presence', string.format('%d', mask), 'seq', string.format('%d', seq))
if seq > tonumber(state[2] or '0') then
  -- Announced like a move's events (dizhu.store.notifications).
  redis.call('PUBLISH', KEYS[3], string.format('%d', seq))
end
return {'OK', string.format('%d', mask)}
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

    def __init__(self, redis: Redis, *, prefix: str = "dizhu", events_maxlen: int = 10_000) -> None:
        self._redis = redis
        self._prefix = prefix
        self._due_key = f"{prefix}:{{presence}}:due"
        self._events_maxlen = events_maxlen
        self._script = redis.register_script(PRESENCE)

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
    ) -> PresenceUpdate:
        """Apply ``leases`` (``(member, expiry_ms)``, see :data:`PRESENCE`) and announce any change.

        ``version`` and ``occupied`` (a seat bitmask) may be :data:`UNKNOWN`. ``events`` holds,
        for each seat, its "went away" event then its "is here" event, carrying ``version``.
        ``closed`` forgets the table's presence and announces nothing.
        """
        keys = table_keys(self._prefix, validate_table_id(table_id))
        args: list[Any] = [now_ms, table_id, version, occupied, self._events_maxlen, int(closed), len(leases)]
        for member, expiry_ms in leases:
            args += [member, expiry_ms]
        args += events
        reply = await self._script(keys=[keys.state, keys.presence, keys.events, self._due_key], args=args)
        outcome = PresenceOutcome(_text(reply[0]))
        return PresenceUpdate(outcome, int(reply[1]) if outcome is PresenceOutcome.OK else 0)

    async def due(self, now_ms: int, limit: int = 100) -> list[str]:
        """Tables with a lease expiring at or before ``now_ms``."""
        members: list[Any] = await self._redis.zrangebyscore(self._due_key, "-inf", now_ms, start=0, num=limit)
        return [_text(member) for member in members]


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
