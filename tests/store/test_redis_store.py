"""TableStore against a real Redis: atomicity, idempotency, events, expiry, key layout."""

from __future__ import annotations

import asyncio
from typing import Any
from unittest.mock import ANY

import pytest
import redis.asyncio
from redis.crc import key_slot

from dizhu.store import Answer, Change, Loaded, Saved, SaveOutcome, TableKeys, TableStore, answer_id, table_keys
from dizhu.store.keys import index_keys, index_shard

TABLE = "t-1"
ALICE = "seat-0"
BOB = "seat-1"


async def _create(store: TableStore, table: str = TABLE, *, events: int = 1, request_id: str = "create-1") -> Saved:
    return await store.create(
        table, b"state-1", 1, [f"created-{i}".encode() for i in range(events)], ALICE, request_id, b"answer-create"
    )


async def _save(
    store: TableStore,
    expected: int,
    *,
    events: int = 1,
    request_id: str | None = None,
    principal: str = ALICE,
    finished: bool = False,
    table: str = TABLE,
) -> Saved:
    new = expected + 1
    return await store.save(
        Change(
            table,
            expected,
            new,
            f"state-{new}".encode(),
            [f"v{new}-e{i}".encode() for i in range(events)],
            Answer(principal, request_id, None if request_id is None else f"answer-{request_id}".encode()),
            finished=finished,
        ),
    )


async def expire_answers(client: redis.asyncio.Redis, keys: TableKeys) -> None:
    """Make every answer of a table expired now, by Redis' own clock."""
    for answer, value in (await client.hgetall(keys.answers)).items():
        await client.hset(keys.answers, answer, b"1:" + value.split(b":", 1)[1])


