"""The Lua scripts of the table store, one named constant each (as redis-py's ``lock.py``).

Each script declares every key it touches in ``KEYS`` (Redis Cluster routes on them; all of
a table's keys share one hash tag, see :mod:`dizhu.store.keys`). The store registers each
script once with ``register_script``, which calls ``EVALSHA`` and falls back to loading the
script on ``NOSCRIPT``.

``CREATE`` and ``SAVE`` return a flat array ``{outcome, answer, first_sequence, version}``:

- ``outcome``: ``"SAVED"``, ``"CONFLICT"`` or ``"DUPLICATE"``;
- ``answer``: the recorded answer for ``DUPLICATE``, else nil;
- ``first_sequence``: for ``SAVED``, the sequence number given to the first appended event
  (the table's last sequence + 1; with no events, the number the next event will get);
- ``version``: the table's version after the call (decimal string; ``"0"`` if no table).

Answers live in the table's ``answers`` hash, each with its expiry (Redis' own clock, ms): an
answer past its expiry is never returned. The ``answered`` sorted set lists them in the order
they were recorded; beyond the table's cap, recording one removes the oldest. So a table holds
at most its cap of answers, and an expired one lingers at most until it is pushed out or the
table expires.

Writes under ``maxmemory`` with ``noeviction``: Redis refuses a script's *first* write with an
OOM error and lets a script that has written go on, so each script checks everything before
it writes anything -- a refused script has changed nothing.
"""

from __future__ import annotations

__all__ = ["CREATE", "DEADLINE", "DEFER", "LOAD", "RESERVE", "SAVE", "STAMP_WRITE"]

# Shared by the scripts that read or record answers. An answer is kept in the hash
# KEYS[answers] as "<expiry ms>:<answer>" and listed in the sorted set KEYS[answered] by the
# order it was recorded in (the state hash's "answers" counter); `now_ms` reads Redis' clock
# (allowed before writes: scripts replicate their effects).
_ANSWERS = """
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function recorded(answers, id)
  local value = redis.call('HGET', answers, id)
  if not value then return false end
  local colon = string.find(value, ':', 1, true)
  if tonumber(string.sub(value, 1, colon - 1)) <= now_ms() then return false end
  return string.sub(value, colon + 1)
end
local function record(state, answers, answered, id, answer, ttl_ms, cap)
  local order = redis.call('HINCRBY', state, 'answers', 1)
  redis.call('HSET', answers, id, string.format('%d', now_ms() + tonumber(ttl_ms)) .. ':' .. answer)
  redis.call('ZADD', answered, order, id)
  local over = redis.call('ZCARD', answered) - tonumber(cap)
  if over > 0 then
    local popped = redis.call('ZPOPMIN', answered, over)
    for i = 1, #popped, 2 do redis.call('HDEL', answers, popped[i]) end
  end
end
"""

# How a script appending to a table's stream stamps the write (CREATE, SAVE and
# dizhu.store.presence's PRESENCE): each stream entry carries, beside the event ("e"), the
# write's time "t" and write id "w", both decided here, where the order of the table's
# events is decided (docs/store.md):
# - "t" (ms): the writer's clock (Redis' when the writer gives none), but never earlier than
#   the table's previous event's, so a table's events never go back in time, even when two
#   referees' writes cross;
# - "w": Redis' clock in µs, above the table's previous write id: within one history no two
#   writes share one, and a store restored behind its last writes gives their sequence
#   numbers to later writes with other ids, which is how a reader tells (dizhu.service.feeds).
# The state hash keeps the last event's ("time", "write") beside "seq", written only when
# events were appended (a snapshot carries its last event's write id).
STAMP_WRITE = """
local function stamp_write(state, writer_ms)
  local kept = redis.call('HMGET', state, 'time', 'write')
  local clock = redis.call('TIME')
  local previous_ms, previous_write = tonumber(kept[1] or '0'), tonumber(kept[2] or '0')
  local time_ms = tonumber(writer_ms) or (tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000))
  local write = math.max(tonumber(clock[1]) * 1000000 + tonumber(clock[2]), previous_write + 1)
  return string.format('%.0f', math.max(time_ms, previous_ms)), string.format('%.0f', write)
end
"""

