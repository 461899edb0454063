"""The schedule and results of a tournament in Redis, shared by any number of runner processes.

Every key carries the hash tag ``{tournament:<name>}`` (one Redis Cluster slot per
tournament) under the referee's key prefix:

| key | type | content |
|---|---|---|
| ``<prefix>:{tournament:<name>}:meta`` | hash | ``fingerprint`` of the schedule, ``games`` |
| ``...:queue`` | list | indexes of the games nobody has claimed yet |
| ``...:leases`` | sorted set | claimed games, scored by when their lease runs out (ms, Redis clock) |
| ``...:owners`` | hash | game -> ``<runner>/<attempt>``, the holder of its latest claim |
| ``...:attempts`` | hash | game -> how many times it was claimed |
| ``...:results`` | hash | game -> its record (JSON), written once |

A runner claims a game (the oldest expired lease first, else the head of the queue),
renews the lease while it plays, and completes it. Completion writes the record only if
the game has none yet **and** the runner still holds the latest claim, in one script: a
runner that was killed, or that stalled past its lease while another took the game over,
can never count a game twice. Times are Redis's own (``TIME``), so runners on several
machines need no synchronised clocks.
"""

from __future__ import annotations

import dataclasses
from typing import Final

from redis.asyncio import Redis

__all__ = ["Claim", "Progress", "ScheduleMismatch", "TournamentStore"]

INIT: Final = """
-- Create a tournament's schedule once; later calls only read its fingerprint.
-- KEYS[1] meta hash, KEYS[2] queue list
-- ARGV[1] fingerprint, ARGV[2] number of games
-- return  the stored fingerprint (ARGV[1] if this call created the schedule)
local stored = redis.call('HGET', KEYS[1], 'fingerprint')
if stored then return stored end
redis.call('HSET', KEYS[1], 'fingerprint', ARGV[1], 'games', ARGV[2])
local batch = {}
for game = 0, tonumber(ARGV[2]) - 1 do
  batch[#batch + 1] = game
  if #batch == 1000 then redis.call('RPUSH', KEYS[2], unpack(batch)); batch = {} end
end
if #batch > 0 then redis.call('RPUSH', KEYS[2], unpack(batch)) end
return ARGV[1]
"""

CLAIM: Final = """
-- Claim a game: the one whose lease ran out longest ago, else the next unclaimed one.
-- KEYS[1] queue, KEYS[2] leases, KEYS[3] owners, KEYS[4] attempts
-- ARGV[1] runner id, ARGV[2] lease in ms
-- return  {game, attempt}, or an empty array when nothing is claimable now
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local game = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 1)[1]
if not game then game = redis.call('LPOP', KEYS[1]) end
if not game then return {} end
local attempt = redis.call('HINCRBY', KEYS[4], game, 1)
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), game)
redis.call('HSET', KEYS[3], game, ARGV[1] .. '/' .. attempt)
return {game, attempt}
"""

RENEW: Final = """
-- Extend a lease, if the caller still holds the game's latest claim and it is not done.
-- KEYS[1] leases, KEYS[2] owners
-- ARGV[1] game, ARGV[2] owner (<runner>/<attempt>), ARGV[3] lease in ms
-- return  1 if renewed, 0 if the claim is lost (taken over, completed or released)
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
local t = redis.call('TIME')
redis.call('ZADD', KEYS[1], tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[3]), ARGV[1])
return 1
"""

COMPLETE: Final = """
-- Record a game's result exactly once, from the holder of its latest claim.
-- KEYS[1] leases, KEYS[2] owners, KEYS[3] results
-- ARGV[1] game, ARGV[2] owner (<runner>/<attempt>), ARGV[3] the record
-- return  1 recorded; 0 the game already has a record; -1 the claim was taken over
if redis.call('HEXISTS', KEYS[3], ARGV[1]) == 1 then return 0 end
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return -1 end
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
redis.call('ZREM', KEYS[1], ARGV[1])
return 1
"""

RELEASE: Final = """
-- Give a claimed game back (a runner stopping): it goes to the head of the queue.
-- KEYS[1] queue, KEYS[2] leases, KEYS[3] owners
-- ARGV[1] game, ARGV[2] owner (<runner>/<attempt>)
-- return  1 released, 0 not the caller's claim any more
if redis.call('HGET', KEYS[3], ARGV[1]) ~= ARGV[2] then return 0 end
if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[3], ARGV[1], '')
redis.call('LPUSH', KEYS[1], ARGV[1])
return 1
"""


