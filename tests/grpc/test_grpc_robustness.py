"""Garbage in, a precise refusal out: no request makes the referee fail unexpectedly or stop answering.

Two kinds of garbage: well-typed requests with garbage fields for every RPC (most are refused
before any table is read), and moves that real seats send at a real table with the current
version or nearly, amounts in and out of range and cards from the hand or not, which reach the
rules: each such refusal must be a game reason and change nothing, and each accepted move must
move the table on by one version and take the cards played out of the hand.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dizhu.v1 import cards_pb2, table_pb2
from dizhu.v1 import rules_service_pb2 as rpb
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import THREE, RulesStub, Table, TableStub, card_id, create_table, error_info, rid, view

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
            response = await method(request, metadata=metadata, timeout=10)
        except grpc.aio.AioRpcError as refused:
            error = refused
        if error is not None:
            assert error.code() not in _UNEXPECTED, f"{name}: {error.code()} {error.details()}"
            info = error_info(error)
            assert info.domain == "dizhu.v1"
            assert info.reason
        elif isinstance(getattr(response, "table", None), table_pb2.TableView):
            # An accepted call answers with a table the store holds at exactly that version.
            stored = (await tables.GetTable(pb.GetTableRequest(table_id=response.table.table_id))).table
            assert response.table.version == stored.version >= 1, name
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


#: The refusals a move by a real seat, on a real table, may meet past authentication.
_GAME_REASONS = {
    "NOT_YOUR_TURN",
    "BID_TOO_LOW",
    "WRONG_PHASE",
    "STALE_STATE",
    "MUST_LEAD",
    "CARDS_NOT_IN_HAND",
    "ILLEGAL_COMBINATION",
    "DOES_NOT_BEAT",
    "INVALID_ARGUMENT",
}


@pytest.fixture
def reached() -> Iterator[Counter[str]]:
    """What the moves below got (a reason, or "ACCEPTED"); after every example, they must have
    reached the rules: some moves accepted, and refused for several of the rules' reasons."""
    seen: Counter[str] = Counter()
    yield seen
    assert seen["ACCEPTED"] >= 1, seen
    assert len(set(seen) & (_GAME_REASONS - {"INVALID_ARGUMENT", "STALE_STATE"})) >= 3, seen


class TestGarbageMoves:
    @settings(
        max_examples=150,
        deadline=None,
        database=None,
        derandomize=True,  # the same moves every run (the deal still varies)
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(data=st.data())
    async def test_moves_of_real_seats_reach_the_rules_and_every_answer_keeps_the_table_whole(
        self, tables: TableStub, table: Table, reached: Counter[str], data: st.DataObject
    ) -> None:
        # The server, the channel and the table are shared by every example of this test. Every
        # example draws the same things whatever the table's state (hypothesis replays examples):
        # indices into the table's cards, not the cards.
        chosen = data.draw(st.integers(0, 9), label="seat (from 3: the seat to act)")
        offset = data.draw(st.sampled_from([0] * 8 + [-1, 1]), label="version offset")
        expected = data.draw(st.integers(0, 3), label="the call (0: not the one the phase expects)") > 0
        amount = data.draw(st.sampled_from([0, 1, 2, 3, 0, 1, 2, 3, 4]), label="amount")
        count = data.draw(st.sampled_from([0, 1, 1, 1, 2, 2, 3, 4]), label="cards played")
        source = st.sampled_from(["hand"] * 6 + ["other", "garbage"])
        picks = data.draw(st.lists(st.tuples(source, st.integers(0, 40)), min_size=4, max_size=4), label="cards")
        before = await view(tables, table)
        seat = (chosen if chosen < table.players or not before.HasField("turn_seat") else before.turn_seat) % 3
        views = [await view(tables, table, other) for other in range(table.players)]
        hand = list(views[seat].your_hand)
        others = [c for other in views if other is not views[seat] for c in other.your_hand]
        version = before.version + offset
        request: pb.BidRequest | pb.PlayRequest
        if expected == (before.phase == table_pb2.PHASE_AUCTION):
            request = pb.BidRequest(table_id=table.table_id, request_id=rid(), expected_version=version, amount=amount)
            call = tables.Bid(request, metadata=table.seat(seat))
        else:
            cards = []
            for where, index in picks[:count]:
                if where == "hand" and hand:
                    cards.append(hand[index % len(hand)])
                elif where == "other" and others:
                    cards.append(others[index % len(others)])
                else:
                    cards.append(cards_pb2.Card(rank=index % 18, suit=index % 6))  # type: ignore[arg-type]
            request = pb.PlayRequest(table_id=table.table_id, request_id=rid(), expected_version=version, cards=cards)
            call = tables.Play(request, metadata=table.seat(seat))
        refusal: grpc.aio.AioRpcError | None = None
        try:
            response = await call
        except grpc.aio.AioRpcError as error:
            refusal = error
        if refusal is not None:
            info = error_info(refusal)
            assert info.reason in _GAME_REASONS, f"{refusal.code()} {refusal.details()}"
            reached[info.reason] += 1
            assert (await view(tables, table)).version == before.version, "a refusal changed the table"
            return
        reached["ACCEPTED"] += 1
        assert version == before.version
        after = response.table
        assert after.version == before.version + 1
        assert (await view(tables, table)).version == after.version
        if isinstance(request, pb.PlayRequest) and after.round == before.round:
            left = [card_id(c) for c in after.your_hand]
            assert sorted(left + [card_id(c) for c in request.cards]) == sorted(card_id(c) for c in hand)