# Shared tail of CREATE and SAVE: append ARGV[first_event..] to the stream KEYS[2] with
# explicit ids "<seq>-1", seq continuing from `seq`, trimming to about ARGV[maxlen] entries,
# each stamped (STAMP_WRITE); then announce the new last sequence on the channel KEYS[2] (a
# channel is no key: a PUBLISH is heard on every node of a Redis Cluster).
_APPEND_EVENTS = (
    STAMP_WRITE
    + """
local function append_events(seq, first_event, maxlen, time_ms, write)
  for i = first_event, #ARGV do
    seq = seq + 1
    local id = string.format('%d-1', seq)
    redis.call('XADD', KEYS[2], 'MAXLEN', '~', maxlen, id, 'e', ARGV[i], 't', time_ms, 'w', write)
  end
  return seq
end
-- Tell the processes that follow the table (dizhu.store.notifications) that its stream grew:
-- a PUBLISH of the last sequence on the channel named as the stream's key.
local function announce(seq, before)
  if seq > before then redis.call('PUBLISH', KEYS[2], string.format('%d', seq)) end
end
"""
)

LOAD = (
    """
-- Read a table's state and the answer recorded for one request, atomically.
-- KEYS[1]  state hash        <prefix>:{t:<id>}:state
-- KEYS[2]  answers hash      <prefix>:{t:<id>}:answers
-- ARGV[1]  the answer id
-- return   {version or nil, data or nil, seq or nil, answer or nil (none, or expired),
--           presence or nil, write or nil (the write id of the last event)}
"""
    + _ANSWERS
    + """
local state = redis.call('HMGET', KEYS[1], 'version', 'data', 'seq', 'presence', 'write')
return {state[1], state[2], state[3], recorded(KEYS[2], ARGV[1]), state[4], state[5]}
"""
)

CREATE = (
    """
-- Create a table if its state key does not exist yet.
-- KEYS[1]  state hash     <prefix>:{t:<id>}:state
-- KEYS[2]  event stream   <prefix>:{t:<id>}:events
-- KEYS[3]  answers hash   <prefix>:{t:<id>}:answers
-- KEYS[4]  answered zset  <prefix>:{t:<id>}:answered
-- ARGV[1]  version of the new table (decimal)
-- ARGV[2]  state data
-- ARGV[3]  approximate maximum length of the stream (MAXLEN ~)
-- ARGV[4]  the answer id, "" for none
-- ARGV[5]  "1" to record ARGV[6] as the answer under ARGV[4], "0" not to
-- ARGV[6]  the answer
-- ARGV[7]  how long the answer is kept (ms)
-- ARGV[8]  how many answers the table keeps at most
-- ARGV[9]  the events' time (ms, the writer's clock), "" for Redis' clock
-- ARGV[10...] the events, in order; they get sequence numbers 1, 2, ...
-- return   {"DUPLICATE", answer, 0, version} if the table exists and ARGV[4] has an answer;
--          {"CONFLICT", nil, 0, version} if the table exists otherwise;
--          {"SAVED", nil, 1, version} after writing the state, events and answer.
"""
    + _ANSWERS
    + _APPEND_EVENTS
    + """
local current = redis.call('HGET', KEYS[1], 'version')
if current then
  if ARGV[4] ~= '' then
    local answer = recorded(KEYS[3], ARGV[4])
    if answer then return {'DUPLICATE', answer, 0, current} end
  end
  return {'CONFLICT', false, 0, current}
end
-- The first write must be one Redis may refuse when full (see the module docstring).
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'data', ARGV[2])
-- Leftovers of an expired table of the same id would otherwise mix with the new one.
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
local time_ms, write = stamp_write(KEYS[1], ARGV[9])
local seq = append_events(0, 10, ARGV[3], time_ms, write)
redis.call('HSET', KEYS[1], 'seq', string.format('%d', seq))
if seq > 0 then redis.call('HSET', KEYS[1], 'time', time_ms, 'write', write) end
announce(seq, 0)
if ARGV[4] ~= '' and ARGV[5] == '1' then
  record(KEYS[1], KEYS[3], KEYS[4], ARGV[4], ARGV[6], ARGV[7], ARGV[8])
end
return {'SAVED', false, 1, ARGV[1]}
"""
)

