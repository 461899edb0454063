"""What TableClient sends a real referee: each request as it left, and exactly the credential it needs.

A bearer token goes only with the calls that act for, or read as, its holder; the public calls
(JoinTable, ListTables, the RulesService helpers) carry none, so a seat's token reaches no
proxy or log that has no use for it. The rules helpers parse notation with the variant asked
for (two decks for 4p), else the table's.
"""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from dizhu.client import CHANNEL_OPTIONS, InvalidArgument, RetryPolicy, TableClient, Unauthenticated
from dizhu.client.cards import NotationError, format_cards
from dizhu.v1 import cards_pb2, table_service_pb2

API_KEY = "k" * 32


class _Sent(grpc.aio.UnaryUnaryClientInterceptor):
    """Every call a channel makes: the method, the request's bytes read back, its metadata."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any, dict[str, str]]] = []

    async def intercept_unary_unary(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        method = client_call_details.method
        name = (method.decode() if isinstance(method, bytes) else method).rsplit("/", 1)[-1]
        metadata = dict(client_call_details.metadata or ())
        self.calls.append((name, type(request).FromString(request.SerializeToString()), metadata))
        return await continuation(client_call_details, request)

    def last(self, method: str) -> tuple[Any, dict[str, str]]:
        request, metadata = next((r, m) for name, r, m in reversed(self.calls) if name == method)
        return request, metadata


@pytest.fixture
async def recorded(target: str) -> Any:
    sent = _Sent()
    channel = grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS, interceptors=[sent])
    yield channel, sent
    await channel.close()


def _bearer(metadata: dict[str, str]) -> str | None:
    value = metadata.get("authorization")
    return value.removeprefix("Bearer ") if value is not None else None


class TestCredentials:
    async def test_each_call_carries_the_token_it_needs_and_the_public_ones_none(self, recorded: Any) -> None:
        channel, sent = recorded
        creator = TableClient(channel, api_key=API_KEY)
        created = await creator.create_table(player_names=["a", "b"])
        _, metadata = sent.last("CreateTable")
        assert metadata.get("x-api-key") == API_KEY
        assert _bearer(metadata) is None
        seat = creator.for_seat(created.seat_tokens[0].token)
        await seat.get()
        assert _bearer(sent.last("GetTable")[1]) == created.seat_tokens[0].token
        for call in (seat.list_tables(), seat.classify("3"), seat.legal_moves("3 4"), seat.compare("3", "4")):
            await call
        for method in ("ListTables", "Classify", "ListLegalMoves", "Compare"):
            assert _bearer(sent.last(method)[1]) is None, method
        joiner = TableClient(channel, table_id=creator.table_id, token="a-token-of-another-table")
        await joiner.join("c")
        assert _bearer(sent.last("JoinTable")[1]) is None
        assert joiner.token != "a-token-of-another-table"
        closed = await creator.close_table()
        assert _bearer(sent.last("CloseTable")[1]) == creator.creator_token
        assert closed.table.table_id == creator.table_id

    async def test_a_seat_client_shares_the_channel_table_and_retry_policy(self, recorded: Any) -> None:
        channel, _ = recorded
        policy = RetryPolicy(attempts=2)
        creator = TableClient(channel, retry=policy)
        created = await creator.create_table(player_names=["a"])
        seat = creator.for_seat(created.seat_tokens[0].token)
        assert (seat.channel, seat.table_id, seat.retry) == (channel, creator.table_id, policy)
        assert creator.for_seat("t", table_id="other").table_id == "other"


class TestRequests:
    async def test_list_tables_asks_for_the_page_given_and_by_default_for_none_in_particular(
        self, recorded: Any
    ) -> None:
        channel, sent = recorded
        lobby = TableClient(channel)
        await lobby.list_tables()
        assert sent.last("ListTables")[0] == table_service_pb2.ListTablesRequest()
        page = await lobby.list_tables(page_size=1)
        await lobby.list_tables(page_size=3, page_token=page.next_page_token)
        assert sent.last("ListTables")[0] == table_service_pb2.ListTablesRequest(
            page_size=3, page_token=page.next_page_token
        )

    async def test_join_takes_the_seat_and_table_asked_for(self, recorded: Any) -> None:
        channel, sent = recorded
        creator = TableClient(channel)
        await creator.create_table()
        joiner = TableClient(channel)
        answer = await joiner.join("d", table_id=creator.table_id, seat=2)
        request, _ = sent.last("JoinTable")
        assert (request.table_id, request.seat, request.player_name) == (creator.table_id, 2, "d")
        assert answer.table.your_seat == 2
        assert (joiner.table_id, joiner.seat, joiner.token) == (creator.table_id, 2, answer.seat_token)
        await creator.close_table()


class TestRulesHelpersReadTheVariant:
    async def test_notation_is_read_with_two_decks_for_4p_asked_or_the_tables(self, recorded: Any) -> None:
        channel, sent = recorded
        three = TableClient(channel)  # no table yet: three-player
        six_threes = "3 3 3 3 3 3"  # only two decks hold six threes
        with pytest.raises(NotationError):
            await three.classify(six_threes)
        with pytest.raises(NotationError):
            await three.classify("3 " * 9, variant="4p")  # nor two decks nine
        bomb = await three.classify(six_threes, variant="4p")
        assert bomb.combinations[0].kind == cards_pb2.COMBINATION_KIND_BOMB
        assert sent.last("Classify")[0].variant == cards_pb2.VARIANT_FOUR_PLAYER
        moves = await three.legal_moves("3 3 3 3 3 3 4", "4 4 4 4 4", variant="4p")
        assert [len(move.cards) for move in moves.moves] == [6]
        request, _ = sent.last("ListLegalMoves")
        assert (request.variant, len(request.hand.cards), len(request.to_beat.cards)) == (
            cards_pb2.VARIANT_FOUR_PLAYER,
            7,
            5,
        )
        compared = await three.compare("4 4 4 4 4", six_threes, variant="4p")
        assert compared.beats
        request, _ = sent.last("Compare")
        assert (len(request.a.cards), len(request.b.cards)) == (5, 6)

        four = TableClient(channel)
        await four.create_table(variant="4p")
        assert (await four.classify(six_threes)).combinations[0].kind == cards_pb2.COMBINATION_KIND_BOMB
        assert (await four.compare("4 4 4 4 4", six_threes)).beats
        assert [len(move.cards) for move in (await four.legal_moves(six_threes, "4 4 4 4 4")).moves] == [6]
        with pytest.raises(NotationError):
            await four.classify(six_threes, variant="3p")
        await four.close_table()


class TestSeatCalls:
    async def test_leaving_frees_the_seat_and_revokes_the_token_it_was_called_with(self, recorded: Any) -> None:
        channel, sent = recorded
        creator = TableClient(channel)
        created = await creator.create_table(player_names=["a", "b"])
        seat = creator.for_seat(created.seat_tokens[1].token)
        view = await seat.leave()
        request, metadata = sent.last("LeaveTable")
        assert (request.table_id, _bearer(metadata)) == (creator.table_id, created.seat_tokens[1].token)
        assert request.request_id
        assert not view.seats[1].occupied
        assert (seat.view, seat.version) == (view, view.version)
        with pytest.raises(Unauthenticated):
            await seat.get()

    async def test_notation_is_picked_from_the_hand_and_a_pass_plays_no_cards_at_the_version_seen(
        self, recorded: Any
    ) -> None:
        channel, sent = recorded
        creator = TableClient(channel)
        created = await creator.create_table(player_names=["a", "b", "c"], first_dealer=0)
        seats = [creator.for_seat(token.token) for token in created.seat_tokens]
        view = await seats[0].get()
        landlord = seats[view.turn_seat]
        await landlord.get()
        hand = list((await landlord.bid(3)).your_hand)
        lowest = min(hand, key=lambda card: card.rank)
        with pytest.raises(InvalidArgument) as refused:
            await landlord.play("3 3 3 3 3")
        assert (refused.value.code, refused.value.message) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            str(refused.value.__cause__),
        )
        played = await landlord.play(format_cards([lowest]))
        request, _ = sent.last("Play")
        assert list(request.cards) == [lowest]  # the hand's own card, suit and all
        follower = seats[played.table.turn_seat]
        await follower.get()
        answer = await follower.pass_()
        request, _ = sent.last("Play")
        assert (list(request.cards), request.expected_version) == ([], played.table.version)
        assert answer.table.version > played.table.version
        await creator.close_table()
