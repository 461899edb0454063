"""gzip's work is bounded, not only what it produces: a body of many gzip members, or longer than
any valid request can be compressed, is refused before it is read, on every protocol of the HTTP
port.

A 1 MiB body of 52,000 empty gzip members inflates to nothing, yet the Connect library's gzip
loop copied the input left after each member: 0.4 s or more of the event loop for each one.
What a bystander sees meanwhile is a measurement, not a test: ``bench/bench_hostile_http.py
--bomb members`` (docs/benchmarks.md).
"""

from __future__ import annotations

import gzip
import random
from urllib.parse import unquote

import pytest

from dizhu.v1 import table_service_pb2 as pb
from dizhu.web.encodings import MAX_GZIP_MEMBERS, Unreadable, compressed_bound, inflate
from tests.support.web import WebReferee
from tests.support.web_protocols import (
    LIMIT,
    grpc_web_frame,
    method_path,
    refusal_status,
    rich_error_details,
)

EMPTY_MEMBER = gzip.compress(b"")
#: Empty gzip members filling the 1 MiB the transport reads (the report's body).
MANY_MEMBERS = EMPTY_MEMBER * ((1 << 20) // len(EMPTY_MEMBER) - 1)
#: Empty gzip members that fit the compressed bound: refused by their count.
SOME_MEMBERS = EMPTY_MEMBER * (LIMIT // len(EMPTY_MEMBER))
_REQUEST = pb.GetTableRequest(table_id="t").SerializeToString()


def _bombs(members: bytes) -> list[tuple[str, bytes, dict[str, str]]]:
    """``members`` as each protocol carries a compressed message: path, body, headers."""
    return [
        ("connect unary", members, {"content-type": "application/proto", "content-encoding": "gzip"}),
        (
            "connect stream",
            grpc_web_frame(members, flags=1),
            {"content-type": "application/connect+proto", "connect-content-encoding": "gzip"},
        ),
        (
            "grpc-web",
            grpc_web_frame(members, flags=1),
            {"content-type": "application/grpc-web+proto", "grpc-encoding": "gzip"},
        ),
        (
            "grpc-web, a later frame",
            grpc_web_frame(_REQUEST) + grpc_web_frame(members, flags=1),
            {"content-type": "application/grpc-web+proto", "grpc-encoding": "gzip"},
        ),
    ]


class TestInflate:
    def test_more_members_than_the_bound_are_refused_by_their_count(self) -> None:
        refused = inflate(SOME_MEMBERS, LIMIT)
        assert isinstance(refused, Unreadable)
        assert refused.reason.metadata == {"max_gzip_members": str(MAX_GZIP_MEMBERS)}

    def test_a_body_longer_than_any_compressed_request_is_refused_unread(self) -> None:
        refused = inflate(MANY_MEMBERS, LIMIT)
        assert isinstance(refused, Unreadable)
        assert refused.reason.metadata == {"max_bytes": str(LIMIT)}
        assert "even compressed" in refused.reason.description

    def test_incompressible_data_of_the_limit_fits_the_compressed_bound(self) -> None:
        data = random.Random(7).randbytes(LIMIT)
        assert 0 < len(gzip.compress(data, compresslevel=9)) - LIMIT < compressed_bound(LIMIT) - LIMIT
        assert inflate(gzip.compress(data), LIMIT) == data

    def test_members_up_to_the_bound_are_read_as_gzip_reads_them(self) -> None:
        body = b"".join(gzip.compress(b"part %d;" % n) for n in range(MAX_GZIP_MEMBERS))
        assert inflate(body, LIMIT) == gzip.decompress(body)

    @pytest.mark.parametrize("body", [EMPTY_MEMBER + b"trailing", EMPTY_MEMBER[:-1]], ids=["trailing", "truncated"])
    def test_what_is_no_gzip_is_refused(self, body: bytes) -> None:
        refused = inflate(body, LIMIT)
        assert isinstance(refused, Unreadable)
        assert "no valid gzip" in refused.reason.description


class TestManyMembersOverHttp:
    @pytest.mark.parametrize("members", [MANY_MEMBERS, SOME_MEMBERS], ids=["1 MiB", "64 KiB"])
    async def test_refused_as_invalid_on_every_protocol(self, web_referee: WebReferee, members: bytes) -> None:
        for protocol, body, headers in _bombs(members):
            status, answer_headers, answer = await web_referee.http("POST", method_path(protocol), body, headers)
            assert status == (400 if protocol == "connect unary" else 200), (protocol, answer)
            refusal = refusal_status(protocol, answer_headers, answer)
            if protocol == "grpc-web, a later frame":  # read, and refused as a second request message
                assert (refusal.code, unquote(refusal.message)) == (12, "unary request has multiple messages")
                continue
            assert refusal.code == 3, (protocol, refusal)  # INVALID_ARGUMENT, never INTERNAL
            info, _ = rich_error_details(refusal)
            assert info.reason == "INVALID_ARGUMENT", protocol
            assert "gzip members" in refusal.message or "even compressed" in refusal.message, (protocol, refusal)
