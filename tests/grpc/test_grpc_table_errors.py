"""Every refusal of TableService, provoked for real: status code, ErrorInfo reason, domain, metadata.

Tables here are dealt from the fixed ``SEED`` with seat 0 dealing, so the hands are known:
in 3p seat 0 draws the face-up card and bids first; in 4p seat 3 does.
"""

from __future__ import annotations

import grpc
import pytest
import redis.asyncio
import structlog

from dizhu.store import Answer, Change, TableStore
from dizhu.v1 import cards_pb2, table_pb2
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import (
    FOUR,
    SEED,
    THREE,
    Table,
    TableStub,
    bid_request,
    bid_to_play,
    card,
    card_id,
    create_table,
    error_info,
    invalid,
    play_request,
    referee_over_its_own_redis,
    refused,
    rid,
    view,
)

FAILED = grpc.StatusCode.FAILED_PRECONDITION


@pytest.fixture
async def table(tables: TableStub) -> Table:
    """A 3p table in its auction, dealt from SEED; seat 0 is to bid."""
    created = await create_table(tables, THREE, seeds=[SEED], first_dealer=0)
    assert created.created.table.turn_seat == 0
    return created


class TestTurnAndAuctionRefusals:
    async def test_a_seat_bidding_out_of_turn_is_told_whose_turn_it_is(self, tables: TableStub, table: Table) -> None:
        info = await refused(
            tables.Bid(bid_request(table, 1, 1), metadata=table.seat(2)),
            FAILED,
            "NOT_YOUR_TURN",
            table_id=table.table_id,
        )
        assert info.metadata["turn_seat"] == "0"

    async def test_a_bid_not_above_the_highest_is_too_low(self, tables: TableStub, table: Table) -> None:
        first = await tables.Bid(bid_request(table, 1, 2), metadata=table.seat(0))
        assert first.table.turn_seat == 1
        info = await refused(
            tables.Bid(bid_request(table, first.table.version, 2), metadata=table.seat(1)),
            FAILED,
            "BID_TOO_LOW",
            table_id=table.table_id,
        )
        assert info.metadata["highest_bid"] == "2"

    async def test_a_play_during_the_auction_is_in_the_wrong_phase(self, tables: TableStub, table: Table) -> None:
        hand = (await view(tables, table, 0)).your_hand
        info = await refused(
            tables.Play(play_request(table, 1, [hand[0]]), metadata=table.seat(0)),
            FAILED,
            "WRONG_PHASE",
            table_id=table.table_id,
        )
        assert info.metadata["phase"] == "PHASE_AUCTION"

    async def test_a_bid_during_the_play_is_in_the_wrong_phase(self, tables: TableStub, table: Table) -> None:
        playing = await bid_to_play(tables, table)
        info = await refused(
            tables.Bid(bid_request(table, playing.version, 0), metadata=table.seat(0)),
            FAILED,
            "WRONG_PHASE",
            table_id=table.table_id,
        )
        assert info.metadata["phase"] == "PHASE_PLAY"

    async def test_a_stale_expected_version_is_aborted_with_the_current_one(
        self, tables: TableStub, table: Table
    ) -> None:
        first = await tables.Bid(bid_request(table, 1, 1), metadata=table.seat(0))
        info = await refused(
            tables.Bid(bid_request(table, 1, 2), metadata=table.seat(1)),
            grpc.StatusCode.ABORTED,
            "STALE_STATE",
            table_id=table.table_id,
        )
        assert info.metadata["current_version"] == str(first.table.version) == "2"