class ScheduleMismatch(RuntimeError):
    """Redis holds a tournament of this name with another schedule (another file, or an edited one)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Claim:
    """A game claimed by a runner: attempt ``attempt`` at game ``game``."""

    game: int
    attempt: int
    runner: str

    @property
    def owner(self) -> str:
        return f"{self.runner}/{self.attempt}"


@dataclasses.dataclass(frozen=True, slots=True)
class Progress:
    games: int
    done: int
    queued: int
    playing: int

    @property
    def finished(self) -> bool:
        return self.done >= self.games


class TournamentStore:
    """One tournament's keys in ``redis`` (a client with ``decode_responses=False``)."""

    def __init__(self, redis: Redis, name: str, *, prefix: str = "dizhu") -> None:
        self.redis = redis
        base = f"{prefix}:{{tournament:{name}}}"
        self.keys = {part: f"{base}:{part}" for part in ("meta", "queue", "leases", "owners", "attempts", "results")}
        self._init = redis.register_script(INIT)
        self._claim = redis.register_script(CLAIM)
        self._renew = redis.register_script(RENEW)
        self._complete = redis.register_script(COMPLETE)
        self._release = redis.register_script(RELEASE)

    async def init(self, fingerprint: str, games: int) -> None:
        """Create the schedule, or check that the stored one is the same; :class:`ScheduleMismatch` if not."""
        k = self.keys
        stored = await self._init(keys=[k["meta"], k["queue"]], args=[fingerprint, games])
        if stored.decode() != fingerprint:
            raise ScheduleMismatch(
                "Redis already holds a tournament of this name with another schedule: give this one another name, "
                "or start it again with --fresh (which deletes the stored games)"
            )

    async def expect(self, fingerprint: str, name: str) -> None:
        """Check that Redis holds the tournament ``name`` with this schedule, creating nothing;
        :class:`ScheduleMismatch` if it holds none or another."""
        stored = await self.redis.hget(self.keys["meta"], "fingerprint")
        if stored is None:
            raise ScheduleMismatch(
                f"Redis holds no tournament named {name!r} under this key prefix: check the name, the key prefix "
                "and the Redis URL the runners used"
            )
        if (stored.decode() if isinstance(stored, bytes) else stored) != fingerprint:
            raise ScheduleMismatch(f"Redis holds a tournament named {name!r} with another schedule than this file's")

    async def delete(self) -> None:
        """Forget the tournament: schedule, claims and results."""
        await self.redis.delete(*self.keys.values())

    async def claim(self, runner: str, lease_s: float) -> Claim | None:
        k = self.keys
        reply = await self._claim(
            keys=[k["queue"], k["leases"], k["owners"], k["attempts"]], args=[runner, int(lease_s * 1000)]
        )
        if not reply:
            return None
        return Claim(int(reply[0]), int(reply[1]), runner)

    async def renew(self, claim: Claim, lease_s: float) -> bool:
        k = self.keys
        return bool(
            await self._renew(keys=[k["leases"], k["owners"]], args=[claim.game, claim.owner, int(lease_s * 1000)])
        )

    async def complete(self, claim: Claim, record: bytes) -> int:
        """1 if the record was stored, 0 if the game had one already, -1 if the claim was lost."""
        k = self.keys
        return int(
            await self._complete(keys=[k["leases"], k["owners"], k["results"]], args=[claim.game, claim.owner, record])
        )

    async def release(self, claim: Claim) -> bool:
        k = self.keys
        return bool(await self._release(keys=[k["queue"], k["leases"], k["owners"]], args=[claim.game, claim.owner]))

    async def progress(self) -> Progress:
        k = self.keys
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hget(k["meta"], "games")
            pipe.hlen(k["results"])
            pipe.llen(k["queue"])
            pipe.zcard(k["leases"])
            games, done, queued, playing = await pipe.execute()
        return Progress(int(games or 0), int(done), int(queued), int(playing))

    async def results(self) -> dict[int, bytes]:
        """Every recorded game's record, by game index."""
        raw = await self.redis.hgetall(self.keys["results"])
        return {int(game): record if isinstance(record, bytes) else record.encode() for game, record in raw.items()}

    async def attempts(self) -> dict[int, int]:
        raw = await self.redis.hgetall(self.keys["attempts"])
        return {int(game): int(n) for game, n in raw.items()}
