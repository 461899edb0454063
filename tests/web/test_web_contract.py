"""The contract over gRPC-Web and Connect behaves as over gRPC: same answers, same refusals, same streams."""

from __future__ import annotations

import asyncio
import base64
import json
import struct
import urllib.parse

import pytest
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from google.rpc import error_details_pb2, status_pb2

from dizhu.client import NotYourTurn, TableClient
from dizhu.v1 import cards_pb2, rules_service_pb2, table_pb2
from dizhu.v1 import table_service_pb2 as pb
from dizhu.web.client import ProtocolType, error_info
from tests.support.web import SOON_S, WebReferee

SEED = bytes(range(32))
NAMES = ["ann", "bob", "cyd"]


async def _table(creator: TableClient) -> pb.CreateTableResponse:
    return await creator.create_table(player_names=NAMES, seeds=[SEED], round_limit=1)


def _grpc_web_frame(message: bytes) -> bytes:
    return b"\x00" + struct.pack(">I", len(message)) + message


def _grpc_web_trailers(headers: dict[str, str], body: bytes) -> dict[str, str]:
    """A gRPC-Web response's trailers: its headers when it has no body ("trailers-only"), else
    the trailers frame (flag 0x80) at the end of its body."""
    if "grpc-status" in headers:
        return headers
    offset = 0
    while offset < len(body):
        flag, length = body[offset], struct.unpack(">I", body[offset + 1 : offset + 5])[0]
        frame = body[offset + 5 : offset + 5 + length]
        offset += 5 + length
        if flag & 0x80:
            lines = frame.decode().strip().split("\r\n")
            return {key.strip().lower(): value.strip() for key, value in (line.split(":", 1) for line in lines)}
    raise AssertionError("no trailers frame in the response")


def _rpc_status(trailers: dict[str, str]) -> status_pb2.Status:
    """The google.rpc.Status in a response's ``grpc-status-details-bin`` trailer."""
    return status_pb2.Status.FromString(base64.b64decode(trailers["grpc-status-details-bin"] + "=="))


