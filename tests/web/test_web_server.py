"""The HTTP side around the contract: CORS, the interceptors, the static table, the bots API."""

from __future__ import annotations

import asyncio
import contextlib
import json

import prometheus_client
from connectrpc.errors import ConnectError

from dizhu.v1 import table_pb2
from dizhu.v1 import table_service_pb2 as pb
from tests.support.web import WebReferee, start_web_referee, view_once_the_bots_play

_PREFLIGHT = {
    "origin": "http://elsewhere.test",
    "access-control-request-method": "POST",
    "access-control-request-headers": "authorization,content-type,x-grpc-web",
}


class TestCors:
    async def test_cross_origin_calls_are_refused_by_default(self, web_referee: WebReferee) -> None:
        status, headers, _ = await web_referee.http("OPTIONS", "/dizhu.v1.TableService/GetTable", headers=_PREFLIGHT)
        assert "access-control-allow-origin" not in headers
        assert status != 200 or "access-control-allow-headers" not in headers

    async def test_an_allowed_origin_may_send_tokens_and_read_the_status(self, redis_url: str) -> None:
        async with start_web_referee(redis_url, cors_origins=("http://elsewhere.test",)) as started:
            status, headers, _ = await started.http("OPTIONS", "/dizhu.v1.TableService/GetTable", headers=_PREFLIGHT)
            _, answered, _ = await started.http(
                "POST",
                "/dizhu.v1.TableService/GetTable",
                b"\x00\x00\x00\x00\x00",
                {"origin": "http://elsewhere.test", "content-type": "application/grpc-web+proto"},
            )
        assert status == 200
        assert headers["access-control-allow-origin"] == "http://elsewhere.test"
        assert "authorization" in headers["access-control-allow-headers"]
        assert "grpc-status-details-bin" in answered["access-control-expose-headers"]

    async def test_other_origins_stay_refused(self, redis_url: str) -> None:
        async with start_web_referee(redis_url, cors_origins=("http://friend.test",)) as started:
            _, headers, _ = await started.http("OPTIONS", "/dizhu.v1.TableService/GetTable", headers=_PREFLIGHT)
        assert headers.get("access-control-allow-origin") != "http://elsewhere.test"


class TestInterceptors:
    async def test_calls_over_http_are_counted_like_grpc_calls(self, web_referee: WebReferee) -> None:
        def count() -> float:
            value = prometheus_client.REGISTRY.get_sample_value(
                "dizhu_rpc_calls_total", {"method": "GetTable", "code": "NOT_FOUND"}
            )
            return value or 0.0

        before = count()
        async with web_referee.web() as web:
            for _ in range(3):
                with contextlib.suppress(ConnectError):  # refused on purpose: NOT_FOUND is what is counted
                    await web.unary("TableService", "GetTable", pb.GetTableRequest(table_id="missing"))
        assert count() == before + 3


class TestStaticTable:
    async def test_the_web_table_is_served_at_the_root(self, web_referee: WebReferee) -> None:
        status, headers, body = await web_referee.http("GET", "/")
        assert status == 200
        assert headers["content-type"].startswith("text/html")
        assert b"app.js" in body
        assert headers["cache-control"] == "no-cache"

    async def test_the_built_script_is_served(self, web_referee: WebReferee) -> None:
        status, headers, body = await web_referee.http("GET", "/app.js")
        assert status == 200
        assert "javascript" in headers["content-type"]
        assert b"/api/bots" in body

    async def test_nothing_outside_the_static_folder_is_served(self, web_referee: WebReferee) -> None:
        status, _, _ = await web_referee.http("GET", "/../bridge.py")
        assert status == 404


