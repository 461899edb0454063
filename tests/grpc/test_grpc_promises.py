"""Promises of the contract that a plausible bug in the referee would break, each pinned from outside.

Settle checks the version like every mutation; round *n* deals from the *n*-th preset seed and
its redeals from the documented derived seeds; the creator's token acts for no seat; Settle
changes nothing while the next round runs; how long retried answers are kept (the same in
the contract, the docs and the server); and which fault wins when a request has several
(errors.proto's numbered order, step by step); and a Redis out of memory is STORE_FULL on every
supported Redis version.

Tables are dealt from fixed seeds with seat 0 dealing, so the hands are known: in 3p seat 0
bids first.
"""

from __future__ import annotations

import hashlib
import random
import re
from pathlib import Path

import grpc
import pytest
import redis.asyncio

from dizhu.config import ServerConfig
from dizhu.process import create_server
from dizhu.rules import derive_seed
from dizhu.store import TableStore
from dizhu.store.keys import index_keys, index_shard
from dizhu.v1 import cards_pb2, table_pb2, table_service_pb2_grpc
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import (
    SEED,
    THREE,
    RulesStub,
    Table,
    TableStub,
    bid_request,
    bid_to_play,
    card,
    card_id,
    create_table,
    invalid,
    play_request,
    play_round,
    referee_over_its_own_redis,
    refused,
    rid,
    view,
)
from tests.support.redis_servers import REDIS_VERSIONS, redis_server_binary

ROOT = Path(__file__).resolve().parents[2]
FAILED = grpc.StatusCode.FAILED_PRECONDITION
ABORTED = grpc.StatusCode.ABORTED
JOKERS = (cards_pb2.RANK_BLACK_JOKER, cards_pb2.RANK_RED_JOKER)


@pytest.fixture
async def table(tables: TableStub) -> Table:
    """A 3p table in its auction, dealt from SEED; seat 0 is to bid."""
    created = await create_table(tables, THREE, seeds=[SEED], first_dealer=0)
    assert created.created.table.turn_seat == 0
    return created


def _settle(table: Table, version: int = 0) -> pb.SettleRequest:
    return pb.SettleRequest(table_id=table.table_id, request_id=rid(), expected_version=version)


def _close(table: Table) -> pb.CloseTableRequest:
    return pb.CloseTableRequest(table_id=table.table_id, request_id=rid())


# -- Settle and the table's version --------------------------------------------------------


class TestSettleChecksTheVersion:
    async def test_a_stale_version_is_refused_while_the_next_round_runs(
        self, tables: TableStub, rules: RulesStub
    ) -> None:
        table = await create_table(tables, THREE)  # the next round is dealt at once
        ended = await play_round(tables, rules, table, random.Random(11))
        assert ended.phase == table_pb2.PHASE_AUCTION
        info = await refused(
            tables.Settle(_settle(table, ended.version - 1), metadata=table.seat(0)),
            ABORTED,
            "STALE_STATE",
            table_id=table.table_id,
        )
        assert info.metadata["current_version"] == str(ended.version)

    async def test_a_stale_version_wins_over_no_round_having_ended(self, tables: TableStub, table: Table) -> None:
        info = await refused(tables.Settle(_settle(table, 5), metadata=table.seat(1)), ABORTED, "STALE_STATE")
        assert info.metadata["current_version"] == "1"

    async def test_the_current_version_before_any_round_ended_is_the_wrong_phase(
        self, tables: TableStub, table: Table
    ) -> None:
        info = await refused(tables.Settle(_settle(table, 1), metadata=table.seat(1)), FAILED, "WRONG_PHASE")
        assert info.metadata["phase"] == "PHASE_AUCTION"

    async def test_settle_while_the_next_round_runs_changes_nothing(self, tables: TableStub, rules: RulesStub) -> None:
        table = await create_table(tables, THREE)
        ended = await play_round(tables, rules, table, random.Random(12))
        for expected_version in (0, ended.version):
            settled = await tables.Settle(_settle(table, expected_version), metadata=table.seat(1))
            assert settled.settlement == ended.last_settlement
            assert settled.table.version == ended.version
            assert settled.table.phase == table_pb2.PHASE_AUCTION
        assert (await view(tables, table)).version == ended.version


# -- seeds ---------------------------------------------------------------------------------


def _commitment(seed: bytes) -> bytes:
    return hashlib.sha256(seed).digest()