class TestUnaryCalls:
    async def test_a_seat_reads_the_same_view_over_grpc_web_as_over_grpc(self, web_referee: WebReferee) -> None:
        async with web_referee.native() as creator, web_referee.web() as web:
            created = await _table(creator)
            token = created.seat_tokens[1].token
            native = await creator.for_seat(token).get()
            answer = await web.unary(
                "TableService", "GetTable", pb.GetTableRequest(table_id=created.table_id), token=token
            )
        assert answer.table == native
        assert answer.table.your_seat == 1
        assert len(answer.table.your_hand) == 17

    async def test_a_table_created_and_joined_over_grpc_web_is_the_referees(self, web_referee: WebReferee) -> None:
        async with web_referee.web() as web, web_referee.native() as native:
            settings = table_pb2.TableSettings(variant=cards_pb2.VARIANT_FOUR_PLAYER, round_limit=1)
            created = await web.unary(
                "TableService",
                "CreateTable",
                pb.CreateTableRequest(request_id="web-create-0123456789abcdef", settings=settings),
            )
            joined = await web.unary(
                "TableService",
                "JoinTable",
                pb.JoinTableRequest(
                    table_id=created.table_id, request_id="web-join-0123456789abcdef", player_name="browser"
                ),
            )
            native.table_id = created.table_id
            seen = await native.get()
        assert joined.seat == 0
        assert joined.seat_token
        assert seen.seats[0].player_name == "browser"
        assert seen.settings.variant == cards_pb2.VARIANT_FOUR_PLAYER

    async def test_the_connect_protocol_with_json_answers_the_rules_helpers(self, web_referee: WebReferee) -> None:
        async with web_referee.web(protocol=ProtocolType.CONNECT, json=True) as web:
            request = rules_service_pb2.ClassifyRequest(
                variant=cards_pb2.VARIANT_THREE_PLAYER,
                cards=cards_pb2.CardSet(ranks=[cards_pb2.RANK_FIVE] * 3 + [cards_pb2.RANK_NINE] * 2),
            )
            answer = await web.unary("RulesService", "Classify", request)
        assert [c.kind for c in answer.classification.combinations] == [cards_pb2.COMBINATION_KIND_TRIO_WITH_PAIR]

    @pytest.mark.parametrize("json", [False, True], ids=["binary", "json"])
    async def test_the_legal_moves_the_engine_writes_as_bytes_reach_browsers_as_messages(
        self, web_referee: WebReferee, json: bool
    ) -> None:
        hand = [cards_pb2.RANK_FIVE] * 3 + [cards_pb2.RANK_NINE] * 2
        async with web_referee.web(protocol=ProtocolType.CONNECT, json=json) as web:
            request = rules_service_pb2.ListLegalMovesRequest(
                variant=cards_pb2.VARIANT_THREE_PLAYER, hand=cards_pb2.CardSet(ranks=hand)
            )
            answer = await web.unary("RulesService", "ListLegalMoves", request)
        assert [move.combination.kind for move in answer.moves][-1] == cards_pb2.COMBINATION_KIND_TRIO_WITH_PAIR
        assert len(answer.moves) == 7  # 5, 9; 55, 99; 555; 555+9; 555+99
        assert not answer.can_pass

    async def test_connect_json_is_plain_http_for_any_client(self, web_referee: WebReferee) -> None:
        body = b'{"variant": "VARIANT_THREE_PLAYER", "cards": {"ranks": ["RANK_THREE", "RANK_THREE"]}}'
        status, headers, answer = await web_referee.http(
            "POST", "/dizhu.v1.RulesService/Classify", body, {"content-type": "application/json"}
        )
        assert status == 200, answer
        assert headers["content-type"].startswith("application/json")
        assert b"COMBINATION_KIND_PAIR" in answer

    async def test_connect_json_ignores_fields_it_does_not_know_as_the_binary_form_does(
        self, web_referee: WebReferee
    ) -> None:
        # A newer client's field: the JSON answer is the one without it.
        known = {"variant": "VARIANT_THREE_PLAYER", "cards": {"ranks": ["RANK_THREE", "RANK_THREE"]}}
        answers = []
        for body in (known, {**known, "from_a_newer_client": {"x": 1}}):
            headers = {"content-type": "application/json"}
            path = "/dizhu.v1.RulesService/Classify"
            status, _, answer = await web_referee.http("POST", path, json.dumps(body).encode(), headers)
            assert status == 200, answer
            answers.append(json.loads(answer))
        assert answers[0] == answers[1]
        assert answers[0]["classification"]["combinations"][0]["kind"] == "COMBINATION_KIND_PAIR"

    async def test_connect_get_serves_the_methods_without_side_effects_only(self, web_referee: WebReferee) -> None:
        query = urllib.parse.urlencode(
            {"encoding": "json", "message": '{"variant": "VARIANT_THREE_PLAYER", "cards": {"ranks": ["RANK_NINE"]}}'}
        )
        status, _, answer = await web_referee.http("GET", f"/dizhu.v1.RulesService/Classify?{query}")
        refused, _, _ = await web_referee.http("GET", f"/dizhu.v1.TableService/Bid?{query}")
        assert status == 200
        assert b"COMBINATION_KIND_SINGLE" in answer
        assert refused == 405


