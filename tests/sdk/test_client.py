"""TableClient against a real referee: tokens, versions, errors; retries against late, absent, refusing referees."""

from __future__ import annotations

import asyncio
import socket
import uuid
from typing import Any

import grpc
import pytest
import redis.asyncio

from dizhu.client import (
    CHANNEL_OPTIONS,
    InvalidArgument,
    NotYourTurn,
    PermissionDenied,
    RetryPolicy,
    StaleState,
    TableClient,
    TableNotFound,
    Unavailable,
)
from dizhu.client.cards import format_cards
from dizhu.testing import local_referee
from dizhu.v1 import cards_pb2, table_pb2


async def _table(target: str, **settings: Any) -> tuple[TableClient, list[TableClient]]:
    creator = TableClient(target)
    created = await creator.create_table(player_names=["a", "b", "c"], **settings)
    return creator, [creator.for_seat(token.token) for token in created.seat_tokens]


class TestTableClient:
    async def test_a_seat_sees_its_hand_and_a_spectator_does_not(self, target: str) -> None:
        creator, seats = await _table(target)
        view = await seats[0].get()
        assert view.your_seat == 0
        assert len(view.your_hand) == 17
        assert seats[0].seat == 0
        spectator = TableClient(creator.channel, table_id=creator.table_id)
        assert not (await spectator.get()).your_hand
        await creator.close()

    async def test_list_tables_pages_to_a_table_just_created(self, target: str) -> None:
        creator = TableClient(target)
        await creator.create_table(player_names=["a"])
        lobby = TableClient(target)
        listed: list[str] = []
        token = ""
        while True:
            page = await lobby.list_tables(page_size=50, page_token=token)
            listed += [summary.table_id for summary in page.tables]
            if not (token := page.next_page_token):
                break
        assert creator.table_id in listed
        await lobby.close()
        await creator.close()

    async def test_bidding_out_of_turn_raises_not_your_turn(self, target: str) -> None:
        creator, seats = await _table(target)
        view = await seats[0].get()
        other = seats[(view.turn_seat + 1) % 3]
        await other.get()
        with pytest.raises(NotYourTurn) as caught:
            await other.bid(1)
        assert caught.value.metadata["turn_seat"] == str(view.turn_seat)
        await creator.close()

    async def test_an_old_version_raises_stale_state(self, target: str) -> None:
        creator, seats = await _table(target)
        view = await seats[0].get()
        first = seats[view.turn_seat]
        await first.get()
        await first.bid(0)
        with pytest.raises(StaleState):
            await seats[(view.turn_seat + 1) % 3].bid(0, expected_version=view.version)
        await creator.close()

    async def test_plays_by_notation_and_rules_helpers(self, target: str) -> None:
        creator, seats = await _table(target, first_dealer=0)
        view = await seats[0].get()
        bidder = seats[view.turn_seat]
        await bidder.get()
        after = await bidder.bid(3)
        assert after.landlord_seat == view.turn_seat
        hand = list(after.your_hand)
        lowest = format_cards(hand).split()[0]
        response = await bidder.play(lowest)
        assert response.combination.kind == cards_pb2.COMBINATION_KIND_SINGLE
        assert len(response.table.your_hand) == 19
        classification = await creator.classify("3 3 3 4")
        assert classification.combinations[0].kind == cards_pb2.COMBINATION_KIND_TRIO_WITH_SINGLE
        legal = await creator.legal_moves("3 4 5 6 7", "2")
        assert legal.can_pass
        assert not legal.moves
        assert (await creator.compare("3", "BJ")).beats
        await creator.close()

    async def test_creator_may_close_and_a_seat_may_not(self, target: str) -> None:
        creator, seats = await _table(target)
        with pytest.raises(PermissionDenied):
            await seats[0].close_table()
        closed = await creator.close_table()
        assert closed.table.phase == table_pb2.PHASE_CLOSED
        await creator.close()

    async def test_unknown_table(self, target: str) -> None:
        async with TableClient(target, table_id="nope") as client:
            with pytest.raises(TableNotFound):
                await client.get()

    async def test_bad_notation_is_an_invalid_argument(self, target: str) -> None:
        creator, seats = await _table(target)
        await seats[0].get()
        with pytest.raises(InvalidArgument):
            await seats[0].play("3 3 3 3 3")
        await creator.close()


