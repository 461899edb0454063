"""The tournament store on a real Redis: schedule once, claims with leases, every game counted once."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio

from dizhu.tournament.store import ScheduleMismatch, TournamentStore


@pytest.fixture
async def store(redis_client: redis.asyncio.Redis) -> TournamentStore:
    created = TournamentStore(redis_client, "cup", prefix="test")
    await created.init("fp", 3)
    return created


class TestSchedule:
    async def test_keys_share_the_tournaments_hash_tag(self, store: TournamentStore) -> None:
        assert all(key.startswith("test:{tournament:cup}:") for key in store.keys.values())

    async def test_a_second_init_with_the_same_fingerprint_changes_nothing(self, store: TournamentStore) -> None:
        claim = await store.claim("r1", 10)
        await store.init("fp", 3)
        progress = await store.progress()
        assert (progress.games, progress.queued, progress.playing) == (3, 2, 1)
        assert claim is not None

    async def test_another_fingerprint_is_refused(self, store: TournamentStore) -> None:
        with pytest.raises(ScheduleMismatch):
            await store.init("other", 3)

    async def test_delete_forgets_everything(self, store: TournamentStore) -> None:
        await store.delete()
        await store.init("other", 1)
        assert (await store.progress()).games == 1


class TestClaims:
    async def test_games_are_claimed_in_order_once_each(self, store: TournamentStore) -> None:
        claims = [await store.claim("r1", 10) for _ in range(4)]
        assert [c.game if c else None for c in claims] == [0, 1, 2, None]
        assert all(c.attempt == 1 for c in claims if c)

    async def test_a_completed_game_is_counted_once(self, store: TournamentStore) -> None:
        claim = await store.claim("r1", 10)
        assert claim is not None
        assert await store.complete(claim, b"first") == 1
        assert await store.complete(claim, b"second") == 0
        assert await store.results() == {0: b"first"}
        assert not await store.renew(claim, 10)

    async def test_an_expired_lease_is_taken_over_and_the_old_holder_cannot_count(self, store: TournamentStore) -> None:
        old = await store.claim("r1", 0.001)
        assert old is not None
        await asyncio.sleep(0.02)  # the lease (1 ms) has run out
        new = await store.claim("r2", 10)
        assert new is not None
        assert (new.game, new.attempt) == (old.game, 2)
        assert not await store.renew(old, 10)
        assert await store.complete(old, b"late") == -1
        assert await store.complete(new, b"taken over") == 1
        assert await store.results() == {0: b"taken over"}
        assert await store.attempts() == {0: 2}

    async def test_a_renewed_lease_is_not_taken_over(self, store: TournamentStore) -> None:
        held = await store.claim("r1", 10)
        assert held is not None
        assert await store.renew(held, 10)
        other = await store.claim("r2", 10)
        assert other is not None
        assert other.game != held.game

    async def test_a_released_game_goes_back_to_the_head_of_the_queue(self, store: TournamentStore) -> None:
        first = await store.claim("r1", 10)
        assert first is not None
        assert await store.release(first)
        assert await store.complete(first, b"after release") == -1
        again = await store.claim("r2", 10)
        assert again is not None
        assert (again.game, again.attempt) == (0, 2)

    async def test_concurrent_claims_never_share_a_game(self, redis_client: redis.asyncio.Redis) -> None:
        store = TournamentStore(redis_client, "big", prefix="test")
        await store.init("fp", 200)
        claims = []
        for _ in range(5):  # 5 bursts of 50 claims at once (within the client's connection pool)
            claims += await asyncio.gather(*(store.claim(f"r{i % 5}", 10) for i in range(50)))
        games = [c.game for c in claims if c is not None]
        assert sorted(games) == list(range(200))
