"""Every input is bounded before any work: each example of a request that once ran away is now refused.

Real gRPC, real Redis. The examples are the ones a hostile anonymous client tried: a clock that
overflows, a 3.6 MB Play, a 54-card hand, 120,000 seeds, undecodable bytes.
"""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import duration_pb2

from dizhu.rules import FOUR_PLAYER, THREE_PLAYER, legal_moves
from dizhu.rules.cards import cards_by_id
from dizhu.service import convert
from dizhu.v1 import cards_pb2, rules_service_pb2, table_pb2
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import FOUR, SEED, THREE, bad_request, create_table, error_info, invalid, rid, view
from tests.support.safety import Server, Servers

_THREE_ACE = cards_pb2.Card(rank=cards_pb2.RANK_ACE, suit=cards_pb2.SUIT_SPADES)


def _settings(**clock: duration_pb2.Duration) -> table_pb2.TableSettings:
    settings = table_pb2.TableSettings(variant=THREE)
    for field, value in clock.items():
        getattr(settings.clock, field).CopyFrom(value)
    return settings


def _duration(seconds: int = 0, nanos: int = 0) -> duration_pb2.Duration:
    return duration_pb2.Duration(seconds=seconds, nanos=nanos)


@pytest.fixture
async def server(servers: Servers) -> Server:
    return await servers.start()


class TestTheClockCannotBePoisoned:
    @pytest.mark.parametrize("players", [["a", "b", "c"], ["a"]])
    async def test_a_decision_time_of_ten_thousand_years_is_refused(self, server: Server, players: list[str]) -> None:
        # The example: ~10,000 years per decision and 1 ms for the first one.
        settings = _settings(decision_time=_duration(315_576_000_000), first_decision_time=_duration(0, 1_000_000))
        violations = await invalid(
            server.tables.CreateTable(pb.CreateTableRequest(request_id=rid(), settings=settings, player_names=players)),
            "settings.clock.decision_time",
        )
        assert "3600000 ms" in violations.field_violations[0].description

    @pytest.mark.parametrize(
        ("clock", "field"),
        [
            ({"decision_time": _duration(0, 99_000_000)}, "settings.clock.decision_time"),
            ({"decision_time": _duration(3601)}, "settings.clock.decision_time"),
            ({"decision_time": _duration(1), "first_decision_time": _duration(0, 1_000_000)}, "first_decision_time"),
            ({"decision_time": _duration(1), "first_decision_time": _duration(7200)}, "first_decision_time"),
            ({"decision_time": _duration(1), "time_bank": _duration(3601)}, "settings.clock.time_bank"),
            ({"decision_time": _duration(-1)}, "settings.clock.decision_time"),
            ({"decision_time": _duration(1, -5)}, "settings.clock.decision_time"),
            ({"decision_time": _duration(0, 1_000_000_000)}, "settings.clock.decision_time"),
            ({"decision_time": _duration(315_576_000_001)}, "settings.clock.decision_time"),
        ],
    )
    async def test_clock_durations_out_of_bounds_or_invalid_are_refused(
        self, server: Server, clock: dict[str, duration_pb2.Duration], field: str
    ) -> None:
        request = pb.CreateTableRequest(request_id=rid(), settings=_settings(**clock))
        full = field if field.startswith("settings.") else f"settings.clock.{field}"
        await invalid(server.tables.CreateTable(request), full)

    async def test_the_bounds_themselves_are_accepted(self, server: Server) -> None:
        settings = _settings(
            decision_time=_duration(0, 100_000_000), first_decision_time=_duration(3600), time_bank=_duration(3600)
        )
        created = await server.tables.CreateTable(pb.CreateTableRequest(request_id=rid(), settings=settings))
        clock = created.table.settings.clock
        assert (clock.decision_time.ToMilliseconds(), clock.first_decision_time.ToMilliseconds()) == (100, 3_600_000)

    async def test_a_zero_first_decision_time_means_the_decision_time(self, server: Server) -> None:
        settings = _settings(decision_time=_duration(2), first_decision_time=_duration(0))
        created = await server.tables.CreateTable(pb.CreateTableRequest(request_id=rid(), settings=settings))
        assert created.table.settings.clock.first_decision_time.ToMilliseconds() == 2000

    async def test_more_redeals_than_the_bound_are_refused(self, server: Server) -> None:
        settings = table_pb2.TableSettings(variant=THREE, max_redeals=33)
        await invalid(
            server.tables.CreateTable(pb.CreateTableRequest(request_id=rid(), settings=settings)),
            "settings.max_redeals",
        )