class _Recorder(grpc.aio.UnaryUnaryClientInterceptor):
    """Notes every attempt a real channel makes: the method, the request as sent and the status it got.

    The request is kept as the bytes of that attempt (read back into a message): a client that
    changed the same request object between attempts would otherwise show its last form for all.
    """

    def __init__(self) -> None:
        self.attempts: list[tuple[str, Any, grpc.StatusCode]] = []

    async def intercept_unary_unary(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        sent = type(request).FromString(request.SerializeToString())
        call = await continuation(client_call_details, request)
        method = client_call_details.method
        name = (method.decode() if isinstance(method, bytes) else method).rsplit("/", 1)[-1]
        self.attempts.append((name, sent, await call.code()))
        return call

    def of(self, method: str) -> list[tuple[Any, grpc.StatusCode]]:
        return [(request, code) for name, request, code in self.attempts if name == method]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _recording_channel(target: str) -> tuple[grpc.aio.Channel, _Recorder]:
    recorder = _Recorder()
    return grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS, interceptors=[recorder]), recorder


async def _tables_under(redis_url: str, prefix: str) -> int:
    client = redis.asyncio.Redis.from_url(redis_url)
    try:
        return len([key async for key in client.scan_iter(match=f"{prefix}:*:state")])
    finally:
        await client.aclose()


class TestRetries:
    """The retry policy against real referees: none yet, none at all, one that refuses."""

    async def test_a_call_waits_for_a_referee_starting_late_and_applies_once(self, redis_url: str) -> None:
        port = _free_port()
        prefix = f"retry-{uuid.uuid4().hex[:8]}"
        channel, recorder = _recording_channel(f"127.0.0.1:{port}")
        client = TableClient(channel, retry=RetryPolicy(attempts=40, initial_delay_s=0.02, max_delay_s=0.1))
        creating = asyncio.create_task(client.create_table(player_names=["a", "b", "c"], round_limit=1))
        await asyncio.sleep(0.3)
        assert not creating.done()
        async with local_referee(redis_url=redis_url, key_prefix=prefix, port=port, log_level=None):
            created = await asyncio.wait_for(creating, timeout=15)
            attempts = recorder.of("CreateTable")
            codes = [code for _, code in attempts]
            assert codes[-1] == grpc.StatusCode.OK
            assert len(codes) >= 2
            assert set(codes[:-1]) == {grpc.StatusCode.UNAVAILABLE}
            request_ids = {request.request_id for request, _ in attempts}
            assert len(request_ids) == 1
            assert await _tables_under(redis_url, prefix) == 1
            again = await client.create_table(player_names=["a", "b", "c"], round_limit=1, request_id=request_ids.pop())
            assert again.table_id == created.table_id
            assert again.creator_token == created.creator_token
            assert await _tables_under(redis_url, prefix) == 1
            assert (await client.get()).version == created.table.version
        await channel.close()

    async def test_without_a_referee_the_policy_gives_up_with_a_retryable_error(self) -> None:
        channel, recorder = _recording_channel(f"127.0.0.1:{_free_port()}")
        client = TableClient(channel, retry=RetryPolicy(attempts=3, initial_delay_s=0.01))
        with pytest.raises(Unavailable) as caught:
            await client.create_table(player_names=["a", "b", "c"])
        assert caught.value.retryable
        assert caught.value.reason == "UNAVAILABLE"
        assert caught.value.code == grpc.StatusCode.UNAVAILABLE
        attempts = recorder.of("CreateTable")
        assert [code for _, code in attempts] == [grpc.StatusCode.UNAVAILABLE] * 3
        assert len({request.request_id for request, _ in attempts}) == 1
        await channel.close()

    async def test_a_refusal_is_raised_at_once_not_retried(self, target: str) -> None:
        channel, recorder = _recording_channel(target)
        creator = TableClient(channel, retry=RetryPolicy(initial_delay_s=0.01))
        created = await creator.create_table(player_names=["a", "b", "c"])
        seats = [creator.for_seat(token.token) for token in created.seat_tokens]
        before = await seats[0].get()
        other = seats[(before.turn_seat + 1) % 3]
        await other.get()
        with pytest.raises(NotYourTurn) as caught:
            await other.bid(1)
        assert not caught.value.retryable
        assert caught.value.code == grpc.StatusCode.FAILED_PRECONDITION
        assert [code for _, code in recorder.of("Bid")] == [grpc.StatusCode.FAILED_PRECONDITION]
        assert (await creator.get()).version == before.version
        await channel.close()