async def _expires_in_ms(client: redis.asyncio.Redis, store: TableStore, request_id: str) -> int:
    value = await client.hget(store.keys(TABLE).answers, answer_id(ALICE, request_id))
    assert value is not None
    now_s, now_us = await client.time()
    return int(value.split(b":", 1)[0]) - (now_s * 1000 + now_us // 1000)


class TestLoad:
    async def test_a_missing_table_loads_as_no_state_at_version_zero(self, store: TableStore) -> None:
        assert await store.load(TABLE, ALICE, "r-1") == Loaded(state=None, version=0, answer=None, sequence=0)
        assert await store.load(TABLE, ALICE, None) == Loaded(state=None, version=0, answer=None, sequence=0)

    async def test_a_created_table_loads_with_its_state_version_and_last_sequence(self, store: TableStore) -> None:
        await _create(store, events=2)
        assert await store.load(TABLE, BOB, None) == Loaded(b"state-1", 1, None, sequence=2, write=ANY)

    async def test_the_answer_is_loaded_for_its_principal_and_request_id_only(self, store: TableStore) -> None:
        await _create(store)
        await _save(store, 1, request_id="r-1")
        assert (await store.load(TABLE, ALICE, "r-1")).answer == b"answer-r-1"
        assert (await store.load(TABLE, BOB, "r-1")).answer is None
        assert (await store.load(TABLE, ALICE, "r-2")).answer is None


class TestCreate:
    async def test_create_writes_state_events_and_answer(self, store: TableStore) -> None:
        saved = await _create(store, events=3)
        assert saved == Saved(SaveOutcome.SAVED, answer=None, first_sequence=1, version=1)
        loaded = await store.load(TABLE, ALICE, "create-1")
        assert loaded == Loaded(b"state-1", 1, b"answer-create", sequence=3, write=ANY)
        assert await store.read_events(TABLE, 0) == [(1, b"created-0"), (2, b"created-1"), (3, b"created-2")]

    async def test_creating_again_with_the_same_request_id_returns_the_first_answer(self, store: TableStore) -> None:
        await _create(store)
        again = await store.create(TABLE, b"other", 1, [b"other"], ALICE, "create-1", b"other-answer")
        assert again == Saved(SaveOutcome.DUPLICATE, answer=b"answer-create", version=1)
        assert await store.read_events(TABLE, 0) == [(1, b"created-0")]

    async def test_creating_an_existing_table_with_another_request_id_conflicts(self, store: TableStore) -> None:
        await _create(store)
        again = await store.create(TABLE, b"other", 1, [b"other"], BOB, "create-2", b"other-answer")
        assert again == Saved(SaveOutcome.CONFLICT, version=1)
        assert await store.load(TABLE, BOB, "create-2") == Loaded(b"state-1", 1, None, sequence=1, write=ANY)

    async def test_create_without_a_request_id_records_no_answer(
        self, store: TableStore, redis_client: redis.asyncio.Redis
    ) -> None:
        saved = await store.create(TABLE, b"s", 1, [], ALICE, None, None)
        assert saved.outcome is SaveOutcome.SAVED
        assert sorted(await redis_client.keys("*")) == [b"dizhu:{t:t-1}:state"]

    async def test_create_replaces_a_stream_left_without_its_table(
        self, store: TableStore, redis_client: redis.asyncio.Redis
    ) -> None:
        await redis_client.xadd(store.keys(TABLE).events, {"e": b"stale"}, id="7-1")
        await _create(store)
        assert await store.read_events(TABLE, 0) == [(1, b"created-0")]


class TestSave:
    async def test_a_save_at_the_stored_version_is_written(self, store: TableStore) -> None:
        await _create(store)
        saved = await _save(store, 1, events=2, request_id="r-1")
        assert saved == Saved(SaveOutcome.SAVED, answer=None, first_sequence=2, version=2)
        assert await store.load(TABLE, ALICE, "r-1") == Loaded(b"state-2", 2, b"answer-r-1", sequence=3, write=ANY)

    async def test_a_save_at_another_version_conflicts_and_writes_nothing(
        self, store: TableStore, redis_client: redis.asyncio.Redis
    ) -> None:
        await _create(store)
        await _save(store, 1)
        before = {key: await redis_client.dump(key) for key in await redis_client.keys("*")}
        saved = await _save(store, 1, events=2, request_id="late")
        assert saved == Saved(SaveOutcome.CONFLICT, version=2)
        assert {key: await redis_client.dump(key) for key in await redis_client.keys("*")} == before

    async def test_a_save_to_a_missing_table_conflicts_and_creates_nothing(
        self, store: TableStore, redis_client: redis.asyncio.Redis
    ) -> None:
        assert await _save(store, 1, request_id="r-1") == Saved(SaveOutcome.CONFLICT, version=0)
        assert await redis_client.keys("*") == []

    async def test_a_repeated_request_id_returns_the_first_answer_and_applies_nothing(self, store: TableStore) -> None:
        await _create(store)
        await _save(store, 1, request_id="r-1")
        retry = await store.save(Change(TABLE, 2, 3, b"retry", [b"retry"], Answer(ALICE, "r-1", b"second answer")))
        assert retry == Saved(SaveOutcome.DUPLICATE, answer=b"answer-r-1", version=2)
        assert await store.load(TABLE, ALICE, None) == Loaded(b"state-2", 2, None, sequence=2, write=ANY)

    async def test_a_duplicate_wins_over_a_conflict(self, store: TableStore) -> None:
        await _create(store)
        await _save(store, 1, request_id="r-1")
        await _save(store, 2)
        retry = await _save(store, 1, request_id="r-1")
        assert retry == Saved(SaveOutcome.DUPLICATE, answer=b"answer-r-1", version=3)

    async def test_the_same_request_id_of_another_principal_is_another_request(self, store: TableStore) -> None:
        await _create(store)
        await _save(store, 1, request_id="r-1", principal=ALICE)
        assert (await _save(store, 2, request_id="r-1", principal=BOB)).outcome is SaveOutcome.SAVED

    async def test_a_save_without_events_keeps_the_sequence(self, store: TableStore) -> None:
        await _create(store, events=2)
        assert (await _save(store, 1, events=0)).first_sequence == 3
        assert await store.last_sequence(TABLE) == 2

    async def test_a_change_decided_on_the_stored_state_and_presence_is_written(self, store: TableStore) -> None:
        await _create(store)
        saved = await store.save(
            Change(TABLE, 1, 2, b"state-2", [b"e"], Answer(ALICE, "r-1", b"a"), decided_on=b"state-1", presence=0)
        )
        assert saved.outcome is SaveOutcome.SAVED
        assert await store.load(TABLE, ALICE, None) == Loaded(b"state-2", 2, None, sequence=2, write=ANY)

    @pytest.mark.parametrize(
        ("decided_on", "presence"),
        [(b"state-1 of another table that had the same id", 0), (b"state-1", 4)],
        ids=["other-state-same-version", "other-presence"],
    )
    async def test_a_change_decided_on_another_state_or_presence_conflicts_and_writes_nothing(
        self, store: TableStore, redis_client: redis.asyncio.Redis, decided_on: bytes, presence: int
    ) -> None:
        await _create(store)
        before = {key: await redis_client.dump(key) for key in await redis_client.keys("*")}
        saved = await store.save(
            Change(
                TABLE, 1, 2, b"state-2", [b"e"], Answer(ALICE, "r-1", b"a"), decided_on=decided_on, presence=presence
            )
        )
        assert saved == Saved(SaveOutcome.CONFLICT, version=1)
        assert {key: await redis_client.dump(key) for key in await redis_client.keys("*")} == before

    async def test_a_duplicate_wins_over_a_change_decided_on_another_state(self, store: TableStore) -> None:
        await _create(store)
        await _save(store, 1, request_id="r-1")
        retry = await store.save(
            Change(TABLE, 2, 3, b"x", [b"e"], Answer(ALICE, "r-1", b"again"), decided_on=b"old", presence=0)
        )
        assert retry == Saved(SaveOutcome.DUPLICATE, answer=b"answer-r-1", version=2)

    @pytest.mark.parametrize(("expected", "new"), [(0, 1), (2, 2), (3, 2), (-1, 5)])
    async def test_versions_that_do_not_grow_from_a_positive_one_are_refused(
        self, store: TableStore, expected: int, new: int
    ) -> None:
        with pytest.raises(ValueError, match="versions"):
            await store.save(Change(TABLE, expected, new, b"s", [], Answer(ALICE)))


class TestEvents:
    async def test_events_are_numbered_consecutively_across_saves(self, store: TableStore) -> None:
        await _create(store, events=2)
        assert (await _save(store, 1, events=3)).first_sequence == 3
        assert (await _save(store, 2, events=1)).first_sequence == 6
        events = await store.read_events(TABLE, 0)
        assert [sequence for sequence, _ in events] == [1, 2, 3, 4, 5, 6]
        assert events[2:] == [(3, b"v2-e0"), (4, b"v2-e1"), (5, b"v2-e2"), (6, b"v3-e0")]
        assert await store.last_sequence(TABLE) == 6

    @pytest.mark.parametrize("after", [0, 1, 3, 5, 6, 9])
    async def test_read_events_returns_exactly_the_events_after_the_given_sequence(
        self, store: TableStore, after: int
    ) -> None:
        await _create(store, events=2)
        await _save(store, 1, events=4)
        assert [sequence for sequence, _ in await store.read_events(TABLE, after)] == list(range(after + 1, 7))

    async def test_read_events_returns_at_most_count_events(self, store: TableStore) -> None:
        await _create(store, events=5)
        assert [sequence for sequence, _ in await store.read_events(TABLE, 1, count=2)] == [2, 3]

    async def test_read_events_of_a_missing_table_is_empty(self, store: TableStore) -> None:
        assert await store.read_events(TABLE, 0) == []
        assert await store.read_events(TABLE, 0, block_ms=10) == []
        assert await store.oldest_sequence(TABLE) is None
        assert await store.last_sequence(TABLE) == 0

    @pytest.mark.parametrize("protocol", [2, 3])
    async def test_a_blocking_read_returns_the_next_event_when_it_is_saved(
        self, store: TableStore, redis_url: str, protocol: int
    ) -> None:
        await _create(store, events=2)
        reader = redis.asyncio.Redis.from_url(redis_url, protocol=protocol)
        try:
            tail = asyncio.create_task(TableStore(reader).read_events(TABLE, 2, block_ms=5000))
            await asyncio.sleep(0.05)
            assert not tail.done()
            await _save(store, 1, events=2)
            assert await asyncio.wait_for(tail, 5) == [(3, b"v2-e0"), (4, b"v2-e1")]
        finally:
            await reader.aclose()

    async def test_a_blocking_read_returns_waiting_events_at_once_and_nothing_on_timeout(
        self, store: TableStore
    ) -> None:
        await _create(store, events=3)
        assert await store.read_events(TABLE, 1, block_ms=0) == [(2, b"created-1"), (3, b"created-2")]
        assert await store.read_events(TABLE, 3, block_ms=20) == []

    async def test_trimming_moves_the_oldest_sequence_but_never_below_maxlen_events(self, make_store: Any) -> None:
        store: TableStore = make_store(events_maxlen=10)
        await _create(store, events=1)
        assert await store.oldest_sequence(TABLE) == 1
        for version in range(1, 31):
            await _save(store, version, events=10)
        oldest = await store.oldest_sequence(TABLE)
        assert oldest is not None
        assert 1 < oldest <= 301 - 10 + 1
        kept = await store.read_events(TABLE, 0, count=10_000)
        assert [sequence for sequence, _ in kept] == list(range(oldest, 302))


class TestEventStamps:
    async def test_an_event_written_by_an_earlier_clock_gets_the_previous_events_time(self, store: TableStore) -> None:
        await store.create(TABLE, b"state-1", 1, [b"created"], ALICE, None, None, time_ms=5_000)
        # A second referee whose clock reads earlier (or whose write crossed the first one's).
        await store.save(Change(TABLE, 1, 2, b"state-2", [b"late-a", b"late-b"], Answer(BOB), time_ms=4_999))
        await store.save(Change(TABLE, 2, 3, b"state-3", [b"later"], Answer(BOB), time_ms=5_002))
        times = [event.time_ms for event in await store.read_entries(TABLE, 0)]
        assert times == [5_000, 5_000, 5_000, 5_002]

    async def test_every_write_gets_a_larger_write_id_shared_by_its_events(self, store: TableStore) -> None:
        await _create(store, events=2)
        await _save(store, 1, events=2)
        await _save(store, 2, events=1)
        writes = [event.write for event in await store.read_entries(TABLE, 0)]
        assert writes[0] == writes[1] < writes[2] == writes[3] < writes[4]
        assert (await store.load(TABLE, ALICE, None)).write == writes[4]
        assert (await store.load(TABLE, ALICE, "r-any")).write == writes[4]

    async def test_a_write_without_events_leaves_the_last_events_write_id(self, store: TableStore) -> None:
        await _create(store)
        (created,) = await store.read_entries(TABLE, 0)
        await _save(store, 1, events=0)
        assert (await store.load(TABLE, ALICE, None)).write == created.write


class TestExpiry:
    async def test_a_finished_table_expires_with_all_its_keys(
        self, make_store: Any, redis_client: redis.asyncio.Redis
    ) -> None:
        store: TableStore = make_store(finished_ttl_s=600, answer_ttl_s=3600)
        await _create(store)
        assert await redis_client.ttl(store.keys(TABLE).state) == -1
        await _save(store, 1, request_id="last", finished=True)
        ttls = {key: await redis_client.ttl(key) for key in await redis_client.keys("*")}
        keys = store.keys(TABLE)
        assert set(ttls) == {key.encode() for key in (keys.state, keys.events, keys.answers, keys.answered)}
        assert all(590 <= ttl <= 600 for ttl in ttls.values())
        # The last answer is kept no longer than the table: its own expiry is the table's.
        assert 590_000 <= await _expires_in_ms(redis_client, store, "last") <= 600_000

    async def test_a_table_saved_unfinished_again_no_longer_expires(
        self, store: TableStore, redis_client: redis.asyncio.Redis
    ) -> None:
        await _create(store)
        await _save(store, 1, finished=True)
        await _save(store, 2)
        keys = store.keys(TABLE)
        assert await redis_client.ttl(keys.state) == -1
        assert await redis_client.ttl(keys.events) == -1
        assert await redis_client.hget(keys.state, "fin") is None

    async def test_an_answer_is_kept_for_the_answer_ttl(
        self, make_store: Any, redis_client: redis.asyncio.Redis
    ) -> None:
        store: TableStore = make_store(answer_ttl_s=120)
        await _create(store)
        await _save(store, 1, request_id="r-1")
        assert 110_000 <= await _expires_in_ms(redis_client, store, "r-1") <= 120_000

    async def test_an_expired_answer_is_never_returned_and_its_request_is_judged_afresh(
        self, store: TableStore, redis_client: redis.asyncio.Redis
    ) -> None:
        await _create(store)
        await _save(store, 1, request_id="r-1")
        await expire_answers(redis_client, store.keys(TABLE))  # as the passing of answer_ttl_s would
        assert (await store.load(TABLE, ALICE, "r-1")).answer is None
        assert (await store.load(TABLE, ALICE, "create-1")).answer is None
        again = await _save(store, 2, request_id="r-1")
        assert again.outcome is SaveOutcome.SAVED
        assert (await store.load(TABLE, ALICE, "r-1")).answer == b"answer-r-1"

    async def test_a_table_keeps_only_its_latest_answers(
        self, make_store: Any, redis_client: redis.asyncio.Redis
    ) -> None:
        store: TableStore = make_store(answers_per_table=3)
        await _create(store)  # the first answer: create-1
        for version in range(1, 6):
            await _save(store, version, request_id=f"r-{version}")
        keys = store.keys(TABLE)
        assert await redis_client.hlen(keys.answers) == 3
        assert await redis_client.zcard(keys.answered) == 3
        assert (await store.load(TABLE, ALICE, "create-1")).answer is None
        assert (await store.load(TABLE, ALICE, "r-2")).answer is None
        assert [(await store.load(TABLE, ALICE, f"r-{n}")).answer for n in (3, 4, 5)] == [
            b"answer-r-3",
            b"answer-r-4",
            b"answer-r-5",
        ]


class TestConcurrency:
    async def test_of_50_saves_racing_from_one_version_exactly_one_is_saved(self, store: TableStore) -> None:
        await _create(store)
        results = await asyncio.gather(
            *(
                store.save(Change(TABLE, 1, 2, f"s{i}".encode(), [f"e{i}".encode()], Answer(ALICE, f"r-{i}", b"a")))
                for i in range(50)
            )
        )
        outcomes = [result.outcome for result in results]
        assert outcomes.count(SaveOutcome.SAVED) == 1
        assert outcomes.count(SaveOutcome.CONFLICT) == 49
        winner = outcomes.index(SaveOutcome.SAVED)
        assert await store.load(TABLE, ALICE, None) == Loaded(f"s{winner}".encode(), 2, None, sequence=2, write=ANY)
        assert await store.read_events(TABLE, 1) == [(2, f"e{winner}".encode())]

    async def test_of_50_retries_of_one_request_exactly_one_applies(self, store: TableStore) -> None:
        await _create(store)
        results = await asyncio.gather(*(_save(store, 1, request_id="r-1") for _ in range(50)))
        assert [result.outcome for result in results].count(SaveOutcome.SAVED) == 1
        assert {result.answer for result in results if result.outcome is not SaveOutcome.SAVED} == {b"answer-r-1"}

    async def test_two_stores_over_separate_connections_see_each_others_writes(
        self, store: TableStore, second_client: redis.asyncio.Redis
    ) -> None:
        other = TableStore(second_client)
        await _create(store)
        assert (await other.load(TABLE, ALICE, "create-1")).answer == b"answer-create"
        assert (await _save(other, 1, request_id="r-1")).outcome is SaveOutcome.SAVED
        assert await _save(store, 1) == Saved(SaveOutcome.CONFLICT, version=2)
        assert await store.load(TABLE, ALICE, "r-1") == Loaded(b"state-2", 2, b"answer-r-1", sequence=2, write=ANY)


class TestKeys:
    def test_every_key_of_a_table_hashes_to_the_slot_of_its_tag(self) -> None:
        keys = table_keys("dizhu", "table:42")
        every = (keys.state, keys.events, keys.records, keys.answers, keys.answered)
        assert {key_slot(key.encode()) for key in every} == {key_slot(b"t:table:42")}

    async def test_the_stored_keys_follow_the_documented_layout(
        self, make_store: Any, redis_client: redis.asyncio.Redis
    ) -> None:
        store: TableStore = make_store(prefix="game")
        await _create(store)
        assert sorted(await redis_client.keys("*")) == [
            b"game:{t:t-1}:answered",
            b"game:{t:t-1}:answers",
            b"game:{t:t-1}:events",
            b"game:{t:t-1}:state",
        ]
        assert await redis_client.hgetall(b"game:{t:t-1}:state") == {
            b"version": b"1",
            b"data": b"state-1",
            b"seq": b"1",
            b"answers": b"1",
            b"time": ANY,
            b"write": ANY,
        }
        ((_, fields),) = await redis_client.xrange(b"game:{t:t-1}:events")
        assert set(fields) == {b"e", b"t", b"w"}
        stored = await redis_client.hgetall(b"game:{t:t-1}:answers")
        assert list(stored) == [answer_id(ALICE, "create-1").encode()]
        assert next(iter(stored.values())).endswith(b":answer-create")

    async def test_no_key_or_value_holds_a_principal_or_a_request_id(
        self, store: TableStore, redis_client: redis.asyncio.Redis
    ) -> None:
        await store.create(TABLE, b"s", 1, [b"e"], "principal-xyz", "secret-request-id-42", b"a")
        await store.save(Change(TABLE, 1, 2, b"s2", [b"e2"], Answer("principal-xyz", "another-request-id-43", b"a2")))
        dump = b""
        for key in await redis_client.keys("*"):
            dump += key + repr(await redis_client.dump(key)).encode()
        for secret in (b"principal-xyz", b"secret-request-id-42", b"another-request-id-43"):
            assert secret not in dump

    @pytest.mark.parametrize(
        ("table_id", "principal", "request_id"),
        [
            ("", ALICE, "r"),
            ("x" * 129, ALICE, "r"),
            ("a}b", ALICE, "r"),
            ("a b", ALICE, "r"),
            ("a*", ALICE, "r"),
            ("t", "", "r"),
            ("t", "seat:0", "r"),
            ("t", "x" * 129, "r"),
            ("t", ALICE, ""),
            ("t", ALICE, "r" * 129),
            ("t", ALICE, "caf\u00e9"),
            ("t", ALICE, "line\nbreak"),
        ],
    )
    async def test_malformed_ids_raise_value_error_and_touch_nothing(
        self, store: TableStore, redis_client: redis.asyncio.Redis, table_id: str, principal: str, request_id: str
    ) -> None:
        with pytest.raises(ValueError, match="invalid"):
            await store.load(table_id, principal, request_id)
        with pytest.raises(ValueError, match="invalid"):
            await store.create(table_id, b"s", 1, [], principal, request_id, b"a")
        with pytest.raises(ValueError, match="invalid"):
            await store.save(Change(table_id, 1, 2, b"s", [], Answer(principal, request_id, b"a")))
        assert await redis_client.keys("*") == []

    @pytest.mark.parametrize("request_id", ["550e8400-e29b-41d4-a716-446655440000", "a:b.c_d-e", "any ~printable!"])
    async def test_request_ids_may_be_any_printable_ascii(self, store: TableStore, request_id: str) -> None:
        await store.create(TABLE, b"s", 1, [], ALICE, request_id, b"a")
        assert (await store.load(TABLE, ALICE, request_id)).answer == b"a"

    def test_a_malformed_prefix_or_a_decoding_client_is_refused(self) -> None:
        with pytest.raises(ValueError, match="prefix"):
            TableStore(redis.asyncio.Redis(), prefix="{x}")
        with pytest.raises(ValueError, match="decode_responses"):
            TableStore(redis.asyncio.Redis(decode_responses=True))

    async def test_delete_removes_every_key_of_the_table_and_only_those(
        self, store: TableStore, redis_client: redis.asyncio.Redis
    ) -> None:
        await _create(store)
        await _save(store, 1, request_id="r-1")
        await _create(store, "t-10")
        await store.delete(TABLE)
        assert all(b"{t:t-10}" in key for key in await redis_client.keys("*"))
        assert (await store.load(TABLE, ALICE, "r-1")) == Loaded(None, 0, None)


class TestRoundTrips:
    @staticmethod
    def _count_commands(client: redis.asyncio.Redis, monkeypatch: pytest.MonkeyPatch) -> list[str]:
        sent: list[str] = []
        original = client.execute_command

        async def counting(*args: Any, **options: Any) -> Any:
            sent.append(str(args[0]))
            return await original(*args, **options)

        monkeypatch.setattr(client, "execute_command", counting)
        return sent

    @pytest.mark.parametrize("request_id", ["r-1", None])
    async def test_load_is_one_command(
        self, store: TableStore, redis_client: redis.asyncio.Redis, monkeypatch: pytest.MonkeyPatch, request_id: str
    ) -> None:
        await _create(store)
        await store.load_scripts()
        sent = self._count_commands(redis_client, monkeypatch)
        await store.load(TABLE, ALICE, request_id)
        assert len(sent) == 1

    async def test_save_is_one_evalsha(
        self, store: TableStore, redis_client: redis.asyncio.Redis, monkeypatch: pytest.MonkeyPatch, redis_url: str
    ) -> None:
        await _create(store)
        await store.load_scripts()
        observer = redis.asyncio.Redis.from_url(redis_url)
        try:
            await observer.config_resetstat()
            sent = self._count_commands(redis_client, monkeypatch)
            await _save(store, 1, events=3, request_id="r-1", finished=True)
            stats = await observer.info("commandstats")
        finally:
            await observer.aclose()
        assert sent == ["EVALSHA"]
        assert stats["cmdstat_evalsha"]["calls"] == 1
        assert "cmdstat_eval" not in stats
        assert "cmdstat_script" not in stats

    async def test_scripts_load_by_themselves_after_a_script_flush(
        self, store: TableStore, redis_client: redis.asyncio.Redis
    ) -> None:
        await redis_client.script_flush()
        assert (await _create(store)).outcome is SaveOutcome.SAVED
        assert (await store.load(TABLE, ALICE, "create-1")).answer == b"answer-create"


class TestRecords:
    async def test_records_are_written_with_the_state_and_read_back_by_name(self, store: TableStore) -> None:
        await _create(store)
        saved = await store.save(Change(TABLE, 1, 2, b"s2", [b"e"], Answer(ALICE), records=[("replay:1", b"R1")]))
        assert saved.outcome is SaveOutcome.SAVED
        assert await store.read_record(TABLE, "replay:1") == b"R1"
        assert await store.read_record(TABLE, "replay:2") is None

    async def test_a_conflicting_save_writes_no_record(self, store: TableStore) -> None:
        await _create(store)
        saved = await store.save(Change(TABLE, 7, 8, b"s", [], Answer(ALICE), records=[("replay:1", b"R1")]))
        assert saved.outcome is SaveOutcome.CONFLICT
        assert await store.read_record(TABLE, "replay:1") is None

    async def test_records_expire_with_a_finished_table(
        self, store: TableStore, redis_client: redis.asyncio.Redis
    ) -> None:
        await _create(store)
        await store.save(Change(TABLE, 1, 2, b"s2", [], Answer(ALICE), finished=True, records=[("replay:1", b"R")]))
        assert 0 < await redis_client.ttl(table_keys("dizhu", TABLE).records) <= store.finished_ttl_s

    async def test_events_after_records_keep_their_sequence_numbers(self, store: TableStore) -> None:
        await _create(store, events=1)
        await store.save(Change(TABLE, 1, 2, b"s2", [b"a", b"b"], Answer(ALICE), records=[("x", b"1"), ("y", b"2")]))
        assert await store.read_events(TABLE, 0) == [(1, b"created-0"), (2, b"a"), (3, b"b")]


class TestDeadlines:
    async def test_due_tables_are_those_whose_deadline_has_passed(self, store: TableStore) -> None:
        await store.indexes.index_deadline("a", 1, 1_000)
        await store.indexes.index_deadline("b", 1, 2_000)
        await store.indexes.index_deadline("c", 1, 3_000)
        assert await store.indexes.due_tables(2_500) == [("a", 1_000), ("b", 2_000)]

    async def test_a_newer_version_replaces_the_deadline_and_none_removes_it(self, store: TableStore) -> None:
        await store.indexes.index_deadline("a", 1, 1_000)
        assert await store.indexes.index_deadline("a", 2, 5_000)
        assert await store.indexes.due_tables(2_000) == []
        assert await store.indexes.index_deadline("a", 3, None)
        assert await store.indexes.due_tables(10_000) == []

    async def test_an_older_version_never_moves_or_drops_the_deadline(self, store: TableStore) -> None:
        await store.indexes.index_deadline("a", 5, 1_000)
        assert not await store.indexes.index_deadline("a", 4, 9_000)
        assert not await store.indexes.index_deadline("a", 4, None)
        assert await store.indexes.due_tables(1_000) == [("a", 1_000)]

    async def test_an_early_hint_only_brings_the_deadline_forward(self, store: TableStore) -> None:
        await store.indexes.index_deadline("a", 5, 5_000)
        assert not await store.indexes.index_deadline("a", 6, 9_000, early=True)
        assert await store.indexes.due_tables(6_000) == [("a", 5_000)]
        assert await store.indexes.index_deadline("a", 6, 3_000, early=True)
        assert await store.indexes.due_tables(4_000) == [("a", 3_000)]
        # The hint recorded no version: the authoritative write of version 6 still applies.
        assert await store.indexes.index_deadline("a", 6, 9_000)
        assert await store.indexes.due_tables(8_000) == []

    async def test_a_final_write_forgets_the_table(self, store: TableStore, redis_client: redis.asyncio.Redis) -> None:
        await store.indexes.index_deadline("a", 5, 1_000)
        await store.indexes.index_deadline("a", 6, None, final=True)
        assert await store.indexes.due_tables(10_000) == []
        assert await redis_client.hlen(index_keys("dizhu", index_shard("a")).versions) == 0

    async def test_a_table_gone_is_forgotten_whatever_version_its_entry_had(
        self, store: TableStore, redis_client: redis.asyncio.Redis
    ) -> None:
        # The clock finds no state (the table expired) and knows no version: 0.
        await store.indexes.index_deadline("a", 5, 1_000)
        assert await store.indexes.index_deadline("a", 0, None, final=True)
        assert await store.indexes.due_tables(10_000) == []
        assert await redis_client.hlen(index_keys("dizhu", index_shard("a")).versions) == 0

    async def test_a_version_without_a_deadline_keeps_no_entry(
        self, store: TableStore, redis_client: redis.asyncio.Redis
    ) -> None:
        # A round over awaits its settles with no clock running: nothing of it stays in the index,
        # which would outlive the table once it expires.
        await store.indexes.index_deadline("a", 5, 1_000)
        assert await store.indexes.index_deadline("a", 6, None)
        index = index_keys("dizhu", index_shard("a"))
        assert await redis_client.exists(index.versions, index.deadlines) == 0
        # A later write of an older version is one more look for the clock, never a lost deadline.
        assert await store.indexes.index_deadline("a", 7, 9_000)
        assert not await store.indexes.index_deadline("a", 6, None)
        assert await store.indexes.due_tables(10_000) == [("a", 9_000)]