class TestPlayRefusals:
    async def test_the_leader_passing_must_lead(self, tables: TableStub, table: Table) -> None:
        playing = await bid_to_play(tables, table)
        await refused(
            tables.Play(play_request(table, playing.version, []), metadata=table.seat(0)),
            FAILED,
            "MUST_LEAD",
            table_id=table.table_id,
        )

    async def test_another_seats_card_is_not_in_hand(self, tables: TableStub, table: Table) -> None:
        playing = await bid_to_play(tables, table)
        theirs = (await view(tables, table, 1)).your_hand[0]
        info = await refused(
            tables.Play(play_request(table, playing.version, [theirs]), metadata=table.seat(0)),
            FAILED,
            "CARDS_NOT_IN_HAND",
            table_id=table.table_id,
        )
        assert info.metadata["missing_card_ids"] == str(card_id(theirs))

    async def test_the_same_card_twice_is_not_in_hand_twice(self, tables: TableStub, table: Table) -> None:
        playing = await bid_to_play(tables, table)
        mine = playing.your_hand[0]
        info = await refused(
            tables.Play(play_request(table, playing.version, [mine, mine]), metadata=table.seat(0)),
            FAILED,
            "CARDS_NOT_IN_HAND",
            table_id=table.table_id,
        )
        assert info.metadata["missing_card_ids"] == str(card_id(mine))

    async def test_cards_of_two_ranks_are_an_illegal_combination(self, tables: TableStub, table: Table) -> None:
        playing = await bid_to_play(tables, table)
        low = playing.your_hand[0]
        other = next(c for c in playing.your_hand if c.rank not in (low.rank, *_JOKERS))
        info = await refused(
            tables.Play(play_request(table, playing.version, [low, other]), metadata=table.seat(0)),
            grpc.StatusCode.INVALID_ARGUMENT,
            "ILLEGAL_COMBINATION",
            table_id=table.table_id,
        )
        assert info.metadata["classify_reason"] == "NOT_A_COMBINATION"

    async def test_a_trio_with_a_single_is_not_in_the_four_player_variant(self, tables: TableStub) -> None:
        table = await create_table(tables, FOUR, seeds=[SEED], first_dealer=0)
        playing = await bid_to_play(tables, table)
        seat = playing.landlord_seat
        by_rank: dict[int, list[cards_pb2.Card]] = {}
        for c in playing.your_hand:
            by_rank.setdefault(c.rank, []).append(c)
        trio = next(cards[:3] for cards in by_rank.values() if len(cards) >= 3)
        single = next(cards[0] for rank, cards in by_rank.items() if rank != trio[0].rank)
        info = await refused(
            tables.Play(play_request(table, playing.version, [*trio, single]), metadata=table.seat(seat)),
            grpc.StatusCode.INVALID_ARGUMENT,
            "ILLEGAL_COMBINATION",
            table_id=table.table_id,
        )
        assert info.metadata["classify_reason"] == "NOT_IN_VARIANT"

    async def test_a_lower_single_does_not_beat_and_names_the_play_to_beat(
        self, tables: TableStub, table: Table
    ) -> None:
        playing = await bid_to_play(tables, table)
        top = playing.your_hand[-1]
        led = await tables.Play(play_request(table, playing.version, [top]), metadata=table.seat(0))
        assert led.combination.kind == cards_pb2.COMBINATION_KIND_SINGLE
        follower = await view(tables, table, 1)
        assert follower.turn_seat == 1
        info = await refused(
            tables.Play(play_request(table, follower.version, [follower.your_hand[0]]), metadata=table.seat(1)),
            FAILED,
            "DOES_NOT_BEAT",
            table_id=table.table_id,
        )
        assert info.metadata["to_beat_kind"] == "COMBINATION_KIND_SINGLE"
        assert info.metadata["to_beat_size"] == "1"
        assert info.metadata["to_beat_main_rank"] == cards_pb2.Rank.Name(top.rank)


_JOKERS = (cards_pb2.RANK_BLACK_JOKER, cards_pb2.RANK_RED_JOKER)