class TestCreateTableKeywords:
    async def test_a_table_made_with_the_defaults_plays_one_round_and_closes(self, target: str) -> None:
        from dizhu.client import BotRunner, HeuristicBot

        async with TableClient(target) as creator:
            created = await creator.create_table(player_names=["a", "b", "c"])
            assert created.table.settings.round_limit == 1
            runners = [BotRunner(HeuristicBot(), creator.for_seat(seat.token)) for seat in created.seat_tokens]
            await asyncio.wait_for(asyncio.gather(*(runner.run() for runner in runners)), timeout=120)
            final = await creator.get()
        assert (final.phase, final.close_reason, final.round) == (
            table_pb2.PHASE_CLOSED,
            table_pb2.CLOSE_REASON_ROUND_LIMIT,
            1,
        )

    async def test_clock_settings_are_plain_keywords(self, target: str) -> None:
        import datetime

        async with TableClient(target) as creator:
            created = await creator.create_table(
                decision_time=1.5, time_bank=datetime.timedelta(seconds=20), timeout_policy="forfeit", round_limit=0
            )
        clock = created.table.settings.clock
        assert created.table.settings.round_limit == 0
        assert clock.decision_time.ToMilliseconds() == clock.first_decision_time.ToMilliseconds() == 1500
        assert clock.time_bank.ToMilliseconds() == 20_000
        assert clock.timeout_policy == table_pb2.TIMEOUT_POLICY_FORFEIT

    async def test_every_timeout_policy_of_the_referee_is_named_as_it_names_it(self, target: str) -> None:
        from dizhu.referee.table import TimeoutPolicy
        from dizhu.tournament.config import TIMEOUT_POLICIES

        # The SDK's keyword, the tournament's TOML and a replay record spell a policy alike.
        assert tuple(policy.value for policy in TimeoutPolicy) == TIMEOUT_POLICIES
        async with TableClient(target) as creator:
            for policy in TimeoutPolicy:
                created = await creator.create_table(decision_time=1, timeout_policy=policy.value)
                number = created.table.settings.clock.timeout_policy
                assert table_pb2.TimeoutPolicy.Name(number) == f"TIMEOUT_POLICY_{policy.name}"

    async def test_a_first_decision_time_of_its_own(self, target: str) -> None:
        async with TableClient(target) as creator:
            created = await creator.create_table(decision_time=2, first_decision_time=5)
        clock = created.table.settings.clock
        assert (clock.decision_time.ToMilliseconds(), clock.first_decision_time.ToMilliseconds()) == (2000, 5000)
        assert clock.timeout_policy == table_pb2.TIMEOUT_POLICY_AUTO_PLAY

    @pytest.mark.parametrize(
        "keywords",
        [{"time_bank": 5}, {"first_decision_time": 5}, {"decision_time": 1, "timeout_policy": "sudden-death"}],
        ids=["bank-without-clock", "first-without-clock", "unknown-policy"],
    )
    async def test_clock_keywords_that_make_no_clock_are_refused_before_any_call(
        self, keywords: dict[str, Any]
    ) -> None:
        async with TableClient("127.0.0.1:1") as nowhere:
            with pytest.raises(ValueError, match=r"decision_time|timeout policy"):
                await nowhere.create_table(**keywords)