async def _everyone_passes(tables: TableStub, table: Table) -> table_pb2.TableView:
    current = await view(tables, table)
    deal = current.deal_number
    while current.deal_number == deal:
        response = await tables.Bid(bid_request(table, current.version, 0), metadata=table.seat(current.turn_seat))
        current = response.table
    return current


class TestPresetSeeds:
    async def test_round_n_deals_from_the_nth_seed_and_its_redeals_from_the_derived_seeds(
        self, tables: TableStub, rules: RulesStub
    ) -> None:
        seeds = [bytes([n]) * 32 for n in (1, 2)]
        table = await create_table(tables, THREE, seeds=seeds, first_dealer=0)
        rng = random.Random(13)
        first = await view(tables, table)
        assert (first.round, first.deal_number, first.seed_commitment) == (1, 1, _commitment(seeds[0]))
        ended = await play_round(tables, rules, table, rng)
        assert ended.last_reveal.seed == seeds[0]
        second = await view(tables, table)
        assert (second.round, second.deal_number, second.seed_commitment) == (2, 1, _commitment(seeds[1]))
        for redeal in (1, 2):
            again = await _everyone_passes(tables, table)
            assert (again.round, again.deal_number) == (2, redeal + 1)
            assert again.seed_commitment == _commitment(derive_seed(seeds[1], "redeal", redeal))
            assert again.last_reveal.seed == (seeds[1] if redeal == 1 else derive_seed(seeds[1], "redeal", 1))
        await play_round(tables, rules, table, rng)
        third = await view(tables, table)
        assert third.round == 3
        # Past the preset seeds every deal is random: none of the seeds above, nor theirs derived.
        known = {*seeds, *(derive_seed(seed, "redeal", k) for seed in seeds for k in range(1, 4))}
        assert third.seed_commitment not in {_commitment(seed) for seed in known}


# -- the creator's token -------------------------------------------------------------------


class TestTheCreatorActsForNoSeat:
    async def test_the_creator_token_may_not_play_settle_or_leave_even_when_a_seat_could(
        self, tables: TableStub, rules: RulesStub
    ) -> None:
        table = await create_table(tables, THREE, seeds=[SEED], first_dealer=0)
        playing = await bid_to_play(tables, table)
        mine = playing.your_hand
        for call in (
            tables.Play(play_request(table, playing.version, [mine[0]]), metadata=table.creator),
            tables.Settle(_settle(table), metadata=table.creator),
            tables.LeaveTable(pb.LeaveTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.creator),
        ):
            await refused(call, grpc.StatusCode.PERMISSION_DENIED, "PERMISSION_DENIED", table_id=table.table_id)
        assert (await view(tables, table)).version == playing.version


# -- metadata ------------------------------------------------------------------------------


class TestRefusalMetadata:
    async def test_every_card_missing_from_the_hand_is_named_in_the_order_played(
        self, tables: TableStub, table: Table
    ) -> None:
        playing = await bid_to_play(tables, table)
        theirs = (await view(tables, table, 1)).your_hand
        mine = playing.your_hand
        played = [theirs[-1], mine[0], theirs[0], mine[0]]  # two not held, and one held card listed twice
        info = await refused(
            tables.Play(play_request(table, playing.version, played), metadata=table.seat(0)),
            FAILED,
            "CARDS_NOT_IN_HAND",
        )
        assert info.metadata["missing_card_ids"] == ",".join(str(card_id(c)) for c in (theirs[-1], theirs[0], mine[0]))

    async def test_a_round_not_finished_names_the_round_asked_for(self, tables: TableStub, table: Table) -> None:
        info = await refused(
            tables.GetReplay(pb.GetReplayRequest(table_id=table.table_id, round=2)),
            grpc.StatusCode.NOT_FOUND,
            "TABLE_NOT_FOUND",
        )
        assert dict(info.metadata) == {"table_id": table.table_id, "round": "2"}


# -- retried answers: how long they are kept -----------------------------------------------


def _kept_hours_and_answers(text: str) -> tuple[int, int]:
    """``(hours, answers)`` of the retention promise as ``text`` words it."""
    hours = re.search(r"(\d+)\**\s+hours", text)
    answers = re.search(r"latest \**([\d,]+)", text)
    assert hours, f"no time in {text!r}"
    assert answers, f"no count of answers in {text!r}"
    return int(hours.group(1)), int(answers.group(1).replace(",", ""))