class TestTableRefusals:
    async def test_an_unknown_table_is_not_found(self, tables: TableStub) -> None:
        await refused(
            tables.GetTable(pb.GetTableRequest(table_id="no-such-table")), grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND"
        )
        info = await refused(
            tables.Bid(pb.BidRequest(table_id="no-such-table", request_id=rid(), expected_version=1, amount=1)),
            grpc.StatusCode.NOT_FOUND,
            "TABLE_NOT_FOUND",
        )
        assert dict(info.metadata) == {"table_id": "no-such-table"}
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await tables.Bid(pb.BidRequest(table_id="no-such-table", request_id=rid(), expected_version=1, amount=1))
        assert caught.value.details() == "no table no-such-table"

    async def test_creating_or_joining_with_a_request_id_too_short_to_be_a_secret_is_refused(
        self, tables: TableStub
    ) -> None:
        settings = table_pb2.TableSettings(variant=cards_pb2.VARIANT_THREE_PLAYER)
        short = await invalid(
            tables.CreateTable(pb.CreateTableRequest(request_id="c" * 15, settings=settings)), "request_id"
        )
        assert [violation.description for violation in short.field_violations] == [
            "a request id is 16..64 printable ASCII characters from a random source (a UUID4): "
            "it is the secret that fetches this answer again"
        ]
        table = await create_table(tables, THREE, players=2, request_id="c" * 16)
        for too_short in ("j", "j" * 15):
            await invalid(
                tables.JoinTable(pb.JoinTableRequest(table_id=table.table_id, request_id=too_short, player_name="z")),
                "request_id",
            )
        joined = await tables.JoinTable(
            pb.JoinTableRequest(table_id=table.table_id, request_id="j" * 16, player_name="z")
        )
        assert joined.seat == 2

    async def test_joining_a_full_table_finds_it_full(self, tables: TableStub, table: Table) -> None:
        await refused(
            tables.JoinTable(pb.JoinTableRequest(table_id=table.table_id, request_id=rid(), player_name="late")),
            FAILED,
            "TABLE_FULL",
            table_id=table.table_id,
        )

    async def test_joining_a_taken_seat_names_the_seat(self, tables: TableStub) -> None:
        table = await create_table(tables, THREE, players=1)
        info = await refused(
            tables.JoinTable(pb.JoinTableRequest(table_id=table.table_id, request_id=rid(), player_name="eve", seat=0)),
            FAILED,
            "SEAT_TAKEN",
            table_id=table.table_id,
        )
        assert info.metadata["seat"] == "0"

    async def test_a_closed_table_refuses_changes(self, tables: TableStub, table: Table) -> None:
        closed = await tables.CloseTable(
            pb.CloseTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.creator
        )
        assert closed.table.phase == table_pb2.PHASE_CLOSED
        assert closed.table.close_reason == table_pb2.CLOSE_REASON_CLOSED_BY_CREATOR
        assert closed.table.last_settlement.outcome == table_pb2.ROUND_OUTCOME_ABANDONED
        await refused(
            tables.Bid(bid_request(table, closed.table.version, 1), metadata=table.seat(0)),
            FAILED,
            "TABLE_CLOSED",
            table_id=table.table_id,
        )
        await refused(
            tables.LeaveTable(pb.LeaveTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(1)),
            FAILED,
            "TABLE_CLOSED",
        )
        await refused(
            tables.CloseTable(pb.CloseTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.creator),
            FAILED,
            "TABLE_CLOSED",
        )
        assert (await view(tables, table)).phase == table_pb2.PHASE_CLOSED


