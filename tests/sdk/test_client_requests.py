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
from google.protobuf import duration_pb2

from dizhu.client import (
    CHANNEL_OPTIONS,
    InvalidArgument,
    RetryPolicy,
    StaleState,
    TableClient,
    Unauthenticated,
    WrongPhase,
    new_request_id,
)
from dizhu.client.cards import NotationError, parse_cards, pick, rank_symbol
from dizhu.v1 import cards_pb2, table_pb2, table_service_pb2

API_KEY = "k" * 32
SEED = bytes(range(32))


class _Sent(grpc.aio.UnaryUnaryClientInterceptor):
    """Every call a channel makes: the method, the request's bytes read back, its metadata (and
    in ``deadlines``, the method and the timeout it was given)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any, dict[str, str]]] = []
        self.deadlines: list[tuple[str, float | None]] = []

    async def intercept_unary_unary(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        method = client_call_details.method
        name = (method.decode() if isinstance(method, bytes) else method).rsplit("/", 1)[-1]
        metadata = dict(client_call_details.metadata or ())
        self.calls.append((name, type(request).FromString(request.SerializeToString()), metadata))
        self.deadlines.append((name, client_call_details.timeout))
        return await continuation(client_call_details, request)

    def last(self, method: str) -> tuple[Any, dict[str, str]]:
        request, metadata = next((r, m) for name, r, m in reversed(self.calls) if name == method)
        return request, metadata

    def sent(self, method: str) -> int:
        """How many ``method`` calls were made so far."""
        return sum(name == method for name, _, _ in self.calls)


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
        for _ in range(2):
            await TableClient(channel).create_table()
        page = await lobby.list_tables(page_size=1)
        assert page.next_page_token  # a second page to ask for
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

    async def test_notation_is_picked_from_the_hand_and_a_pass_plays_no_cards_at_the_version_given_or_seen(
        self, recorded: Any
    ) -> None:
        channel, sent = recorded
        creator = TableClient(channel)
        created = await creator.create_table(player_names=["a", "b", "c"], first_dealer=0, seeds=[SEED])
        assert list(sent.last("CreateTable")[0].seeds) == [SEED]
        seats = [creator.for_seat(token.token) for token in created.seat_tokens]
        view = await seats[0].get()
        landlord = seats[view.turn_seat]
        await landlord.get()
        hand = list((await landlord.bid(3)).your_hand)
        # A rank whose lowest card in the hand is not the lowest of the deck (the seed deals one):
        # a bare rank names the hand's card, not the one the notation alone would.
        card = next(card for card in hand if pick(hand, rank_symbol(card.rank)) != parse_cards(rank_symbol(card.rank)))
        with pytest.raises(InvalidArgument) as refused:
            await landlord.play("3 3 3 3 3")
        assert (refused.value.code, refused.value.message) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            str(refused.value.__cause__),
        )
        played = await landlord.play(rank_symbol(card.rank))
        request, _ = sent.last("Play")
        assert list(request.cards) == pick(hand, rank_symbol(card.rank))  # the hand's own card, suit and all
        follower = seats[played.table.turn_seat]
        await follower.get()
        with pytest.raises(StaleState):
            await follower.pass_(expected_version=played.table.version - 1)
        assert sent.last("Play")[0].expected_version == played.table.version - 1
        answer = await follower.pass_()
        request, _ = sent.last("Play")
        assert (list(request.cards), request.expected_version) == ([], played.table.version)
        assert answer.table.version > played.table.version
        await creator.close_table()

    async def test_notation_with_no_hand_in_view_is_read_with_the_tables_decks_and_sent_only_if_it_reads(
        self, recorded: Any
    ) -> None:
        channel, sent = recorded
        # A seat of a table still waiting for players holds no cards: its notation is parsed, not
        # picked from a hand, with two decks for 4p (eight threes read, nine do not) and one for 3p.
        for variant, readable, unreadable in (("3p", "3 3 3 3", "3 3 3 3 3"), ("4p", "3 " * 8, "3 " * 9)):
            creator = TableClient(channel)
            created = await creator.create_table(variant=variant, player_names=["a"])
            seat = creator.for_seat(created.seat_tokens[0].token)
            view = await seat.get()
            assert (view.phase, list(view.your_hand)) == (table_pb2.PHASE_WAITING_FOR_PLAYERS, [])
            with pytest.raises(InvalidArgument) as unread:
                await seat.play(unreadable)
            assert isinstance(unread.value.__cause__, NotationError)
            assert sent.sent("Play") == 0, variant
            with pytest.raises(WrongPhase):  # the referee's refusal: no round is played yet
                await seat.play(readable)
            request, _ = sent.last("Play")
            assert len(request.cards) == len(readable.split()), variant
            sent.calls.clear()
            viewless = creator.for_seat(created.seat_tokens[0].token)  # no view at all yet: read as 3p
            with pytest.raises(InvalidArgument):
                await viewless.play("3 3 3 3 3")
            assert sent.sent("Play") == 0
            await creator.close_table()


class TestCreateTable:
    async def test_by_default_it_asks_for_one_three_player_round_dealt_at_once_without_spring_or_clock(
        self, recorded: Any
    ) -> None:
        channel, sent = recorded
        creator = TableClient(channel)
        await creator.create_table()
        request, metadata = sent.last("CreateTable")
        assert request.settings == table_pb2.TableSettings(
            variant=cards_pb2.VARIANT_THREE_PLAYER,
            round_limit=1,
            next_round=table_pb2.NEXT_ROUND_AUTOMATIC,
            house_rules=table_pb2.HouseRules(spring=False),
        )
        assert not request.settings.HasField("clock")
        assert (list(request.seeds), list(request.player_names)) == ([], [])
        assert 16 <= len(request.request_id) <= 64
        assert "x-api-key" not in metadata
        await creator.close_table()

    async def test_the_keywords_as_sent(self, recorded: Any) -> None:
        channel, sent = recorded
        creator = TableClient(channel)
        created = await creator.create_table(
            variant="4p",
            round_limit=0,
            next_round=table_pb2.NEXT_ROUND_WHEN_ALL_SETTLED,
            spring=True,
            first_dealer=2,
            max_redeals=0,
            seeds=[SEED],
            player_names=["a"],
        )
        request, _ = sent.last("CreateTable")
        expected = table_pb2.TableSettings(
            variant=cards_pb2.VARIANT_FOUR_PLAYER,
            round_limit=0,
            next_round=table_pb2.NEXT_ROUND_WHEN_ALL_SETTLED,
            house_rules=table_pb2.HouseRules(spring=True),
            first_dealer=2,
            max_redeals=0,
        )
        assert request.settings == expected
        assert request.settings.HasField("max_redeals")
        assert (list(request.seeds), list(request.player_names)) == ([SEED], ["a"])
        assert created.table.settings == expected
        await creator.close_table()

    async def test_a_clock_by_default_plays_for_a_seat_out_of_time_and_has_no_first_time_nor_bank_of_its_own(
        self, recorded: Any
    ) -> None:
        channel, sent = recorded
        creator = TableClient(channel)
        created = await creator.create_table(decision_time=3)
        request, _ = sent.last("CreateTable")
        assert request.settings.clock == table_pb2.ClockSettings(
            decision_time=duration_pb2.Duration(seconds=3), timeout_policy=table_pb2.TIMEOUT_POLICY_AUTO_PLAY
        )
        assert not request.settings.clock.HasField("first_decision_time")
        assert not request.settings.clock.HasField("time_bank")
        assert created.table.settings.clock.timeout_policy == table_pb2.TIMEOUT_POLICY_AUTO_PLAY
        await creator.close_table()

    @pytest.mark.parametrize("clockless", [{"first_decision_time": 5}, {"time_bank": 5}])
    async def test_a_first_decision_time_or_a_time_bank_without_a_clock_is_refused_before_any_call(
        self, recorded: Any, clockless: dict[str, float]
    ) -> None:
        channel, sent = recorded
        with pytest.raises(ValueError, match="need a decision_time") as refused:
            await TableClient(channel).create_table(**clockless)
        assert str(refused.value) == "first_decision_time and time_bank need a decision_time (the clock is off)"
        assert sent.calls == []


class TestDeadlines:
    async def test_every_call_carries_the_policys_deadline(self, recorded: Any) -> None:
        channel, sent = recorded
        creator = TableClient(channel, retry=RetryPolicy(timeout_s=7.5))
        created = await creator.create_table(player_names=["a"])
        seat = creator.for_seat(created.seat_tokens[0].token)
        await seat.get()
        await seat.list_tables()
        await seat.classify("3")
        await creator.close_table()
        assert sent.deadlines == [
            ("CreateTable", 7.5),
            ("GetTable", 7.5),
            ("ListTables", 7.5),
            ("Classify", 7.5),
            ("CloseTable", 7.5),
        ]


class TestTheViewKept:
    async def test_a_view_of_the_version_already_seen_replaces_the_one_kept(self, recorded: Any) -> None:
        channel, _ = recorded
        creator = TableClient(channel)
        created = await creator.create_table(player_names=["a", "b", "c"])
        assert creator.view == created.table
        assert not created.table.seats[0].connected
        # Seat 0's call makes it present: no change to the table, so no new version.
        await creator.for_seat(created.seat_tokens[0].token).get()
        again = await creator.get()
        assert again.version == created.table.version
        assert again.seats[0].connected
        assert (creator.view, creator.version) == (again, again.version)
        await creator.close_table()


class TestTheClientsState:
    async def test_a_new_client_has_seen_no_table_so_its_decisions_name_no_version(self, recorded: Any) -> None:
        channel, sent = recorded
        creator = TableClient(channel)
        assert (creator.version, creator.view, creator.creator_token, creator.seat) == (0, None, None, None)
        created = await creator.create_table(player_names=["a", "b", "c"], first_dealer=0)
        bidder = creator.for_seat(created.seat_tokens[created.table.turn_seat].token)
        assert (bidder.version, bidder.view) == (0, None)
        with pytest.raises(InvalidArgument, match="expected_version"):  # the referee wants the version seen
            await bidder.bid(3)
        assert sent.last("Bid")[0].expected_version == 0
        view = await bidder.get()
        assert (await bidder.bid(3)).version > view.version
        await creator.close_table()

    async def test_close_closes_the_channel_the_client_opened_and_only_that_one(self, target: str) -> None:
        async with TableClient(target) as owner:
            await owner.list_tables()
        with pytest.raises(grpc.aio.UsageError):
            await owner.list_tables()
        channel = grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS)
        async with TableClient(channel) as guest:
            await guest.list_tables()
        assert (await TableClient(channel).list_tables()) is not None  # still open
        await channel.close()

    async def test_a_call_on_no_table_is_refused_before_it_is_sent(self, recorded: Any) -> None:
        channel, sent = recorded
        for call in (TableClient(channel).get(), TableClient(channel).watch().__anext__()):
            with pytest.raises(ValueError, match="no table yet") as refused:
                await call
            assert str(refused.value) == "no table yet: create_table(), join() or pass table_id="
        assert sent.calls == []


class TestAnOlderAnswer:
    async def test_an_answer_repeated_for_a_request_id_leaves_the_newer_view_kept(self, recorded: Any) -> None:
        channel, _ = recorded
        creator = TableClient(channel)
        request_id = new_request_id()
        created = await creator.create_table(player_names=["a", "b", "c"], first_dealer=0, request_id=request_id)
        bidder = creator.for_seat(created.seat_tokens[created.table.turn_seat].token)
        await bidder.get()
        await bidder.bid(3)
        newer = await creator.get()
        assert newer.version > created.table.version
        again = await creator.create_table(player_names=["a", "b", "c"], first_dealer=0, request_id=request_id)
        assert again.table == created.table  # the first answer, as it was
        assert (creator.view, creator.version) == (newer, newer.version)
        await creator.close_table()