class TestListsAreBounded:
    async def test_a_play_of_ten_thousand_cards_is_refused_by_its_length(self, server: Server) -> None:
        table = await create_table(server.tables, THREE)
        request = pb.PlayRequest(
            table_id=table.table_id, request_id=rid(), expected_version=1, cards=[_THREE_ACE] * 10_000
        )
        violations = await invalid(server.tables.Play(request, metadata=table.seat(0)), "cards")
        assert "33" in violations.field_violations[0].description

    async def test_a_play_of_600000_cards_is_refused_before_it_is_read(self, server: Server) -> None:
        # 3.6 MB: over gRPC's own cap, refused by the transport before the referee sees a byte.
        request = pb.PlayRequest(table_id="no-such-table", request_id=rid(), expected_version=1)
        request.cards.extend([_THREE_ACE] * 600_000)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await server.tables.Play(request, timeout=30)
        assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert (await server.tables.CreateTable(pb.CreateTableRequest(request_id=rid(), settings=_settings()))).table_id

    async def test_a_request_over_the_size_limit_is_refused_whole(self, server: Server) -> None:
        request = pb.PlayRequest(table_id="t", request_id=rid(), expected_version=1, cards=[_THREE_ACE] * 12_000)
        assert 64 * 1024 < request.ByteSize() < 1 << 20
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await server.tables.Play(request)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        info = error_info(caught.value)
        assert (info.reason, info.metadata["max_bytes"]) == ("INVALID_ARGUMENT", str(64 * 1024))
        violations = bad_request(caught.value)
        assert violations is not None
        assert [violation.field for violation in violations.field_violations] == [""]

    async def test_more_seeds_than_the_contract_allows_are_refused(self, server: Server) -> None:
        settings = table_pb2.TableSettings(variant=THREE)
        await invalid(
            server.tables.CreateTable(pb.CreateTableRequest(request_id=rid(), settings=settings, seeds=[SEED] * 1025)),
            "seeds",
        )
        created = await server.tables.CreateTable(
            pb.CreateTableRequest(request_id=rid(), settings=settings, seeds=[SEED] * 1024)
        )
        assert created.table.version == 1

    async def test_120000_seeds_never_reach_the_referee(self, server: Server) -> None:
        request = pb.CreateTableRequest(
            request_id=rid(), settings=table_pb2.TableSettings(variant=THREE), seeds=[SEED] * 120_000
        )
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await server.tables.CreateTable(request, timeout=30)
        assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED

    @pytest.mark.parametrize(("variant", "most"), [(THREE, 20), (FOUR, 33)])
    async def test_a_card_set_larger_than_a_hand_is_refused(self, server: Server, variant: int, most: int) -> None:
        deck = [convert.card_to_proto(card) for card in cards_by_id(range(54 if variant == THREE else 108))]
        request = rules_service_pb2.ListLegalMovesRequest(variant=variant, hand=cards_pb2.CardSet(cards=deck))  # type: ignore[arg-type]
        violations = await invalid(server.rules.ListLegalMoves(request), "hand")
        assert str(most) in violations.field_violations[0].description
        ranks = rules_service_pb2.ClassifyRequest(variant=variant, cards=cards_pb2.CardSet(ranks=[1] * (most + 1)))  # type: ignore[arg-type]
        await invalid(server.rules.Classify(ranks), "cards")

    async def test_the_largest_legal_move_lists_are_answered_whole(self, server: Server) -> None:
        # Among the hands with the most moves: many trios in a row and pairs (found by search).
        hands = {
            THREE: (THREE_PLAYER, [0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 6, 7, 8, 9, 10, 11]),
            FOUR: (
                FOUR_PLAYER,
                [0, 0, 1, 1, 2, 2, *[r for r in range(3, 10) for _ in range(3)], 10, 10, 11, 11, 12, 12],
            ),
        }
        for variant, (rules_variant, ranks) in hands.items():
            seen: dict[int, int] = {}
            cards = []
            for rank in ranks:
                nth = seen[rank] = seen.get(rank, -1) + 1
                cards.append(cards_pb2.Card(rank=rank + 1, suit=nth % 4 + 1, copy=nth // 4))  # type: ignore[arg-type]
            response = await server.rules.ListLegalMoves(
                rules_service_pb2.ListLegalMovesRequest(variant=variant, hand=cards_pb2.CardSet(cards=cards))  # type: ignore[arg-type]
            )
            hand = convert.cards_from_proto(cards, rules_variant)
            assert len(response.moves) == len(legal_moves(hand, None, rules_variant)) > 400
            for move in response.moves:
                assert len(move.cards) == move.combination.size
                ids = [54 * card.copy + 4 * (card.rank - 1) + card.suit - 1 for card in move.cards]
                assert ids == sorted(ids)
            assert response.ByteSize() < 512 * 1024


class TestIdsAndNamesAreBounded:
    async def test_a_table_id_longer_than_the_contract_allows_is_refused(self, server: Server) -> None:
        await invalid(server.tables.GetTable(pb.GetTableRequest(table_id="t" * 65)), "table_id")

    async def test_request_ids_are_bounded_and_those_that_fetch_tokens_are_long(self, server: Server) -> None:
        settings = table_pb2.TableSettings(variant=THREE)
        await invalid(
            server.tables.CreateTable(pb.CreateTableRequest(request_id="r" * 65, settings=settings)), "request_id"
        )
        violations = await invalid(
            server.tables.CreateTable(pb.CreateTableRequest(request_id="short-id", settings=settings)), "request_id"
        )
        assert "16" in violations.field_violations[0].description
        table = await create_table(server.tables, THREE, players=1)
        await invalid(
            server.tables.JoinTable(pb.JoinTableRequest(table_id=table.table_id, request_id="j1", player_name="x")),
            "request_id",
        )

    async def test_names_are_bounded_before_the_table_is_read(self, server: Server) -> None:
        settings = table_pb2.TableSettings(variant=THREE)
        await invalid(
            server.tables.CreateTable(
                pb.CreateTableRequest(request_id=rid(), settings=settings, player_names=["x" * 33])
            ),
            "player_names[0]",
        )

    async def test_an_overlong_api_key_or_token_is_refused(self, servers: Servers) -> None:
        keyed = await servers.start(api_keys=("k" * 40,))
        request = pb.CreateTableRequest(request_id=rid(), settings=table_pb2.TableSettings(variant=THREE))
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await keyed.tables.CreateTable(request, metadata=(("x-api-key", "k" * 4096),))
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED


class TestUndecodableRequests:
    """Bytes that are no valid request get INVALID_ARGUMENT with an ErrorInfo, on every method."""

    METHODS = (
        "/dizhu.v1.TableService/CreateTable",
        "/dizhu.v1.TableService/JoinTable",
        "/dizhu.v1.TableService/GetTable",
        "/dizhu.v1.TableService/LeaveTable",
        "/dizhu.v1.TableService/CloseTable",
        "/dizhu.v1.TableService/Bid",
        "/dizhu.v1.TableService/Play",
        "/dizhu.v1.TableService/Settle",
        "/dizhu.v1.TableService/GetReplay",
        "/dizhu.v1.RulesService/Classify",
        "/dizhu.v1.RulesService/ListLegalMoves",
        "/dizhu.v1.RulesService/Compare",
    )
    PAYLOADS = (
        b"\x0a\x80",  # truncated: a length with no bytes
        b"\x0a\x02\xff\xfe",  # invalid UTF-8 in field 1 (a string wherever field 1 is one)
        b"\x13" * 200 + b"\x14" * 200,  # groups nested 200 deep
        b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",  # a varint too long
    )

    async def _refused(self, call: object) -> None:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call  # type: ignore[misc]
        error = caught.value
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, f"{error.code()} {error.details()}"
        info = error_info(error)
        assert (info.reason, info.domain) == ("INVALID_ARGUMENT", "dizhu.v1")
        assert bad_request(error) is not None
        message = error.details() or ""
        for internal in ("Error", "Exception", "Traceback", "google.protobuf", ".py"):
            assert internal not in message

    async def test_every_unary_method_refuses_undecodable_bytes(self, server: Server) -> None:
        for method in self.METHODS:
            raw = server.channel.unary_unary(method)
            for payload in self.PAYLOADS:
                await self._refused(raw(payload, timeout=10))

    async def test_the_stream_refuses_undecodable_bytes(self, server: Server) -> None:
        raw = server.channel.unary_stream("/dizhu.v1.TableService/WatchTable")
        for payload in self.PAYLOADS:
            call = raw(payload, timeout=10)

            async def drain(call: object = call) -> None:
                async for _ in call:  # type: ignore[attr-defined]
                    raise AssertionError("no message may come")

            await self._refused(drain())

    async def test_unknown_fields_are_ignored(self, server: Server) -> None:
        table = await create_table(server.tables, THREE)
        raw = server.channel.unary_unary("/dizhu.v1.TableService/GetTable")
        payload = pb.GetTableRequest(table_id=table.table_id).SerializeToString() + b"\xf8\x07\x01"  # field 127
        answer = pb.GetTableResponse.FromString(await raw(payload, timeout=10))
        assert answer.table.table_id == table.table_id

    async def test_the_server_answers_on_after_garbage(self, server: Server) -> None:
        table = await create_table(server.tables, THREE)
        raw = server.channel.unary_unary("/dizhu.v1.TableService/GetTable")
        for payload in self.PAYLOADS:
            await self._refused(raw(payload, timeout=10))
        assert (await view(server.tables, table)).version == 1