class TestAuthenticationRefusals:
    async def test_a_bid_without_a_token_is_unauthenticated(self, tables: TableStub, table: Table) -> None:
        await refused(tables.Bid(bid_request(table, 1, 1)), grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED")

    @pytest.mark.parametrize("value", ["Basic abc", "Bearer", "Bearer ", "token-without-scheme"])
    async def test_a_malformed_authorization_is_unauthenticated(
        self, tables: TableStub, table: Table, value: str
    ) -> None:
        metadata = (("authorization", value),)
        await refused(
            tables.Bid(bid_request(table, 1, 1), metadata=metadata), grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED"
        )
        await refused(
            tables.GetTable(pb.GetTableRequest(table_id=table.table_id), metadata=metadata),
            grpc.StatusCode.UNAUTHENTICATED,
            "UNAUTHENTICATED",
        )

    async def test_a_token_of_another_table_is_unauthenticated(self, tables: TableStub, table: Table) -> None:
        other = await create_table(tables, THREE)
        for call in (
            tables.Bid(bid_request(table, 1, 1), metadata=other.seat(0)),
            tables.GetTable(pb.GetTableRequest(table_id=table.table_id), metadata=other.seat(0)),
            tables.CloseTable(pb.CloseTableRequest(table_id=table.table_id, request_id=rid()), metadata=other.creator),
        ):
            await refused(call, grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED", table_id=table.table_id)

    async def test_a_token_revoked_by_leaving_is_unauthenticated(self, tables: TableStub, table: Table) -> None:
        left = await tables.LeaveTable(
            pb.LeaveTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(0)
        )
        assert left.table.phase == table_pb2.PHASE_WAITING_FOR_PLAYERS
        assert not left.table.seats[0].occupied
        await refused(
            tables.Bid(bid_request(table, left.table.version, 1), metadata=table.seat(0)),
            grpc.StatusCode.UNAUTHENTICATED,
            "UNAUTHENTICATED",
        )
        await refused(
            tables.GetTable(pb.GetTableRequest(table_id=table.table_id), metadata=table.seat(0)),
            grpc.StatusCode.UNAUTHENTICATED,
            "UNAUTHENTICATED",
        )

    async def test_the_creator_token_cannot_bid(self, tables: TableStub, table: Table) -> None:
        await refused(
            tables.Bid(bid_request(table, 1, 1), metadata=table.creator),
            grpc.StatusCode.PERMISSION_DENIED,
            "PERMISSION_DENIED",
        )

    async def test_a_seat_token_cannot_close_the_table(self, tables: TableStub, table: Table) -> None:
        await refused(
            tables.CloseTable(pb.CloseTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(0)),
            grpc.StatusCode.PERMISSION_DENIED,
            "PERMISSION_DENIED",
        )


class TestMalformedRequests:
    @pytest.mark.parametrize(
        ("bad", "field"),
        [
            (card(0, cards_pb2.SUIT_CLUBS), "cards[0].rank"),
            (card(16, cards_pb2.SUIT_CLUBS), "cards[0].rank"),
            (card(cards_pb2.RANK_RED_JOKER, cards_pb2.SUIT_HEARTS), "cards[0].suit"),
            (card(cards_pb2.RANK_ACE, cards_pb2.SUIT_JOKER), "cards[0].suit"),
            (card(cards_pb2.RANK_ACE, cards_pb2.SUIT_UNSPECIFIED), "cards[0].suit"),
            (card(cards_pb2.RANK_ACE, cards_pb2.SUIT_SPADES, copy=1), "cards[0].copy"),
        ],
        ids=["rank-0", "rank-16", "joker-with-hearts", "ace-of-jokers", "no-suit", "copy-1-in-3p"],
    )
    async def test_a_non_canonical_card_is_an_invalid_argument(
        self, tables: TableStub, table: Table, bad: cards_pb2.Card, field: str
    ) -> None:
        playing = await bid_to_play(tables, table)
        await invalid(tables.Play(play_request(table, playing.version, [bad]), metadata=table.seat(0)), field)

    async def test_a_bid_of_four_is_an_invalid_argument(self, tables: TableStub, table: Table) -> None:
        await invalid(tables.Bid(bid_request(table, 1, 4), metadata=table.seat(0)), "amount")

    async def test_a_bid_of_four_out_of_turn_is_still_malformed_first(self, tables: TableStub, table: Table) -> None:
        await invalid(tables.Bid(bid_request(table, 1, 4), metadata=table.seat(1)), "amount")

    async def test_a_missing_request_id_is_an_invalid_argument(self, tables: TableStub, table: Table) -> None:
        missing = await invalid(
            tables.Bid(bid_request(table, 1, 1, request_id=""), metadata=table.seat(0)), "request_id"
        )
        assert [violation.description for violation in missing.field_violations] == [
            "every change needs a request_id (a fresh UUID per decision)"
        ]
        await invalid(
            tables.CreateTable(
                pb.CreateTableRequest(settings=table_pb2.TableSettings(variant=cards_pb2.VARIANT_THREE_PLAYER))
            ),
            "request_id",
        )

    async def test_a_request_id_over_64_characters_is_an_invalid_argument(
        self, tables: TableStub, table: Table
    ) -> None:
        long = await invalid(
            tables.Bid(bid_request(table, 1, 1, request_id="r" * 65), metadata=table.seat(0)), "request_id"
        )
        assert [violation.description for violation in long.field_violations] == [
            "a request id is 1..64 printable ASCII characters"
        ]
        applied = await tables.Bid(bid_request(table, 1, 1, request_id="r" * 64), metadata=table.seat(0))
        assert applied.table.version == 2
        # One character is enough for a request id that is no secret.
        passed = await tables.Bid(bid_request(table, 2, 0, request_id="r"), metadata=table.seat(1))
        assert passed.table.version == 3

    async def test_expected_version_zero_on_bid_and_play_is_an_invalid_argument(
        self, tables: TableStub, table: Table
    ) -> None:
        await invalid(tables.Bid(bid_request(table, 0, 1), metadata=table.seat(0)), "expected_version")
        await invalid(tables.Play(play_request(table, 0, []), metadata=table.seat(0)), "expected_version")

    async def test_a_table_id_of_64_characters_is_looked_for_and_one_longer_is_malformed(
        self, tables: TableStub
    ) -> None:
        await refused(
            tables.GetTable(pb.GetTableRequest(table_id="t" * 64)), grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND"
        )
        longer = await invalid(tables.GetTable(pb.GetTableRequest(table_id="t" * 65)), "table_id")
        malformed = await invalid(tables.GetTable(pb.GetTableRequest(table_id="has space")), "table_id")
        assert [v.description for v in [*longer.field_violations, *malformed.field_violations]] == [
            "a table id is at most 64 characters",
            "a table id is 1..64 characters of [A-Za-z0-9._:-]",
        ]

    @pytest.mark.parametrize("table_id", ["", "has space", "x" * 129, "slash/y"])
    async def test_a_malformed_table_id_is_an_invalid_argument(self, tables: TableStub, table_id: str) -> None:
        await invalid(tables.GetTable(pb.GetTableRequest(table_id=table_id)), "table_id")
        await invalid(
            tables.JoinTable(pb.JoinTableRequest(table_id=table_id, request_id=rid(), player_name="x")), "table_id"
        )

    async def test_a_seed_that_is_not_32_bytes_is_an_invalid_argument(self, tables: TableStub) -> None:
        await invalid(
            tables.CreateTable(
                pb.CreateTableRequest(
                    request_id=rid(),
                    settings=table_pb2.TableSettings(variant=cards_pb2.VARIANT_THREE_PLAYER),
                    seeds=[SEED, bytes(31)],
                )
            ),
            "seeds[1]",
        )

    async def test_a_refused_creation_names_no_table(self, tables: TableStub) -> None:
        settings = table_pb2.TableSettings(variant=cards_pb2.VARIANT_THREE_PLAYER)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await tables.CreateTable(pb.CreateTableRequest(request_id=rid(), settings=settings, seeds=[bytes(31)]))
        info = error_info(caught.value)
        assert info.reason == "INVALID_ARGUMENT"
        assert "table_id" not in info.metadata

    async def test_an_overlong_or_empty_name_is_an_invalid_argument(self, tables: TableStub) -> None:
        settings = table_pb2.TableSettings(variant=cards_pb2.VARIANT_FOUR_PLAYER)
        await invalid(
            tables.CreateTable(pb.CreateTableRequest(request_id=rid(), settings=settings, player_names=["a" * 33])),
            "player_names[0]",
        )
        table = await create_table(tables, THREE, players=2)
        for name in ("", "n" * 33, "bell\a"):
            await invalid(
                tables.JoinTable(pb.JoinTableRequest(table_id=table.table_id, request_id=rid(), player_name=name)),
                "player_name",
            )

    @pytest.mark.parametrize("variant", [0, 3, 99])
    async def test_an_unknown_variant_is_an_invalid_argument(self, tables: TableStub, variant: int) -> None:
        await invalid(
            tables.CreateTable(
                pb.CreateTableRequest(request_id=rid(), settings=table_pb2.TableSettings(variant=variant))  # type: ignore[arg-type]
            ),
            "settings.variant",
        )

    async def test_a_creation_retried_after_its_answer_expired_is_refused(
        self, tables: TableStub, store: TableStore, redis_client: redis.asyncio.Redis
    ) -> None:
        request = pb.CreateTableRequest(
            request_id=rid(), settings=table_pb2.TableSettings(variant=cards_pb2.VARIANT_THREE_PLAYER)
        )
        created = await tables.CreateTable(request)
        await redis_client.delete(store.keys(created.table_id).answers)  # as if the answer expired
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await tables.CreateTable(request)
        assert (caught.value.code(), error_info(caught.value).reason) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "REQUEST_ID_REUSED",
        )
        assert caught.value.details() == "this request_id already created a table whose answer is no longer kept"

    async def test_the_same_request_id_for_another_request_is_refused(self, tables: TableStub, table: Table) -> None:
        await tables.Bid(bid_request(table, 1, 1, request_id="bid-once"), metadata=table.seat(0))
        await refused(
            tables.Bid(bid_request(table, 1, 2, request_id="bid-once"), metadata=table.seat(0)),
            grpc.StatusCode.INVALID_ARGUMENT,
            "REQUEST_ID_REUSED",
        )
        await refused(
            tables.Settle(pb.SettleRequest(table_id=table.table_id, request_id="bid-once"), metadata=table.seat(0)),
            grpc.StatusCode.INVALID_ARGUMENT,
            "REQUEST_ID_REUSED",
        )
        assert (await view(tables, table)).version == 2


class TestFaultOrder:
    async def test_a_missing_table_wins_over_a_missing_token(self, tables: TableStub) -> None:
        await refused(
            tables.Bid(pb.BidRequest(table_id="gone", request_id=rid(), expected_version=1, amount=1)),
            grpc.StatusCode.NOT_FOUND,
            "TABLE_NOT_FOUND",
        )

    async def test_a_missing_table_wins_over_a_malformed_authorization(self, tables: TableStub) -> None:
        await refused(
            tables.Bid(
                pb.BidRequest(table_id="gone", request_id=rid(), expected_version=1, amount=1),
                metadata=(("authorization", "Basic not-a-bearer-token"),),
            ),
            grpc.StatusCode.NOT_FOUND,
            "TABLE_NOT_FOUND",
        )

    async def test_a_malformed_card_wins_over_a_missing_table(self, tables: TableStub) -> None:
        await invalid(
            tables.Play(pb.PlayRequest(table_id="gone", request_id=rid(), expected_version=1, cards=[card(0, 1)])),
            "cards[0].rank",
        )

    async def test_permission_wins_over_a_stale_version(self, tables: TableStub, table: Table) -> None:
        await refused(
            tables.Bid(bid_request(table, 9, 1), metadata=table.creator),
            grpc.StatusCode.PERMISSION_DENIED,
            "PERMISSION_DENIED",
        )

    async def test_a_stale_version_wins_over_the_turn(self, tables: TableStub, table: Table) -> None:
        await refused(
            tables.Bid(bid_request(table, 9, 1), metadata=table.seat(2)), grpc.StatusCode.ABORTED, "STALE_STATE"
        )

    async def test_cards_not_in_hand_win_over_an_illegal_combination(self, tables: TableStub, table: Table) -> None:
        playing = await bid_to_play(tables, table)
        theirs = (await view(tables, table, 2)).your_hand
        mine = playing.your_hand
        info = await refused(
            tables.Play(play_request(table, playing.version, [mine[0], theirs[-1]]), metadata=table.seat(0)),
            FAILED,
            "CARDS_NOT_IN_HAND",
        )
        assert info.metadata["missing_card_ids"] == str(card_id(theirs[-1]))

    async def test_a_closed_table_wins_over_a_stale_version(self, tables: TableStub, table: Table) -> None:
        await tables.CloseTable(pb.CloseTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.creator)
        await refused(tables.Bid(bid_request(table, 1, 1), metadata=table.seat(0)), FAILED, "TABLE_CLOSED")


class TestUnexpectedFailures:
    async def test_a_corrupt_table_is_an_internal_error_that_names_only_an_incident(
        self, tables: TableStub, table: Table, store: TableStore
    ) -> None:
        saved = await store.save(Change(table.table_id, 1, 2, b'{"v": 1, "oops": true}', [], Answer("anon")))
        assert saved.outcome.value == "SAVED"
        for call, request_id in (
            (tables.GetTable(pb.GetTableRequest(table_id=table.table_id), metadata=table.seat(0)), None),
            (tables.Bid(bid_request(table, 2, 1, request_id="req-corrupt-1"), metadata=table.seat(0)), "req-corrupt-1"),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await call
            error = caught.value
            assert error.code() == grpc.StatusCode.INTERNAL
            info = error_info(error)
            assert info.reason == "INTERNAL"
            assert info.domain == "dizhu.v1"
            message = error.details() or ""
            if request_id is not None:
                assert info.metadata["request_id"] == request_id
                assert request_id not in message
            else:
                assert "request_id" not in info.metadata
            assert info.metadata["incident_id"] in message
            for leak in ("KeyError", "Traceback", "oops", "settings", ".py", "decode"):
                assert leak not in message
        # The server survives and still serves other tables.
        other = await create_table(tables, THREE)
        assert (await view(tables, other)).version == 1

    async def test_a_store_error_other_than_a_full_store_is_an_incident(
        self, tables: TableStub, table: Table, store: TableStore, redis_client: redis.asyncio.Redis
    ) -> None:
        # The table's state is no hash any more: Redis answers WRONGTYPE, which is not STORE_FULL.
        await redis_client.delete(store.keys(table.table_id).state)
        await redis_client.set(store.keys(table.table_id).state, b"not a hash")
        with structlog.testing.capture_logs() as logs, pytest.raises(grpc.aio.AioRpcError) as caught:
            await tables.Bid(bid_request(table, 1, 1), metadata=table.seat(0))
        assert caught.value.code() == grpc.StatusCode.INTERNAL
        assert error_info(caught.value).reason == "INTERNAL"
        assert [log["event"] for log in logs if log["log_level"] == "error"] == ["unexpected_error"]

    async def test_a_store_gone_away_is_unavailable_and_asks_for_the_same_request_id(self) -> None:
        async with referee_over_its_own_redis() as own:
            table = await create_table(own.tables, THREE)
            await own.server.astop()
            with structlog.testing.capture_logs() as logs, pytest.raises(grpc.aio.AioRpcError) as caught:
                await own.tables.Bid(bid_request(table, 1, 1), metadata=table.seat(0))
        assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
        assert error_info(caught.value).reason == "UNAVAILABLE"
        assert caught.value.details() == "the table store is unavailable; retry with the same request_id"
        warnings = [log for log in logs if log["event"] == "store_unavailable"]
        assert len(warnings) == 1
        assert warnings[0]["log_level"] == "warning"
        assert "connect" in warnings[0]["error"].lower()
