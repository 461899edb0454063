"""The Lua scripts of the table store, one named constant each (as redis-py's ``lock.py``).

Each script declares every key it touches in ``KEYS`` (Redis Cluster routes on them; all of
a table's keys share one hash tag, see :mod:`dizhu.store.keys`). The store registers each
script once with ``register_script``, which calls ``EVALSHA`` and falls back to loading the
script on ``NOSCRIPT``.

Results are a flat array ``{outcome, answer, first_sequence, version}``:

- ``outcome``: ``"SAVED"``, ``"CONFLICT"`` or ``"DUPLICATE"``;
- ``answer``: the recorded answer for ``DUPLICATE``, else nil;
- ``first_sequence``: for ``SAVED``, the sequence number given to the first appended event
  (the table's last sequence + 1; with no events, the number the next event will get);
- ``version``: the table's version after the call (decimal string; ``"0"`` if no table).
"""

from __future__ import annotations

__all__ = ["CREATE", "DEADLINE", "LOAD", "SAVE"]

# Shared tail of CREATE and SAVE: append ARGV[first_event..] to the stream KEYS[2] with
# explicit ids "<seq>-1", seq continuing from `seq`, trimming to about ARGV[maxlen] entries.
_APPEND_EVENTS = """
local function append_events(seq, first_event, maxlen)
  for i = first_event, #ARGV do
    seq = seq + 1
    redis.call('XADD', KEYS[2], 'MAXLEN', '~', maxlen, string.format('%d-1', seq), 'e', ARGV[i])
  end
  return seq
end
"""

LOAD = """
-- Read a table's state and the answer recorded for one request id, atomically.
-- KEYS[1]  state hash     <prefix>:{t:<id>}:state
-- KEYS[2]  answer string  <prefix>:{t:<id>}:answer:<principal>:<request_id>
-- return   {version or nil, data or nil, seq or nil, answer or nil, presence or nil}
local state = redis.call('HMGET', KEYS[1], 'version', 'data', 'seq', 'presence')
return {state[1], state[2], state[3], redis.call('GET', KEYS[2]), state[4]}
"""

CREATE = (
    """
-- Create a table if its state key does not exist yet.
-- KEYS[1]  state hash     <prefix>:{t:<id>}:state
-- KEYS[2]  event stream   <prefix>:{t:<id>}:events
-- KEYS[3]  answer string  <prefix>:{t:<id>}:answer:<principal>:<request_id>  (optional)
-- ARGV[1]  version of the new table (decimal)
-- ARGV[2]  state data
-- ARGV[3]  approximate maximum length of the stream (MAXLEN ~)
-- ARGV[4]  answer TTL in seconds
-- ARGV[5]  "1" to record ARGV[6] as the answer under KEYS[3], "0" not to
-- ARGV[6]  the answer
-- ARGV[7...] the events, in order; they get sequence numbers 1, 2, ...
-- return   {"DUPLICATE", answer, 0, version} if the table exists and KEYS[3] holds an answer;
--          {"CONFLICT", nil, 0, version} if the table exists otherwise;
--          {"SAVED", nil, 1, version} after writing the state, events and answer.
"""
    + _APPEND_EVENTS
    + """
local current = redis.call('HGET', KEYS[1], 'version')
if current then
  if KEYS[3] then
    local answer = redis.call('GET', KEYS[3])
    if answer then return {'DUPLICATE', answer, 0, current} end
  end
  return {'CONFLICT', false, 0, current}
end
redis.call('DEL', KEYS[2])
local seq = append_events(0, 7, ARGV[3])
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'data', ARGV[2], 'seq', string.format('%d', seq))
if KEYS[3] and ARGV[5] == '1' then
  redis.call('SET', KEYS[3], ARGV[6], 'EX', ARGV[4])
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
-- KEYS[4]  answer string  <prefix>:{t:<id>}:answer:<principal>:<request_id>  (optional)
-- ARGV[1]  expected version (decimal; must equal the stored one)
-- ARGV[2]  new version (decimal)
-- ARGV[3]  new state data
-- ARGV[4]  approximate maximum length of the stream (MAXLEN ~)
-- ARGV[5]  answer TTL in seconds
-- ARGV[6]  "1" to record ARGV[7] as the answer under KEYS[4], "0" not to
-- ARGV[7]  the answer
-- ARGV[8]  expiry in seconds for the state, stream and records (a finished table), "0" to
--          PERSIST them
-- ARGV[9]  n, the number of records to write
-- ARGV[10 .. 9+2n]  record name, record data, ... (HSET into KEYS[3])
-- ARGV[10+2n ...]   the events, in order; they get the sequence numbers after the last one
-- return   {"DUPLICATE", answer, 0, version} if KEYS[4] already holds an answer (nothing written);
--          {"CONFLICT", nil, 0, version} if there is no table or its version is not ARGV[1]
--          (nothing written; version "0" when there is no table);
--          {"SAVED", nil, first_sequence, ARGV[2]} after writing.
"""
    + _APPEND_EVENTS
    + """
if KEYS[4] then
  local answer = redis.call('GET', KEYS[4])
  if answer then
    return {'DUPLICATE', answer, 0, redis.call('HGET', KEYS[1], 'version') or '0'}
  end
end
local state = redis.call('HMGET', KEYS[1], 'version', 'seq')
if state[1] ~= ARGV[1] then return {'CONFLICT', false, 0, state[1] or '0'} end
local records = tonumber(ARGV[9])
for i = 0, records - 1 do
  redis.call('HSET', KEYS[3], ARGV[10 + 2 * i], ARGV[11 + 2 * i])
end
local last = tonumber(state[2] or '0')
local seq = append_events(last, 10 + 2 * records, ARGV[4])
redis.call('HSET', KEYS[1], 'version', ARGV[2], 'data', ARGV[3], 'seq', string.format('%d', seq))
if KEYS[4] and ARGV[6] == '1' then
  redis.call('SET', KEYS[4], ARGV[7], 'EX', ARGV[5])
end
for i = 1, 3 do
  if ARGV[8] ~= '0' then
    redis.call('EXPIRE', KEYS[i], ARGV[8])
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
-- ARGV[4]  "1" when the table will never have a deadline again (closed or gone): forget it
-- ARGV[5]  "1" for an early hint, written before the state: it may only make the indexed
--          deadline earlier (ZADD LT), and records no version
-- return   1 if the index changed, 0 if a newer version was already indexed
if ARGV[5] == '1' then
  return redis.call('ZADD', KEYS[1], 'LT', 'CH', ARGV[3], ARGV[1])
end
local known = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
if known > tonumber(ARGV[2]) then return 0 end
if ARGV[4] == '1' then
  redis.call('HDEL', KEYS[2], ARGV[1])
else
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
end
if ARGV[3] == '0' then
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
end
return 1
"""
