"""Garbage in, a precise refusal out: no request makes the referee fail unexpectedly or stop answering."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import pytest
from grpc_helpers import THREE, RulesStub, Table, TableStub, create_table, error_info, view
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dizhu.v1 import cards_pb2, table_pb2
from dizhu.v1 import rules_service_pb2 as rpb
from dizhu.v1 import table_service_pb2 as pb

_ASCII = st.characters(min_codepoint=0x20, max_codepoint=0x7E)
_U32 = st.integers(0, 2**32 - 1)
_ENUM = st.integers(-3, 20)


def _card() -> st.SearchStrategy[cards_pb2.Card]:
    return st.builds(cards_pb2.Card, rank=_ENUM, suit=_ENUM, copy=st.one_of(st.integers(0, 2), _U32))


def _card_set() -> st.SearchStrategy[cards_pb2.CardSet]:
    return st.builds(
        cards_pb2.CardSet,
        cards=st.lists(_card(), max_size=8),
        ranks=st.lists(_ENUM, max_size=8),
    )


def _settings() -> st.SearchStrategy[table_pb2.TableSettings]:
    duration = st.fixed_dictionaries(
        {"seconds": st.integers(-(2**63), 2**63 - 1), "nanos": st.integers(-(2**31), 2**31 - 1)}
    )

    def build(variant: int, limit: int, next_round: int, dealer: int | None, clock: dict[str, int] | None) -> Any:
        message = table_pb2.TableSettings(variant=variant, round_limit=limit, next_round=next_round)  # type: ignore[arg-type]
        if dealer is not None:
            message.first_dealer = dealer
        if clock is not None:
            message.clock.decision_time.seconds = clock["seconds"]
            message.clock.decision_time.nanos = clock["nanos"]
        return message

    return st.builds(build, _ENUM, _U32, _ENUM.map(abs), st.none() | _U32, st.none() | duration)


@pytest.fixture
async def table(tables: TableStub) -> Table:
    return await create_table(tables, THREE)


class _Garbage:
    """Strategies for the fields of every request, mixing the real table and tokens in."""

    def __init__(self, table: Table) -> None:
        self.table_id = st.one_of(
            st.just(table.table_id), st.text(max_size=140), st.text(_ASCII, min_size=1, max_size=12)
        )
        self.request_id = st.one_of(st.text(max_size=80), st.text(_ASCII, min_size=1, max_size=64))
        self.version = st.one_of(st.integers(0, 3), st.integers(0, 2**64 - 1))
        tokens = [table.creator_token, *table.tokens.values()]
        self.metadata = st.one_of(
            st.just(()),
            st.sampled_from(tokens).map(lambda token: (("authorization", f"Bearer {token}"),)),
            st.text(_ASCII, max_size=300).map(lambda value: (("authorization", value),)),
            st.text(_ASCII, max_size=300).map(lambda value: (("authorization", f"Bearer {value}"),)),
        )


def _calls(
    tables: TableStub, rules: RulesStub, g: _Garbage
) -> st.SearchStrategy[tuple[str, Callable[..., Awaitable[Any]], Any]]:
    """``(name, method, request)`` for every unary RPC, with garbage-ish fields."""
    t, r = tables, rules
    return st.one_of(
        st.tuples(
            st.just("CreateTable"),
            st.just(t.CreateTable),
            st.builds(
                pb.CreateTableRequest,
                request_id=g.request_id,
                settings=_settings(),
                seeds=st.lists(st.binary(max_size=40), max_size=3),
                player_names=st.lists(st.text(max_size=40), max_size=5),
            ),
        ),
        st.tuples(
            st.just("JoinTable"),
            st.just(t.JoinTable),
            st.builds(
                pb.JoinTableRequest,
                table_id=g.table_id,
                request_id=g.request_id,
                expected_version=g.version,
                player_name=st.text(max_size=40),
                seat=st.none() | _U32,
            ),
        ),
        st.tuples(st.just("GetTable"), st.just(t.GetTable), st.builds(pb.GetTableRequest, table_id=g.table_id)),
        st.tuples(
            st.just("LeaveTable"),
            st.just(t.LeaveTable),
            st.builds(pb.LeaveTableRequest, table_id=g.table_id, request_id=g.request_id, expected_version=g.version),
        ),
        st.tuples(
            st.just("CloseTable"),
            st.just(t.CloseTable),
            st.builds(pb.CloseTableRequest, table_id=g.table_id, request_id=g.request_id, expected_version=g.version),
        ),
        st.tuples(
            st.just("Bid"),
            st.just(t.Bid),
            st.builds(
                pb.BidRequest,
                table_id=g.table_id,
                request_id=g.request_id,
                expected_version=g.version,
                amount=st.one_of(st.integers(0, 4), _U32),
            ),
        ),
        st.tuples(
            st.just("Play"),
            st.just(t.Play),
            st.builds(
                pb.PlayRequest,
                table_id=g.table_id,
                request_id=g.request_id,
                expected_version=g.version,
                cards=st.lists(_card(), max_size=6),
            ),
        ),
        st.tuples(
            st.just("Settle"),
            st.just(t.Settle),
            st.builds(pb.SettleRequest, table_id=g.table_id, request_id=g.request_id, expected_version=g.version),
        ),
        st.tuples(
            st.just("Classify"), st.just(r.Classify), st.builds(rpb.ClassifyRequest, variant=_ENUM, cards=_card_set())
        ),
        st.tuples(
            st.just("ListLegalMoves"),
            st.just(r.ListLegalMoves),
            st.builds(rpb.ListLegalMovesRequest, variant=_ENUM, hand=_card_set(), to_beat=_card_set()),
        ),
        st.tuples(
            st.just("Compare"),
            st.just(r.Compare),
            st.builds(rpb.CompareRequest, variant=_ENUM, a=_card_set(), b=_card_set()),
        ),
    )


_UNEXPECTED = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN}


class TestGarbageRequests:
    @settings(
        max_examples=50,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(data=st.data())
    async def test_well_typed_garbage_is_refused_precisely_and_the_server_keeps_answering(
        self, tables: TableStub, rules: RulesStub, table: Table, data: st.DataObject
    ) -> None:
        # The server, the channel and the table are shared by every example of this test.
        garbage = _Garbage(table)
        name, method, request = data.draw(_calls(tables, rules, garbage), label="call")
        metadata = data.draw(garbage.metadata, label="metadata")
        error: grpc.aio.AioRpcError | None = None
        try:
            await method(request, metadata=metadata, timeout=10)
        except grpc.aio.AioRpcError as refused:
            error = refused
        if error is not None:
            assert error.code() not in _UNEXPECTED, f"{name}: {error.code()} {error.details()}"
            info = error_info(error)
            assert info.domain == "dizhu.v1"
            assert info.reason
        assert (await view(tables, table)).table_id == table.table_id

    async def test_bytes_that_are_no_protobuf_fail_the_call_not_the_server(
        self, channel: grpc.aio.Channel, tables: TableStub, table: Table
    ) -> None:
        # Identity (de)serializers: the bytes reach the server as they are.
        raw = channel.unary_unary("/dizhu.v1.TableService/GetTable")
        for payload in (b"\xff\xff\xff\xff", b"\x0a\x80", b"\x0a\x05ab"):
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await raw(payload, timeout=10)
            # Refused as a malformed request, with the contract's details and nothing internal.
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert error_info(caught.value).reason == "INVALID_ARGUMENT"
            assert "Error" not in (caught.value.details() or "")
        valid = pb.GetTableRequest(table_id=table.table_id).SerializeToString()
        answer = pb.GetTableResponse.FromString(await raw(valid, timeout=10))
        assert answer.table.version == 1
        assert (await view(tables, table)).version == 1
