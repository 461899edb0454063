"""The contract's sentences about errors, read from the protos and docs/api.md and held against real answers.

``errors.proto`` says which errors the referee sends with details and which ones gRPC itself
ends a call with, a status code alone ("Errors without details"); ``docs/api.md`` says the
same in a table. Every code of that list is provoked here on a real referee (port 0, real
Redis) and must come without a ``grpc-status-details-bin`` trailer; the transport's cap is
read from the sentence that states it and checked on both sides of it, on two referees with
different request limits; the reasons said to carry a ``RetryInfo`` -- by the sentences and
by each ``ErrorReason`` value's ``facts`` option -- are the RESOURCE_EXHAUSTED ones of those
facts (each is produced, RetryInfo checked, by ``test_grpc_contract_conformance.py``).
"""

from __future__ import annotations

import re
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import grpc
import pytest
from grpc_status import rpc_status

from dizhu.config import ServerConfig
from dizhu.process import create_server
from dizhu.store import TableStore
from dizhu.v1 import errors_pb2, table_service_pb2_grpc
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import THREE, TableStub, bad_request, card, create_table, error_info, rid

ROOT = Path(__file__).resolve().parents[2]
ERRORS_PROTO = (ROOT / "proto" / "dizhu" / "v1" / "errors.proto").read_text()
API_MD = (ROOT / "docs" / "api.md").read_text()
#: One card of a Play: requests of a chosen size are built from it.
_CARD = card(12, 1)
_CARD_BYTES = pb.PlayRequest(cards=[_CARD]).ByteSize()
_DETAILS_KEY = "grpc-status-details-bin"


def _comment(text: str) -> list[str]:
    return [line.strip()[2:].rstrip() for line in text.splitlines() if line.strip().startswith("//")]


def errors_without_details(proto_text: str) -> dict[str, str]:
    """``code -> when`` from the "Errors without details" list of errors.proto."""
    lines = _comment(proto_text)
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("Errors without details."))
    listed: dict[str, str] = {}
    code = ""
    for line in lines[start + 1 :]:
        row = re.match(r"\s{3}([A-Z_]+)\s{2,}(.*)", line)
        if row:
            code = row.group(1)
            listed[code] = row.group(2)
        elif code and line.startswith(" " * 5) and line.strip():
            listed[code] += " " + line.strip()
        elif listed:
            break
    assert listed, "no list of errors without details in errors.proto"
    return listed


def api_md_errors_without_details(markdown: str) -> list[str]:
    """The codes of the table under docs/api.md's "Errors without details"."""
    section = markdown.split("**Errors without details.**", 1)[1]
    rows = [line for line in section.split("\n\n", 2)[1].splitlines() if line.startswith("|")]
    return [row.split("|")[1].strip() for row in rows[2:]]


def retry_info_reasons(text: str) -> set[str]:
    """The reasons a sentence says carry a RetryInfo: "RESOURCE_EXHAUSTED ... sends (A, B, C) ... RetryInfo"."""
    said = re.search(r"RESOURCE_EXHAUSTED`?(?: errors?)? the referee sends\s*\(([^)]*)\)", " ".join(text.split()))
    assert said, "no sentence on which RESOURCE_EXHAUSTED errors carry a RetryInfo"
    return set(re.findall(r"[A-Z_]{4,}", said.group(1)))


def transport_cap_rule(when: str) -> tuple[int, int]:
    """``(floor bytes, factor)`` of "1 MiB or 16 times the server's request limit if that is larger"."""
    said = re.search(r"(\d+) MiB,? or (\d+) times the (?:server's )?request limit", when)
    assert said, f"no transport cap stated in {when!r}"
    return int(said.group(1)) << 20, int(said.group(2))


def retry_info_facts() -> set[str]:
    """The reasons whose descriptor's ``facts`` option says they carry a RetryInfo."""
    return {
        value.name.removeprefix("ERROR_REASON_")
        for value in errors_pb2.ErrorReason.DESCRIPTOR.values
        if value.GetOptions().Extensions[errors_pb2.facts].retry_info
    }


WITHOUT_DETAILS = errors_without_details(ERRORS_PROTO)


def _no_details(error: grpc.aio.AioRpcError) -> None:
    assert rpc_status.from_call(error) is None, f"{error.code()} carries details: {error.details()}"
    assert _DETAILS_KEY not in dict(error.trailing_metadata() or ())