class TestRefusals:
    async def test_a_refusal_carries_the_grpc_code_message_and_error_info(self, web_referee: WebReferee) -> None:
        async with web_referee.native() as creator, web_referee.web() as web:
            created = await _table(creator)
            view = created.table
            wrong = next(seat for seat in range(3) if seat != view.turn_seat)
            request = pb.BidRequest(
                table_id=created.table_id, request_id="bid-1", expected_version=view.version, amount=1
            )
            with pytest.raises(NotYourTurn) as native:
                await creator.for_seat(created.seat_tokens[wrong].token).bid(1, expected_version=view.version)
            with pytest.raises(ConnectError) as refused:
                await web.unary("TableService", "Bid", request, token=created.seat_tokens[wrong].token)
        assert refused.value.code is Code.FAILED_PRECONDITION
        assert refused.value.message == native.value.message
        info = error_info(refused.value)
        assert (info.reason, info.domain) == ("NOT_YOUR_TURN", "dizhu.v1")
        assert info.metadata["turn_seat"] == str(view.turn_seat)
        assert dict(info.metadata) == native.value.metadata

    async def test_invalid_arguments_carry_the_bad_request_too(self, web_referee: WebReferee) -> None:
        async with web_referee.web() as web:
            with pytest.raises(ConnectError) as refused:
                await web.unary("TableService", "CreateTable", pb.CreateTableRequest(request_id="r"))
        assert refused.value.code is Code.INVALID_ARGUMENT
        assert error_info(refused.value).reason == "INVALID_ARGUMENT"
        bad = [d for d in refused.value.details if d.type_name == "google.rpc.BadRequest"]
        assert error_details_pb2.BadRequest.FromString(bad[0].message_bytes).field_violations[0].field == (
            "settings.variant"
        )

    async def test_a_forged_token_is_unauthenticated(self, web_referee: WebReferee) -> None:
        async with web_referee.native() as creator, web_referee.web() as web:
            created = await _table(creator)
            with pytest.raises(ConnectError) as refused:
                await web.unary(
                    "TableService", "GetTable", pb.GetTableRequest(table_id=created.table_id), token="not-a-token"
                )
        assert refused.value.code is Code.UNAUTHENTICATED
        assert error_info(refused.value).reason == "UNAUTHENTICATED"

    async def test_on_the_wire_the_status_details_are_the_google_rpc_status(self, web_referee: WebReferee) -> None:
        """What a browser receives: a gRPC-Web trailer frame with grpc-status and grpc-status-details-bin."""
        request = pb.GetTableRequest(table_id="no-such-table").SerializeToString()
        status, headers, body = await web_referee.http(
            "POST",
            "/dizhu.v1.TableService/GetTable",
            _grpc_web_frame(request),
            {"content-type": "application/grpc-web+proto", "x-grpc-web": "1"},
        )
        assert status == 200
        trailers = _grpc_web_trailers(headers, body)
        assert trailers["grpc-status"] == "5"  # NOT_FOUND
        details = _rpc_status(trailers)
        assert details.code == 5
        info = error_details_pb2.ErrorInfo()
        assert details.details[0].Unpack(info)
        assert (info.reason, info.metadata["table_id"]) == ("TABLE_NOT_FOUND", "no-such-table")