SAVE = (
    """
-- Compare-and-set a table's state on its version, append its events, keep its records,
-- record the answer.
-- KEYS[1]  state hash     <prefix>:{t:<id>}:state
-- KEYS[2]  event stream   <prefix>:{t:<id>}:events
-- KEYS[3]  records hash   <prefix>:{t:<id>}:records
-- KEYS[4]  answers hash   <prefix>:{t:<id>}:answers
-- KEYS[5]  answered zset  <prefix>:{t:<id>}:answered
-- ARGV[1]  expected version (decimal; must equal the stored one)
-- ARGV[2]  new version (decimal)
-- ARGV[3]  new state data
-- ARGV[4]  approximate maximum length of the stream (MAXLEN ~)
-- ARGV[5]  the answer id, "" for none
-- ARGV[6]  "1" to record ARGV[7] as the answer under ARGV[5], "0" not to
-- ARGV[7]  the answer
-- ARGV[8]  how long the answer is kept (ms)
-- ARGV[9]  how many answers the table keeps at most
-- ARGV[10] expiry in seconds for every key of the table (a finished table), "0" to PERSIST them
-- ARGV[11] n, the number of records to write
-- ARGV[12] m, the number of records to delete
-- ARGV[13] the stored state data the new state was decided on, "" not to compare it
-- ARGV[14] the seats announced connected (decimal mask) the answer was made with, "" not to compare
-- ARGV[15] the events' time (ms, the writer's clock), "" for Redis' clock
-- ARGV[16 .. 15+2n]          record name, record data, ... (HSET into KEYS[3])
-- ARGV[16+2n .. 15+2n+m]     record names to delete (HDEL from KEYS[3])
-- ARGV[16+2n+m ...]          the events, in order; they get the sequence numbers after the last one
-- return   {"DUPLICATE", answer, 0, version} if ARGV[5] already has an answer (nothing written);
--          {"CONFLICT", nil, 0, version} if there is no table, its version is not ARGV[1], or
--          its data or presence differ from ARGV[13] or ARGV[14] where given
--          (nothing written; version "0" when there is no table);
--          {"SAVED", nil, first_sequence, ARGV[2]} after writing.
"""
    + _ANSWERS
    + _APPEND_EVENTS
    + """
if ARGV[5] ~= '' then
  local answer = recorded(KEYS[4], ARGV[5])
  if answer then
    return {'DUPLICATE', answer, 0, redis.call('HGET', KEYS[1], 'version') or '0'}
  end
end
local state = redis.call('HMGET', KEYS[1], 'version', 'seq', 'presence')
if state[1] ~= ARGV[1] then return {'CONFLICT', false, 0, state[1] or '0'} end
-- A change decided without reading the table first (on the writer's own last write of it) is
-- written only over that very state, and an answer only with the presence it reports.
if ARGV[13] ~= '' and redis.call('HGET', KEYS[1], 'data') ~= ARGV[13] then return {'CONFLICT', false, 0, state[1]} end
if ARGV[14] ~= '' and (state[3] or '0') ~= ARGV[14] then return {'CONFLICT', false, 0, state[1]} end
local records = tonumber(ARGV[11])
local drops = tonumber(ARGV[12])
-- The first write must be one Redis may refuse when full (see the module docstring).
redis.call('HSET', KEYS[1], 'version', ARGV[2], 'data', ARGV[3])
for i = 0, records - 1 do
  redis.call('HSET', KEYS[3], ARGV[16 + 2 * i], ARGV[17 + 2 * i])
end
for i = 0, drops - 1 do
  redis.call('HDEL', KEYS[3], ARGV[16 + 2 * records + i])
end
local last = tonumber(state[2] or '0')
local time_ms, write = stamp_write(KEYS[1], ARGV[15])
local seq = append_events(last, 16 + 2 * records + drops, ARGV[4], time_ms, write)
redis.call('HSET', KEYS[1], 'seq', string.format('%d', seq))
if seq > last then redis.call('HSET', KEYS[1], 'time', time_ms, 'write', write) end
announce(seq, last)
if ARGV[5] ~= '' and ARGV[6] == '1' then
  record(KEYS[1], KEYS[4], KEYS[5], ARGV[5], ARGV[7], ARGV[8], ARGV[9])
end
if ARGV[10] ~= '0' then
  redis.call('HSET', KEYS[1], 'fin', '1')
else
  redis.call('HDEL', KEYS[1], 'fin')
end
for i = 1, 5 do
  if ARGV[10] ~= '0' then
    redis.call('EXPIRE', KEYS[i], ARGV[10])
  else
    redis.call('PERSIST', KEYS[i])
  end
end
return {'SAVED', false, last + 1, ARGV[2]}
"""
)