def _play_of(size: int) -> pb.PlayRequest:
    """A Play of ``size`` bytes on the wire, give or take a card (never reaching a table: its id is unknown)."""
    request = pb.PlayRequest(table_id="no-such-table", request_id=rid(), expected_version=1)
    request.cards.extend([_CARD] * ((size - request.ByteSize()) // _CARD_BYTES))
    assert abs(request.ByteSize() - size) <= _CARD_BYTES
    return request


async def _failing(call: Awaitable[object]) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    return caught.value


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def _over_the_cap(tables: TableStub, _channel: grpc.aio.Channel) -> grpc.aio.AioRpcError:
    floor, _factor = transport_cap_rule(WITHOUT_DETAILS["RESOURCE_EXHAUSTED"])
    return await _failing(tables.Play(_play_of(floor + 4096), timeout=30))


async def _unknown_method(_tables: TableStub, channel: grpc.aio.Channel) -> grpc.aio.AioRpcError:
    call = channel.unary_unary("/dizhu.v1.TableService/NoSuchMethod")
    return await _failing(call(b"", timeout=10))


async def _no_connection(_tables: TableStub, _channel: grpc.aio.Channel) -> grpc.aio.AioRpcError:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{_closed_port()}") as nowhere:
        stub = table_service_pb2_grpc.TableServiceStub(nowhere)
        return await _failing(stub.GetTable(pb.GetTableRequest(table_id="t"), timeout=10))


async def _deadline(tables: TableStub, _channel: grpc.aio.Channel) -> grpc.aio.AioRpcError:
    table = await create_table(tables, THREE)
    stream = tables.WatchTable(pb.WatchTableRequest(table_id=table.table_id), timeout=0.5)

    async def read_all() -> None:
        async for _ in stream:
            pass

    return await _failing(read_all())


async def _cancelled(tables: TableStub, _channel: grpc.aio.Channel) -> grpc.aio.AioRpcError:
    table = await create_table(tables, THREE)
    stream = tables.WatchTable(pb.WatchTableRequest(table_id=table.table_id))
    assert (await stream.read()).event.HasField("snapshot")
    stream.cancel()
    # A cancelled call raises no AioRpcError: its ending is read from the call itself.
    return grpc.aio.AioRpcError(
        await stream.code(),
        await stream.initial_metadata(),
        await stream.trailing_metadata(),
        await stream.details(),
    )


_PROVOKE: dict[str, Callable[[TableStub, grpc.aio.Channel], Awaitable[grpc.aio.AioRpcError]]] = {
    "RESOURCE_EXHAUSTED": _over_the_cap,
    "UNIMPLEMENTED": _unknown_method,
    "UNAVAILABLE": _no_connection,
    "DEADLINE_EXCEEDED": _deadline,
    "CANCELLED": _cancelled,
}


class TestTheSentencesAgree:
    def test_docs_api_md_lists_the_errors_without_details_of_errors_proto(self) -> None:
        assert api_md_errors_without_details(API_MD) == list(WITHOUT_DETAILS)

    def test_the_reasons_said_to_carry_a_retry_info_are_the_tables_resource_exhausted_ones(self) -> None:
        exhausted = {
            value.name.removeprefix("ERROR_REASON_")
            for value in errors_pb2.ErrorReason.DESCRIPTOR.values
            if value.GetOptions().Extensions[errors_pb2.facts].code == "RESOURCE_EXHAUSTED"
        }
        assert exhausted == {"RATE_LIMITED", "QUOTA_EXCEEDED", "STORE_FULL"}
        assert retry_info_facts() == exhausted
        assert retry_info_reasons("\n".join(_comment(ERRORS_PROTO))) == exhausted
        assert retry_info_reasons(API_MD) == exhausted

    def test_every_error_without_details_has_a_way_to_provoke_it(self) -> None:
        assert set(WITHOUT_DETAILS) == set(_PROVOKE)


@pytest.mark.parametrize("code", list(WITHOUT_DETAILS))
async def test_an_error_grpc_itself_ends_a_call_with_has_its_code_and_no_details(
    code: str, tables: TableStub, channel: grpc.aio.Channel
) -> None:
    error = await _PROVOKE[code](tables, channel)
    assert error.code().name == code, f"{error.code()} {error.details()}"
    _no_details(error)
    # The referee still answers, with details, the calls it sends errors for.
    refused = await _failing(tables.GetTable(pb.GetTableRequest(table_id="no-such-table")))
    assert error_info(refused).reason == "TABLE_NOT_FOUND"


@pytest.fixture
async def larger_limit(store: TableStore) -> AsyncIterator[tuple[TableStub, int]]:
    """A referee whose request limit is 256 KiB (so the transport's cap is above 1 MiB), and that limit."""
    limit = 256 * 1024
    referee = await create_server(ServerConfig(address="127.0.0.1:0", max_request_bytes=limit), store)
    try:
        async with grpc.aio.insecure_channel(
            f"127.0.0.1:{referee.port}", options=[("grpc.max_send_message_length", 64 << 20)]
        ) as channel:
            yield table_service_pb2_grpc.TableServiceStub(channel), limit
    finally:
        await referee.stop(0)


class TestTheTransportCap:
    async def test_a_request_between_the_limit_and_the_cap_is_refused_by_the_referee_with_details(
        self, larger_limit: tuple[TableStub, int]
    ) -> None:
        tables, limit = larger_limit
        floor, factor = transport_cap_rule(WITHOUT_DETAILS["RESOURCE_EXHAUSTED"])
        cap = max(floor, factor * limit)
        assert cap > floor  # this referee's cap is the factor's, not the floor
        error = await _failing(tables.Play(_play_of(cap - 4096), timeout=30))
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert error_info(error).metadata["max_bytes"] == str(limit)
        assert bad_request(error) is not None

    async def test_a_request_over_the_cap_is_refused_by_the_transport_without_details(
        self, larger_limit: tuple[TableStub, int]
    ) -> None:
        tables, limit = larger_limit
        floor, factor = transport_cap_rule(WITHOUT_DETAILS["RESOURCE_EXHAUSTED"])
        error = await _failing(tables.Play(_play_of(max(floor, factor * limit) + 4096), timeout=30))
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        _no_details(error)