class TestRequestsThatAreNoRequest:
    """Bytes that are no request, or too many of them, are refused over HTTP as over gRPC
    (tests/safety/test_safety_inputs.py): INVALID_ARGUMENT with ErrorInfo and BadRequest."""

    PAYLOADS = (
        b"\x0a\x80",  # truncated: a length with no bytes
        b"\x13" * 200 + b"\x14" * 200,  # groups nested 200 deep
        b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",  # a varint too long
    )
    PATHS = ("/dizhu.v1.TableService/GetTable", "/dizhu.v1.TableService/Play", "/dizhu.v1.RulesService/Classify")

    @staticmethod
    def _refusal(status: status_pb2.Status) -> tuple[error_details_pb2.ErrorInfo, error_details_pb2.BadRequest]:
        info, bad = error_details_pb2.ErrorInfo(), error_details_pb2.BadRequest()
        assert [detail.Unpack(info) or detail.Unpack(bad) for detail in status.details] == [True, True]
        for internal in ("Error", "Exception", "Traceback", "google.protobuf", ".py"):
            assert internal not in status.message
        return info, bad

    async def test_undecodable_bytes_over_grpc_web_are_an_invalid_argument(self, web_referee: WebReferee) -> None:
        for path in self.PATHS:
            for payload in self.PAYLOADS:
                status, headers, body = await web_referee.http(
                    "POST", path, _grpc_web_frame(payload), {"content-type": "application/grpc-web+proto"}
                )
                assert status == 200
                refusal = _rpc_status(_grpc_web_trailers(headers, body))
                assert refusal.code == 3, (path, payload, refusal.message)  # INVALID_ARGUMENT
                info, bad = self._refusal(refusal)
                assert (info.reason, info.domain) == ("INVALID_ARGUMENT", "dizhu.v1")
                assert [violation.field for violation in bad.field_violations] == [""]

    async def test_json_that_is_no_request_is_an_invalid_argument(self, web_referee: WebReferee) -> None:
        for body in (b"{not json", b'{"variant": 3.5}', b'{"no_such_field": 1, "cards": "x"}'):
            status, _, answer = await web_referee.http(
                "POST", "/dizhu.v1.RulesService/Classify", body, {"content-type": "application/json"}
            )
            assert status == 400, answer
            error = json.loads(answer)
            assert error["code"] == "invalid_argument", error
            types = [detail["type"] for detail in error["details"]]
            assert types == ["google.rpc.ErrorInfo", "google.rpc.BadRequest"], error
            info = error_details_pb2.ErrorInfo.FromString(base64.b64decode(error["details"][0]["value"] + "=="))
            assert info.reason == "INVALID_ARGUMENT"
            if body == b"{not json":
                assert "no valid dizhu.v1.ClassifyRequest (protobuf JSON form)" in error["message"], error

    async def test_a_request_over_the_size_limit_is_refused_whole(self, web_referee: WebReferee) -> None:
        three = cards_pb2.Card(rank=cards_pb2.RANK_THREE, suit=cards_pb2.SUIT_SPADES)
        request = pb.PlayRequest(table_id="t", request_id="r", expected_version=1, cards=[three] * 12_000)
        assert 64 * 1024 < request.ByteSize() < 1 << 20
        clients = ((ProtocolType.GRPC_WEB, False), (ProtocolType.CONNECT, False), (ProtocolType.CONNECT, True))
        for protocol, as_json in clients:
            async with web_referee.web(protocol=protocol, json=as_json) as web:
                with pytest.raises(ConnectError) as refused:
                    await web.unary("TableService", "Play", request)
            assert refused.value.code is Code.INVALID_ARGUMENT, (protocol, as_json, refused.value)
            info = error_info(refused.value)
            assert (info.reason, info.metadata["max_bytes"]) == ("INVALID_ARGUMENT", str(64 * 1024))
            # Binary is measured by its size; JSON by its text, before it is parsed (larger still).
            size = int(refused.value.message.split("the request is ")[1].split(" bytes")[0])
            assert size == request.ByteSize() if not as_json else size > request.ByteSize(), refused.value.message

    async def test_a_json_request_is_held_to_the_size_limit_by_its_text(self, web_referee: WebReferee) -> None:
        # Of exactly the limit in binary form, but five times as long as JSON: refused before it is parsed.
        three = cards_pb2.Card(rank=cards_pb2.RANK_THREE, suit=cards_pb2.SUIT_SPADES)
        sized = (
            pb.PlayRequest(table_id="t" * length, request_id="r", expected_version=1, cards=[three] * 10_920)
            for length in range(1, 20)
        )
        request = next(request for request in sized if request.ByteSize() == 64 * 1024)
        async with web_referee.web(protocol=ProtocolType.CONNECT, json=True) as web:
            with pytest.raises(ConnectError) as refused:
                await web.unary("TableService", "Play", request)
        assert error_info(refused.value).metadata["max_bytes"] == str(64 * 1024), refused.value
        assert "cards" not in refused.value.message, refused.value.message

    async def test_a_request_over_the_transport_cap_is_not_read(self, web_referee: WebReferee) -> None:
        # As over gRPC: 16 times the request limit (1 MiB at least) and the transport refuses it.
        three = cards_pb2.Card(rank=cards_pb2.RANK_THREE, suit=cards_pb2.SUIT_SPADES)
        request = pb.PlayRequest(table_id="t", request_id="r", expected_version=1, cards=[three] * 600_000)
        assert request.ByteSize() > 1 << 20
        async with web_referee.web() as web:
            with pytest.raises(ConnectError) as refused:
                await web.unary("TableService", "Play", request)
        assert refused.value.code is Code.RESOURCE_EXHAUSTED, refused.value