class TestBotsApi:
    async def test_bots_take_the_free_seats_and_play_as_grpc_clients(self, web_referee: WebReferee) -> None:
        async with web_referee.native() as person:
            created = await person.create_table(round_limit=1, next_round=table_pb2.NEXT_ROUND_WHEN_ALL_SETTLED)
            await person.join("person")
            status, _, body = await web_referee.http(
                "POST",
                "/api/bots",
                json.dumps({"table_id": created.table_id, "bots": ["heuristic", "random"]}).encode(),
                {"content-type": "application/json"},
            )
            view = await view_once_the_bots_play(person)
        assert status == 200
        assert json.loads(body) == {"seats": [1, 2]}
        assert [seat.player_name for seat in view.seats] == ["person", "Bob (heuristic bot)", "Cyd (random bot)"]
        assert web_referee.referee.web is not None
        assert web_referee.referee.web.bots is not None
        assert web_referee.referee.web.bots.running == 2

    async def test_a_malformed_request_is_a_400(self, web_referee: WebReferee) -> None:
        status, _, body = await web_referee.http("POST", "/api/bots", b"{}", {"content-type": "application/json"})
        assert status == 400
        assert "table_id" in json.loads(body)["error"]

    async def test_an_unknown_bot_kind_is_a_400(self, web_referee: WebReferee) -> None:
        body = json.dumps({"table_id": "t", "bots": ["genius"]}).encode()
        status, _, answer = await web_referee.http("POST", "/api/bots", body, {"content-type": "application/json"})
        assert status == 400
        assert "genius" in json.loads(answer)["error"]

    async def test_a_refused_seat_is_a_409_with_the_referees_reason(self, web_referee: WebReferee) -> None:
        body = json.dumps({"table_id": "no-such-table", "bots": ["random"]}).encode()
        status, _, answer = await web_referee.http("POST", "/api/bots", body, {"content-type": "application/json"})
        assert status == 409
        assert json.loads(answer)["reason"] == "TABLE_NOT_FOUND"

    async def test_more_bots_than_free_seats_seats_none_and_says_so(self, web_referee: WebReferee) -> None:
        async with web_referee.native() as person:
            created = await person.create_table(round_limit=1, next_round=table_pb2.NEXT_ROUND_WHEN_ALL_SETTLED)
            await person.join("person")
            body = json.dumps({"table_id": created.table_id, "bots": ["random", "random", "heuristic"]}).encode()
            status, _, answer = await web_referee.http("POST", "/api/bots", body, {"content-type": "application/json"})
            view = await person.get()
        assert status == 409
        refusal = json.loads(answer)
        assert (refusal["reason"], refusal["seats"]) == ("TABLE_FULL", [])
        assert "2 free seat(s) for 3 bot(s)" in refusal["error"]
        assert [seat.occupied for seat in view.seats] == [True, False, False]  # nothing seated
        assert web_referee.referee.web is not None
        assert web_referee.referee.web.bots is not None
        assert web_referee.referee.web.bots.running == 0

    async def test_racing_requests_answer_every_seat_they_took(self, web_referee: WebReferee) -> None:
        # Two requests of two bots for three free seats: however they interleave, one is refused,
        # and the answers together name each seat taken exactly once.
        async with web_referee.native() as creator:
            created = await creator.create_table(round_limit=1, next_round=table_pb2.NEXT_ROUND_WHEN_ALL_SETTLED)
            body = json.dumps({"table_id": created.table_id, "bots": ["random", "random"]}).encode()
            answers = await asyncio.gather(
                *(web_referee.http("POST", "/api/bots", body, {"content-type": "application/json"}) for _ in range(2))
            )
            view = await creator.get()
        statuses = sorted(status for status, _, _ in answers)
        assert statuses == [200, 409]
        seats = [seat for _, _, answer in answers for seat in json.loads(answer)["seats"]]
        assert sorted(seats) == [seat.seat for seat in view.seats if seat.occupied] == [0, 1, 2]
        refusal = next(json.loads(answer) for status, _, answer in answers if status == 409)
        assert refusal["reason"] == "TABLE_FULL"

    async def test_past_the_limit_no_bot_is_started(self, redis_url: str) -> None:
        async with start_web_referee(redis_url, web_bots=1) as started:
            body = json.dumps({"table_id": "t", "bots": ["random", "random"]}).encode()
            status, _, answer = await started.http("POST", "/api/bots", body, {"content-type": "application/json"})
        assert status == 429
        assert "at most 1" in json.loads(answer)["error"]
