"""Hostile requests to the HTTP port: compressed bombs, JSON too large to parse, frames that say
they are compressed when the call names no encoding. Each is refused, with the referee's own
refusal (INVALID_ARGUMENT, ErrorInfo and BadRequest), before the work it would cost."""

from __future__ import annotations

import asyncio
import gzip
import json
import threading
import tracemalloc

import pytest
from google.rpc import status_pb2

from dizhu.v1 import cards_pb2
from dizhu.v1 import table_service_pb2 as pb
from dizhu.web.encodings import Unreadable, request_compressions
from tests.support.web import SOON_S, WebReferee
from tests.support.web_protocols import (
    GET_TABLE,
    LIMIT,
    WATCH_TABLE,
    connect_status,
    connect_stream_status,
    grpc_web_frame,
    grpc_web_status,
    rich_error_details,
)

#: Far more than the limit once decompressed, yet under the 1 MiB the transport reads.
INFLATED = 900_000
PLAY = "/dizhu.v1.TableService/Play"


def _padded_json(request: dict[str, object], size: int) -> bytes:
    """``request`` as protobuf JSON, padded with spaces to ``size`` bytes: small as a message, large as text."""
    text = json.dumps(request).encode()
    return text[:-1] + b" " * (size - len(text)) + b"}"


def _padded_binary(size: int) -> bytes:
    """A GetTableRequest followed by an unknown field: ``size`` bytes, a small message once parsed."""
    known = pb.GetTableRequest(table_id="t").SerializeToString()
    filler = size - len(known) - 1 - 3  # tag 15 (wire type 2), a 3-byte length
    return (
        known
        + bytes([15 << 3 | 2])
        + bytes([filler & 0x7F | 0x80, filler >> 7 & 0x7F | 0x80, filler >> 14])
        + (b"\0" * filler)
    )


def _assert_too_large(status: status_pb2.Status) -> None:
    """Refused for its size once decompressed: never inflated (nor parsed) past the limit."""
    assert status.code == 3, status  # INVALID_ARGUMENT
    info, bad = rich_error_details(status)
    assert (info.reason, info.metadata["max_bytes"]) == ("INVALID_ARGUMENT", str(LIMIT)), info
    assert [violation.field for violation in bad.field_violations] == [""]
    assert f"more than {LIMIT} bytes" in status.message, status.message