DEADLINE = """
-- Index a table's turn deadline as of one version of the table; an older version never
-- overwrites a newer one, so a writer that loses a race or a clock that read a stale state
-- cannot move the deadline later or drop it.
-- KEYS[1]  sorted set     <prefix>:{clock}:deadlines   member = table id, score = deadline (ms)
-- KEYS[2]  hash           <prefix>:{clock}:versions    field = table id, value = indexed version
-- ARGV[1]  table id
-- ARGV[2]  the table version the deadline belongs to (decimal)
-- ARGV[3]  the deadline in ms since the epoch, "0" for none
-- ARGV[4]  "1" when the table will never have a deadline again (closed or gone): forget it,
--          whatever version was indexed (a closed table has no later version; a gone one none)
-- ARGV[5]  "1" for an early hint, written before the state: it may only make the indexed
--          deadline earlier (ZADD LT), and records no version
-- return   1 if the index changed, 0 if a newer version was already indexed
--
-- A version is kept only beside a deadline: a table without one has no entry to protect, and
-- a version kept for it would outlive the table (a late write of an older version may still
-- put an entry back; it only makes the clock look once more, and that look forgets it).
if ARGV[5] == '1' then
  return redis.call('ZADD', KEYS[1], 'LT', 'CH', ARGV[3], ARGV[1])
end
if ARGV[4] ~= '1' then
  local known = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
  if known > tonumber(ARGV[2]) then return 0 end
end
if ARGV[3] == '0' then
  redis.call('HDEL', KEYS[2], ARGV[1])
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
end
return 1
"""

DEFER = """
-- Look at a table's deadline again later: the clock failed to apply it (a quarantine).
-- Only an indexed entry of the failed version (or an older one) moves; a newer version's
-- deadline, written since by a move, stays.
-- KEYS[1]  sorted set     <prefix>:{clock}:deadlines
-- KEYS[2]  hash           <prefix>:{clock}:versions
-- ARGV[1]  table id
-- ARGV[2]  the table version the clock failed on (decimal)
-- ARGV[3]  when to look again (ms since the epoch)
-- return   1 if the entry moved, 0 otherwise
local known = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
if known > tonumber(ARGV[2]) then return 0 end
return redis.call('ZADD', KEYS[1], 'XX', 'CH', ARGV[3], ARGV[1])
"""

RESERVE = """
-- Count a new table against its creator's quota of open tables.
-- KEYS[1]  sorted set     <prefix>:{quota}:open:<owner>   member = table id, score = created (ms)
-- ARGV[1]  table id
-- ARGV[2]  the most open tables the owner may have
-- ARGV[3]  now (ms)
-- return   1 if the table is counted (now, or already: a retried create), 0 if the quota is full
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 1 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
"""
