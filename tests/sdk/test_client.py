"""TableClient against a real referee: tokens, versions, errors; and its retry loop with a fake stub."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from dizhu.client import (
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
from dizhu.v1 import cards_pb2, table_pb2, table_service_pb2


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


class _Flaky:
    """A stub method failing ``failures`` times with ``code``, then answering; records each request."""

    def __init__(self, failures: int, code: grpc.StatusCode) -> None:
        self.failures = failures
        self.code = code
        self.requests: list[Any] = []

    async def __call__(self, request: Any, *, metadata: Any, timeout: float) -> Any:
        self.requests.append(request)
        if len(self.requests) <= self.failures:
            raise grpc.aio.AioRpcError(self.code, grpc.aio.Metadata(), grpc.aio.Metadata(), details="down")
        return table_service_pb2.BidResponse(table=table_pb2.TableView(table_id="t", version=8))


class TestRetries:
    @pytest.mark.parametrize("code", [grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED])
    async def test_transient_failures_retry_the_same_request(self, code: grpc.StatusCode) -> None:
        client = TableClient("127.0.0.1:1", table_id="t", token="tok", retry=RetryPolicy(initial_delay_s=0.001))
        flaky = _Flaky(2, code)
        client._tables = type("Stub", (), {"Bid": flaky})()
        client.version = 7
        view = await client.bid(2)
        assert view.version == 8
        assert client.version == 8
        assert len(flaky.requests) == 3
        assert len({request.request_id for request in flaky.requests}) == 1
        assert flaky.requests[0].expected_version == 7
        await client.close()

    async def test_retries_give_up_after_the_policy_s_attempts(self) -> None:
        client = TableClient("127.0.0.1:1", table_id="t", retry=RetryPolicy(attempts=3, initial_delay_s=0.001))
        flaky = _Flaky(10, grpc.StatusCode.UNAVAILABLE)
        client._tables = type("Stub", (), {"Bid": flaky})()
        with pytest.raises(Unavailable):
            await client.bid(1, expected_version=1)
        assert len(flaky.requests) == 3
        await client.close()

    async def test_refusals_are_not_retried(self) -> None:
        client = TableClient("127.0.0.1:1", table_id="t", retry=RetryPolicy(initial_delay_s=0.001))
        flaky = _Flaky(10, grpc.StatusCode.FAILED_PRECONDITION)
        client._tables = type("Stub", (), {"Bid": flaky})()
        with pytest.raises(Exception, match="FAILED_PRECONDITION"):
            await client.bid(1, expected_version=1)
        assert len(flaky.requests) == 1
        await client.close()