class TestCompressedBombs:
    """A body that inflates far past the request limit is refused once the limit is passed."""

    def test_the_decompressor_never_holds_more_than_the_limit(self) -> None:
        bomb = gzip.compress(b"\0" * (16 << 20), compresslevel=9)  # 16 MiB in 16 KB
        (gzip_encoding,) = request_compressions(LIMIT)
        tracemalloc.start()
        try:
            # The library allows what the transport reads (1 MiB); the limit is what counts.
            inflated = gzip_encoding.decompress(bomb, 1 << 20)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert isinstance(inflated, Unreadable)
        assert inflated.reason.metadata == {"max_bytes": str(LIMIT)}
        assert peak < 3 * LIMIT, peak

    async def test_connect_json(self, web_referee: WebReferee) -> None:
        # Small once parsed (a GetTable of a table that does not exist), large once inflated.
        body = gzip.compress(_padded_json({"tableId": "t"}, INFLATED))
        status, _, answer = await web_referee.http(
            "POST", GET_TABLE, body, {"content-type": "application/json", "content-encoding": "gzip"}
        )
        assert status == 400, answer
        _assert_too_large(connect_status(json.loads(answer)))

    async def test_connect_proto(self, web_referee: WebReferee) -> None:
        body = gzip.compress(_padded_binary(INFLATED))
        status, _, answer = await web_referee.http(
            "POST", GET_TABLE, body, {"content-type": "application/proto", "content-encoding": "gzip"}
        )
        assert status == 400, answer
        _assert_too_large(connect_status(json.loads(answer)))

    async def test_grpc_web_frame(self, web_referee: WebReferee) -> None:
        for content_type, payload in (
            ("application/grpc-web+proto", _padded_binary(INFLATED)),
            ("application/grpc-web+json", _padded_json({"tableId": "t"}, INFLATED)),
        ):
            body = grpc_web_frame(gzip.compress(payload), flags=1)
            status, headers, answer = await web_referee.http(
                "POST", GET_TABLE, body, {"content-type": content_type, "grpc-encoding": "gzip"}
            )
            assert status == 200, answer
            _assert_too_large(grpc_web_status(headers, answer))

    async def test_connect_stream_envelope(self, web_referee: WebReferee) -> None:
        body = grpc_web_frame(gzip.compress(_padded_json({"tableId": "t"}, INFLATED)), flags=1)
        status, _, answer = await web_referee.http(
            "POST", WATCH_TABLE, body, {"content-type": "application/connect+json", "connect-content-encoding": "gzip"}
        )
        assert status == 200, answer
        _assert_too_large(connect_stream_status(answer))

    async def test_a_compressed_request_within_the_limit_is_read(self, web_referee: WebReferee) -> None:
        body = gzip.compress(_padded_json({"tableId": "no-such-table"}, LIMIT))
        status, _, answer = await web_referee.http(
            "POST", GET_TABLE, body, {"content-type": "application/json", "content-encoding": "gzip"}
        )
        assert status == 404, answer  # read, and answered for what it asks
        assert json.loads(answer)["code"] == "not_found"

    async def test_a_body_that_is_no_gzip_is_an_invalid_argument(self, web_referee: WebReferee) -> None:
        status, _, answer = await web_referee.http(
            "POST", GET_TABLE, b"not gzip at all", {"content-type": "application/proto", "content-encoding": "gzip"}
        )
        assert status == 400, answer
        refusal = connect_status(json.loads(answer))
        info, _ = rich_error_details(refusal)
        assert info.reason == "INVALID_ARGUMENT"
        assert "gzip" in refusal.message, refusal.message

    async def test_a_bystander_is_answered_while_bombs_arrive(self, web_referee: WebReferee) -> None:
        body = gzip.compress(_padded_json({"tableId": "t", "cards": [{"rank": "RANK_ACE"}] * 20_000}, INFLATED))
        headers = {"content-type": "application/json", "content-encoding": "gzip"}
        refused: list[int] = []
        stop = threading.Event()

        async def bombard() -> None:
            while not stop.is_set():
                status, _, answer = await web_referee.http("POST", PLAY, body, headers)
                refused.append(status)
                assert status == 400, answer

        async with web_referee.native() as bystander:
            attackers = [asyncio.create_task(bombard()) for _ in range(2)]
            try:
                async with asyncio.timeout(SOON_S):
                    while not refused:
                        await asyncio.sleep(0.01)
                    for _ in range(5):
                        created = await bystander.create_table(player_names=["a", "b", "c"], round_limit=1)
                        assert (await bystander.for_seat(created.seat_tokens[0].token).get()).table_id
            finally:
                stop.set()
                await asyncio.gather(*attackers)
        assert set(refused) == {400}