class TestWatchTable:
    async def test_a_stream_over_grpc_web_starts_with_a_snapshot_then_carries_changes(
        self, web_referee: WebReferee
    ) -> None:
        async with web_referee.native() as creator, web_referee.web() as web:
            created = await _table(creator)
            turn = created.table.turn_seat
            token = created.seat_tokens[turn].token
            stream = web.stream(
                "TableService", "WatchTable", pb.WatchTableRequest(table_id=created.table_id), token=token
            )
            first = await asyncio.wait_for(anext(stream), SOON_S)
            await creator.for_seat(token).bid(3, expected_version=created.table.version)
            kinds = []
            while "landlord_chosen" not in kinds:
                event = (await asyncio.wait_for(anext(stream), SOON_S)).event
                kinds.append(event.WhichOneof("payload"))
            await stream.aclose()  # type: ignore[attr-defined]
        assert first.event.HasField("snapshot")
        assert first.event.snapshot.your_seat == turn
        assert len(first.event.snapshot.your_hand) == 17
        assert kinds[kinds.index("bid_made")] == "bid_made"

    async def test_a_stream_resumes_after_the_last_sequence_received(self, web_referee: WebReferee) -> None:
        async with web_referee.native() as creator, web_referee.web() as web:
            created = await _table(creator)
            request = pb.WatchTableRequest(table_id=created.table_id)
            stream = web.stream("TableService", "WatchTable", request)
            snapshot = (await asyncio.wait_for(anext(stream), SOON_S)).event
            await stream.aclose()  # type: ignore[attr-defined]
            turn = created.table.turn_seat
            await creator.for_seat(created.seat_tokens[turn].token).bid(1, expected_version=created.table.version)
            request.after_sequence = snapshot.sequence
            resumed = web.stream("TableService", "WatchTable", request)
            missed = (await asyncio.wait_for(anext(resumed), SOON_S)).event
            await resumed.aclose()  # type: ignore[attr-defined]
        assert missed.sequence == snapshot.sequence + 1
        assert missed.bid_made.seat == turn
        assert missed.bid_made.amount == 1

    async def test_a_stream_of_an_unknown_table_ends_not_found(self, web_referee: WebReferee) -> None:
        async with web_referee.web() as web:
            with pytest.raises(ConnectError) as refused:
                async for _ in web.stream("TableService", "WatchTable", pb.WatchTableRequest(table_id="nope")):
                    pass
        assert refused.value.code is Code.NOT_FOUND
        assert error_info(refused.value).reason == "TABLE_NOT_FOUND"

    async def test_open_streams_end_unavailable_when_the_referee_stops(self, redis_url: str) -> None:
        from tests.support.web import start_web_referee

        async with start_web_referee(redis_url) as started:
            async with started.native() as creator:
                created = await _table(creator)
            web = started.web()
            stream = web.stream("TableService", "WatchTable", pb.WatchTableRequest(table_id=created.table_id))
            await asyncio.wait_for(anext(stream), SOON_S)
            ending = asyncio.create_task(_drain(stream))
            await asyncio.sleep(0.1)
        with pytest.raises(ConnectError) as ended:
            await asyncio.wait_for(ending, SOON_S)
        assert ended.value.code is Code.UNAVAILABLE


async def _drain(stream: object) -> None:
    async for _ in stream:  # type: ignore[attr-defined]
        pass