def _paragraph(text: str, words: str) -> str:
    """The paragraph (comment block or Markdown) of ``text`` that contains ``words``."""
    flat = " ".join(line.strip().lstrip("/").strip() for line in text.splitlines())
    at = flat.index(words)
    return flat[at : at + 600]


class TestAnswerRetention:
    def test_the_contract_the_docs_and_the_servers_defaults_promise_the_same(self) -> None:
        contract = (ROOT / "proto" / "dizhu" / "v1" / "table_service.proto").read_text()
        api = (ROOT / "docs" / "api.md").read_text()
        security = (ROOT / "docs" / "security.md").read_text()
        promised = {
            "table_service.proto": _kept_hours_and_answers(_paragraph(contract, "The server remembers each")),
            "docs/api.md": _kept_hours_and_answers(_paragraph(api, "successful answer is remembered")),
            "docs/security.md": _kept_hours_and_answers(_paragraph(security, "answers kept for retries")),
        }
        config = ServerConfig()
        store = TableStore(redis.asyncio.Redis())
        server = (config.answer_ttl_s // 3600, config.answers_per_table)
        assert (store.answer_ttl_s // 3600, store.answers_per_table) == server
        assert all(promise == server for promise in promised.values()), (promised, server)
        assert "as long as the table exists" not in contract

    async def test_a_retry_after_the_tables_latest_answers_moved_on_is_judged_afresh(
        self, store: TableStore, redis_client: redis.asyncio.Redis
    ) -> None:
        kept = TableStore(redis_client, answers_per_table=2)
        await kept.load_scripts()
        referee = await create_server(ServerConfig(address="127.0.0.1:0"), kept)
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{referee.port}") as channel:
                tables = table_service_pb2_grpc.TableServiceStub(channel)
                table = await create_table(tables, THREE, seeds=[SEED], first_dealer=0)
                first = bid_request(table, 1, 1, request_id="the-first-bid")
                answered = await tables.Bid(first, metadata=table.seat(0))
                assert (await tables.Bid(first, metadata=table.seat(0))) == answered  # kept: the first answer
                current = answered.table
                for _ in range(2):  # two newer answers push it out
                    current = (
                        await tables.Bid(bid_request(table, current.version, 0), metadata=table.seat(current.turn_seat))
                    ).table
                await refused(tables.Bid(first, metadata=table.seat(0)), ABORTED, "STALE_STATE")
                assert (await view(tables, table)).version == current.version
        finally:
            await referee.stop(0)

    async def test_a_retry_after_its_answer_expired_is_judged_afresh(
        self, tables: TableStub, table: Table, store: TableStore, redis_client: redis.asyncio.Redis
    ) -> None:
        first = bid_request(table, 1, 1, request_id="expires")
        answered = await tables.Bid(first, metadata=table.seat(0))
        assert (await tables.Bid(first, metadata=table.seat(0))) == answered
        answers = store.keys(table.table_id).answers
        for answer, value in (await redis_client.hgetall(answers)).items():  # as the answer TTL's passing would
            await redis_client.hset(answers, answer, b"1:" + value.split(b":", 1)[1])
        await refused(tables.Bid(first, metadata=table.seat(0)), ABORTED, "STALE_STATE")
        assert (await view(tables, table)).version == answered.table.version


# -- fault order ---------------------------------------------------------------------------


FAULT_ORDER = [
    "0. RATE_LIMITED",
    "1. a malformed request",
    "2. TABLE_NOT_FOUND",
    "3. a request_id the same caller",
    "4. a request malformed for this table's variant",
    "5. UNAUTHENTICATED -> PERMISSION_DENIED -> TABLE_CLOSED -> STALE_STATE -> WRONG_PHASE -> NOT_YOUR_TURN",
    "6. the call's own checks: JoinTable's SEAT_TAKEN (a seat asked for) or TABLE_FULL; Bid's BID_TOO_LOW; "
    "Play's MUST_LEAD for a pass, or CARDS_NOT_IN_HAND -> ILLEGAL_COMBINATION -> DOES_NOT_BEAT for cards.",
]


class TestFaultOrder:
    """errors.proto's order, step by step: each test makes a request with two faults of adjacent steps."""

    def test_errors_proto_states_the_order_these_tests_pin(self) -> None:
        text = " ".join(
            line.strip().lstrip("/").strip() for line in (ROOT / "proto/dizhu/v1/errors.proto").read_text().splitlines()
        )
        positions = [text.find(step) for step in FAULT_ORDER]
        assert -1 not in positions, [step for step, at in zip(FAULT_ORDER, positions, strict=True) if at == -1]
        assert positions == sorted(positions)

    async def test_0_the_rate_limit_wins_over_a_malformed_request(self, store: TableStore) -> None:
        referee = await create_server(ServerConfig(address="127.0.0.1:0", limits="on", rate_limit=0.001), store)
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{referee.port}") as channel:
                tables = table_service_pb2_grpc.TableServiceStub(channel)
                await invalid(tables.GetTable(pb.GetTableRequest(table_id="has space")), "table_id")
                await refused(
                    tables.GetTable(pb.GetTableRequest(table_id="has space")),
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    "RATE_LIMITED",
                )
        finally:
            await referee.stop(0)

    async def test_3_a_remembered_answer_wins_over_a_card_of_another_deck(
        self, tables: TableStub, table: Table
    ) -> None:
        await tables.Bid(bid_request(table, 1, 1, request_id="answered"), metadata=table.seat(0))
        second_deck = card(cards_pb2.RANK_ACE, cards_pb2.SUIT_SPADES, copy=1)
        await refused(
            tables.Play(play_request(table, 2, [second_deck], request_id="answered"), metadata=table.seat(0)),
            grpc.StatusCode.INVALID_ARGUMENT,
            "REQUEST_ID_REUSED",
        )

    async def test_3_a_remembered_answer_wins_over_a_closed_table(self, tables: TableStub, table: Table) -> None:
        request = bid_request(table, 1, 1, request_id="before-closing")
        answered = await tables.Bid(request, metadata=table.seat(0))
        await tables.CloseTable(_close(table), metadata=table.creator)
        assert await tables.Bid(request, metadata=table.seat(0)) == answered

    async def test_5_no_token_wins_over_a_closed_table(self, tables: TableStub, table: Table) -> None:
        closed = await tables.CloseTable(_close(table), metadata=table.creator)
        await refused(
            tables.Bid(bid_request(table, closed.table.version, 1)), grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED"
        )

    async def test_5_the_creator_acting_for_a_seat_wins_over_a_closed_table(
        self, tables: TableStub, table: Table
    ) -> None:
        closed = await tables.CloseTable(_close(table), metadata=table.creator)
        await refused(
            tables.Bid(bid_request(table, closed.table.version, 1), metadata=table.creator),
            grpc.StatusCode.PERMISSION_DENIED,
            "PERMISSION_DENIED",
        )

    async def test_5_a_stale_version_wins_over_the_wrong_phase(self, tables: TableStub, table: Table) -> None:
        playing = await bid_to_play(tables, table)
        await refused(
            tables.Bid(bid_request(table, playing.version - 1, 0), metadata=table.seat(0)), ABORTED, "STALE_STATE"
        )

    async def test_5_the_wrong_phase_wins_over_the_turn(self, tables: TableStub, table: Table) -> None:
        playing = await bid_to_play(tables, table)  # seat 0 leads: seat 2 is not to act either
        info = await refused(
            tables.Bid(bid_request(table, playing.version, 0), metadata=table.seat(2)), FAILED, "WRONG_PHASE"
        )
        assert info.metadata["phase"] == "PHASE_PLAY"

    async def test_6_the_turn_wins_over_the_bid_being_too_low(self, tables: TableStub, table: Table) -> None:
        first = await tables.Bid(bid_request(table, 1, 2), metadata=table.seat(0))
        assert first.table.turn_seat == 1
        info = await refused(
            tables.Bid(bid_request(table, first.table.version, 1), metadata=table.seat(2)), FAILED, "NOT_YOUR_TURN"
        )
        assert info.metadata["turn_seat"] == "1"

    async def test_6_the_turn_wins_over_cards_not_in_hand(self, tables: TableStub, table: Table) -> None:
        playing = await bid_to_play(tables, table)
        await refused(
            tables.Play(play_request(table, playing.version, [playing.your_hand[0]]), metadata=table.seat(1)),
            FAILED,
            "NOT_YOUR_TURN",
        )

    async def test_6_the_turn_wins_over_a_pass_by_the_leader(self, tables: TableStub, table: Table) -> None:
        playing = await bid_to_play(tables, table)
        led = await tables.Play(play_request(table, playing.version, [playing.your_hand[0]]), metadata=table.seat(0))
        # Seat 2 passing is no fault of its own but for the turn (seat 1 is to act).
        await refused(
            tables.Play(play_request(table, led.table.version, []), metadata=table.seat(2)), FAILED, "NOT_YOUR_TURN"
        )

    async def test_6_an_illegal_combination_wins_over_not_beating(self, tables: TableStub, table: Table) -> None:
        playing = await bid_to_play(tables, table)
        led = await tables.Play(play_request(table, playing.version, [playing.your_hand[-1]]), metadata=table.seat(0))
        follower = await view(tables, table, 1)
        low = follower.your_hand[0]
        other = next(c for c in follower.your_hand if c.rank not in (low.rank, *JOKERS))
        info = await refused(
            tables.Play(play_request(table, led.table.version, [low, other]), metadata=table.seat(1)),
            grpc.StatusCode.INVALID_ARGUMENT,
            "ILLEGAL_COMBINATION",
        )
        assert info.metadata["classify_reason"] == "NOT_A_COMBINATION"


# -- a full Redis, of every version --------------------------------------------------------


@pytest.mark.parametrize("version", REDIS_VERSIONS, ids=[f"redis{v}" for v in REDIS_VERSIONS])
async def test_a_change_redis_has_no_memory_for_is_store_full_whatever_the_redis_version(version: str) -> None:
    # Redis 6.2 and 7 word the refusal differently: both must read as STORE_FULL, not INTERNAL.
    async with referee_over_its_own_redis(redis_server_binary(version)) as own:
        table = await create_table(own.tables, THREE, seeds=[SEED], first_dealer=0)
        await own.client.config_set("maxmemory-policy", "noeviction")
        await own.client.config_set("maxmemory", int((await own.client.info("memory"))["used_memory"]) // 2)
        await refused(
            own.tables.Bid(bid_request(table, 1, 1), metadata=table.seat(0)),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "STORE_FULL",
            table_id=table.table_id,
        )
        await own.client.config_set("maxmemory", 0)
        assert (await view(own.tables, table)).version == 1


class TestTheClockIsToldOfEveryDeadline:
    """The clock finds due tables through an index beside the tables: every change re-indexes."""

    async def test_a_move_indexes_the_next_deadline_and_closing_forgets_the_table(
        self, tables: TableStub, store: TableStore, redis_client: redis.asyncio.Redis
    ) -> None:
        clock = table_pb2.ClockSettings()
        clock.decision_time.FromSeconds(600)
        clock.first_decision_time.FromSeconds(900)
        table = await create_table(tables, THREE, seeds=[SEED], first_dealer=0, clock_settings=clock)
        whenever = 2**62
        first = table.created.table.turn_deadline.ToMilliseconds()
        assert await store.indexes.due_tables(whenever) == [(table.table_id, first)]
        moved = await tables.Bid(
            pb.BidRequest(table_id=table.table_id, request_id=rid(), expected_version=1, amount=1),
            metadata=table.seat(0),
        )
        second = moved.table.turn_deadline.ToMilliseconds()
        assert second < first  # a decision of 600 s, begun after the first of 900 s
        assert await store.indexes.due_tables(whenever) == [(table.table_id, second)]
        versions = index_keys("dizhu", index_shard(table.table_id)).versions  # the table's index shard
        assert await redis_client.hexists(versions, table.table_id)
        await tables.CloseTable(pb.CloseTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.creator)
        assert await store.indexes.due_tables(whenever) == []
        # Forgotten for good: not even the version it was indexed at is kept.
        assert not await redis_client.hexists(versions, table.table_id)


class TestAnAnswerShowsWhoIsConnected:
    async def test_the_seat_that_acts_is_connected_in_its_own_answer(self, tables: TableStub) -> None:
        table = await create_table(tables, THREE, seeds=[SEED], first_dealer=0)
        assert [seat.connected for seat in table.created.table.seats] == [False, False, False]
        moved = await tables.Bid(
            pb.BidRequest(table_id=table.table_id, request_id=rid(), expected_version=1, amount=1),
            metadata=table.seat(0),
        )
        assert [seat.connected for seat in moved.table.seats] == [True, False, False]