class TestJsonBounds:
    """JSON is held to the limit by its text, and to a number of values, before it is parsed."""

    async def test_json_over_the_limit_is_refused_by_its_text(self, web_referee: WebReferee) -> None:
        body = _padded_json({"tableId": "t"}, LIMIT + 1)
        status, _, answer = await web_referee.http("POST", GET_TABLE, body, {"content-type": "application/json"})
        assert status == 400, answer
        refusal = connect_status(json.loads(answer))
        info, _ = rich_error_details(refusal)
        assert (info.reason, info.metadata["max_bytes"]) == ("INVALID_ARGUMENT", str(LIMIT))
        assert f"the request is {LIMIT + 1} bytes" in refusal.message, refusal.message

    async def test_json_of_exactly_the_limit_is_read(self, web_referee: WebReferee) -> None:
        body = _padded_json({"tableId": "no-such-table"}, LIMIT)
        status, _, answer = await web_referee.http("POST", GET_TABLE, body, {"content-type": "application/json"})
        assert status == 404, answer

    async def test_json_of_too_many_values_is_refused_before_it_is_parsed(self, web_referee: WebReferee) -> None:
        # 10,000 empty cards fit in 30 KB of text; parsed, each would be a message.
        body = json.dumps({"tableId": "t", "requestId": "r" * 16, "cards": [{}] * 10_000}).encode()
        assert len(body) < LIMIT
        status, _, answer = await web_referee.http("POST", PLAY, body, {"content-type": "application/json"})
        assert status == 400, answer
        refusal = connect_status(json.loads(answer))
        info, bad = rich_error_details(refusal)
        assert info.reason == "INVALID_ARGUMENT"
        assert [violation.field for violation in bad.field_violations] == [""]
        assert "values" in refusal.message, refusal.message

    async def test_the_largest_request_in_json_is_read(self, web_referee: WebReferee) -> None:
        # A CreateTable with every preset seed (1,024) and every name, as a client's JSON.
        request = pb.CreateTableRequest(
            request_id="x" * 64,
            seeds=[bytes([n % 256]) * 32 for n in range(1024)],
            player_names=["n" * 32] * 4,
        )
        request.settings.variant = cards_pb2.VARIANT_FOUR_PLAYER
        from google.protobuf import json_format

        body = json_format.MessageToJson(request).encode()
        status, _, answer = await web_referee.http(
            "POST", "/dizhu.v1.TableService/CreateTable", body, {"content-type": "application/json"}
        )
        assert status == 200, answer
        assert len(json.loads(answer)["seatTokens"]) == 4


class TestCompressedFlagWithoutEncoding:
    """A frame flagged compressed on a call that names no encoding: refused as undecodable, not INTERNAL."""

    @pytest.mark.parametrize("encoding", [None, "identity"])
    async def test_grpc_web(self, web_referee: WebReferee, encoding: str | None) -> None:
        headers = {"content-type": "application/grpc-web+proto"} | ({"grpc-encoding": encoding} if encoding else {})
        body = grpc_web_frame(gzip.compress(pb.GetTableRequest(table_id="t").SerializeToString()), flags=1)
        status, answer_headers, answer = await web_referee.http("POST", GET_TABLE, body, headers)
        assert status == 200, answer
        refusal = grpc_web_status(answer_headers, answer)
        assert refusal.code == 3, refusal  # INVALID_ARGUMENT
        info, bad = rich_error_details(refusal)
        assert info.reason == "INVALID_ARGUMENT"
        assert [violation.field for violation in bad.field_violations] == [""]
        assert "grpc-encoding" in refusal.message, refusal.message

    async def test_connect_stream(self, web_referee: WebReferee) -> None:
        body = grpc_web_frame(gzip.compress(b'{"tableId": "t"}'), flags=1)
        status, _, answer = await web_referee.http(
            "POST", WATCH_TABLE, body, {"content-type": "application/connect+json"}
        )
        assert status == 200, answer
        refusal = connect_stream_status(answer)
        assert refusal.code == 3, refusal
        info, _ = rich_error_details(refusal)
        assert info.reason == "INVALID_ARGUMENT"
        assert "connect-content-encoding" in refusal.message, refusal.message

    async def test_an_uncompressed_frame_without_encoding_is_read(self, web_referee: WebReferee) -> None:
        body = grpc_web_frame(pb.GetTableRequest(table_id="no-such-table").SerializeToString())
        status, headers, answer = await web_referee.http(
            "POST", GET_TABLE, body, {"content-type": "application/grpc-web+proto"}
        )
        assert status == 200, answer
        assert grpc_web_status(headers, answer).code == 5  # NOT_FOUND: read and answered
