"""The contract and the referee cannot drift apart: every reason of the error table, produced for real.

The table of reasons and status codes is read from the comment of
``proto/dizhu/v1/table_service.proto`` ("The reasons and their codes"), and each reason's
metadata keys from its comment in ``errors.proto`` ("Metadata: ..."). Every reason of the
table needs at least one *producing case* below: a function registered with
``@produces("REASON", ...)`` that makes a real call to a real referee fail with it. For every
case the test checks what the contract promises:

* the status code is the table's;
* a ``google.rpc.ErrorInfo`` with domain ``dizhu.v1`` and the reason;
* ``metadata["table_id"]`` whenever a table is concerned (the case says which), and every
  key ``errors.proto`` documents for the reason;
* a ``google.rpc.BadRequest`` with at least one field violation on every INVALID_ARGUMENT;
* a ``google.rpc.RetryInfo`` on every RESOURCE_EXHAUSTED.

A reason added to the table without a producing case fails loudly, naming it: covering a
new reason only takes a new ``@produces`` function. The table, ``ErrorReason`` in
``errors.proto`` and the table in ``docs/api.md`` are also checked against each other.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis.asyncio
from google.rpc import error_details_pb2
from grpc_helpers import (
    SEED,
    THREE,
    RulesStub,
    Table,
    TableStub,
    as_seat,
    bad_request,
    bid_request,
    bid_to_play,
    card,
    create_table,
    error_info,
    play_request,
    referee_over_its_own_redis,
    rid,
    view,
)
from grpc_status import rpc_status
from redis_servers import redis_of_each_version

from dizhu.config import ServerConfig
from dizhu.embedded_redis import EmbeddedRedis
from dizhu.process import create_server
from dizhu.store import TableStore
from dizhu.v1 import cards_pb2, rules_service_pb2, table_pb2, table_service_pb2_grpc
from dizhu.v1 import table_service_pb2 as pb

#: Run against each supported Redis version (tests/conftest.py).
redis_url = redis_of_each_version()

ROOT = Path(__file__).resolve().parents[2]
TABLE_SERVICE_PROTO = ROOT / "proto" / "dizhu" / "v1" / "table_service.proto"
ERRORS_PROTO = ROOT / "proto" / "dizhu" / "v1" / "errors.proto"
API_MD = ROOT / "docs" / "api.md"
DOMAIN = "dizhu.v1"


# -- what the contract says ---------------------------------------------------------------


def _comment_lines(text: str) -> list[str]:
    return [line.strip()[2:].strip() for line in text.splitlines() if line.strip().startswith("//")]


def error_table(proto_text: str) -> dict[str, str]:
    """``reason -> status code name`` from the table in TableService's comment."""
    lines = _comment_lines(proto_text)
    start = next(i for i, line in enumerate(lines) if "The reasons and their codes" in line)
    table: dict[str, str] = {}
    for line in lines[start + 1 :]:
        if not line or line.startswith("See "):
            break
        words = line.split()
        assert len(words) % 2 == 0, f"an error table row is not reason/code pairs: {line!r}"
        for reason, code in zip(words[::2], words[1::2], strict=True):
            assert reason not in table, f"{reason} is listed twice in the error table"
            table[reason] = code
    assert table, "no error table found in table_service.proto"
    return table


@dataclasses.dataclass(frozen=True)
class ReasonDoc:
    """What ``errors.proto`` says of one ``ErrorReason`` value."""

    code: str
    metadata_keys: tuple[str, ...]


def error_reasons(proto_text: str) -> dict[str, ReasonDoc]:
    """Every ``ErrorReason`` value (but UNSPECIFIED): the code its comment starts with, its metadata keys."""
    reasons: dict[str, ReasonDoc] = {}
    comment: list[str] = []
    for raw in proto_text.splitlines():
        line = raw.strip()
        if line.startswith("//"):
            comment.append(line[2:].strip())
            continue
        value = re.match(r"ERROR_REASON_([A-Z_]+)\s*=\s*\d+;", line)
        if value and value.group(1) != "UNSPECIFIED":
            text = " ".join(comment)
            code = text.split(".", 1)[0].strip()
            keys: tuple[str, ...] = ()
            listed = re.search(r'Metadata:\s*((?:"[a-z_]+"(?:\s*,\s*|\s+and\s+)?)+)', text)
            if listed:
                keys = tuple(re.findall(r'"([a-z_]+)"', listed.group(1)))
            reasons[value.group(1)] = ReasonDoc(code, keys)
        comment = []
    return reasons


def api_md_error_table(markdown: str) -> dict[str, ReasonDoc]:
    """``reason -> (code, extra metadata keys)`` from the table of docs/api.md's "Errors" section."""
    rows: dict[str, ReasonDoc] = {}
    for line in markdown.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 4 and re.fullmatch(r"`[A-Z_]+`", cells[0]):
            rows[cells[0].strip("`")] = ReasonDoc(cells[1], tuple(re.findall(r"`([a-z_]+)`", cells[3])))
    return rows


TABLE = error_table(TABLE_SERVICE_PROTO.read_text())
REASONS = error_reasons(ERRORS_PROTO.read_text())


# -- the producing cases ------------------------------------------------------------------


@dataclasses.dataclass
class World:
    """What a case may use: stubs to the test's referee, its store, the test Redis."""

    tables: TableStub
    rules: RulesStub
    store: TableStore
    redis_url: str

    async def table(self, **settings: Any) -> Table:
        """A 3p table in its auction, dealt from SEED with seat 0 dealing: seat 0 bids first."""
        return await create_table(self.tables, THREE, seeds=[SEED], first_dealer=0, **settings)


@dataclasses.dataclass(frozen=True)
class Produced:
    """A refused call and the table it concerned (None when no table is concerned)."""

    error: grpc.aio.AioRpcError
    table_id: str | None


Produce = Callable[[World], Awaitable[Produced]]


@dataclasses.dataclass(frozen=True)
class Case:
    reason: str
    name: str
    produce: Produce


CASES: list[Case] = []


def produces(reason: str, name: str) -> Callable[[Produce], Produce]:
    """Register a function as a producing case of ``reason``."""

    def register(produce: Produce) -> Produce:
        CASES.append(Case(reason, name, produce))
        return produce

    return register


async def fails(call: Awaitable[Any] | AsyncIterable[Any]) -> grpc.aio.AioRpcError:
    """The error a unary call (awaited) or a stream (read to its end) fails with."""
    try:
        if isinstance(call, AsyncIterable):
            async for _ in call:
                pass
        else:
            await call
    except grpc.aio.AioRpcError as error:
        return error
    raise AssertionError("the call succeeded; the case should make it fail")


def _three_player() -> table_pb2.TableSettings:
    return table_pb2.TableSettings(variant=THREE)


TableCall = Callable[[TableStub, Table], Awaitable[Any]]


def on_a_table(reason: str, name: str, call: TableCall) -> None:
    """Register a case of ``reason``: ``call`` on a fresh table in its auction (``World.table``)."""

    @produces(reason, name)
    async def _(world: World) -> Produced:
        table = await world.table()
        return Produced(await fails(call(world.tables, table)), table.table_id)


on_a_table(
    "NOT_YOUR_TURN", "a bid out of turn", lambda t, table: t.Bid(bid_request(table, 1, 1), metadata=table.seat(2))
)


@produces("ILLEGAL_COMBINATION", "two cards of different ranks")
async def _(world: World) -> Produced:
    table = await world.table()
    playing = await bid_to_play(world.tables, table)
    low = playing.your_hand[0]
    other = next(c for c in playing.your_hand if c.rank not in (low.rank, *_JOKERS))
    error = await fails(world.tables.Play(play_request(table, playing.version, [low, other]), metadata=table.seat(0)))
    return Produced(error, table.table_id)


_JOKERS = (cards_pb2.RANK_BLACK_JOKER, cards_pb2.RANK_RED_JOKER)


@produces("DOES_NOT_BEAT", "a lower single on a higher one")
async def _(world: World) -> Produced:
    table = await world.table()
    playing = await bid_to_play(world.tables, table)
    await world.tables.Play(play_request(table, playing.version, [playing.your_hand[-1]]), metadata=table.seat(0))
    follower = await view(world.tables, table, 1)
    error = await fails(
        world.tables.Play(play_request(table, follower.version, [follower.your_hand[0]]), metadata=table.seat(1))
    )
    return Produced(error, table.table_id)


@produces("CARDS_NOT_IN_HAND", "another seat's card")
async def _(world: World) -> Produced:
    table = await world.table()
    playing = await bid_to_play(world.tables, table)
    theirs = (await view(world.tables, table, 1)).your_hand[0]
    error = await fails(world.tables.Play(play_request(table, playing.version, [theirs]), metadata=table.seat(0)))
    return Produced(error, table.table_id)


@produces("CARDS_NOT_IN_HAND", "one card listed twice")
async def _(world: World) -> Produced:
    table = await world.table()
    playing = await bid_to_play(world.tables, table)
    mine = playing.your_hand[0]
    error = await fails(world.tables.Play(play_request(table, playing.version, [mine, mine]), metadata=table.seat(0)))
    return Produced(error, table.table_id)


@produces("MUST_LEAD", "the leader passes")
async def _(world: World) -> Produced:
    table = await world.table()
    playing = await bid_to_play(world.tables, table)
    return Produced(
        await fails(world.tables.Play(play_request(table, playing.version, []), metadata=table.seat(0))), table.table_id
    )


@produces("BID_TOO_LOW", "a bid equal to the highest")
async def _(world: World) -> Produced:
    table = await world.table()
    first = await world.tables.Bid(bid_request(table, 1, 2), metadata=table.seat(0))
    error = await fails(world.tables.Bid(bid_request(table, first.table.version, 2), metadata=table.seat(1)))
    return Produced(error, table.table_id)


@produces("WRONG_PHASE", "a play during the auction")
async def _(world: World) -> Produced:
    table = await world.table()
    hand = (await view(world.tables, table, 0)).your_hand
    return Produced(
        await fails(world.tables.Play(play_request(table, 1, [hand[0]]), metadata=table.seat(0))), table.table_id
    )


@produces("WRONG_PHASE", "Settle before any round ended")
async def _(world: World) -> Produced:
    table = await world.table()
    error = await fails(
        world.tables.Settle(pb.SettleRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(0))
    )
    return Produced(error, table.table_id)


on_a_table(
    "STALE_STATE", "an old expected_version", lambda t, table: t.Bid(bid_request(table, 9, 1), metadata=table.seat(0))
)


@produces("TABLE_NOT_FOUND", "GetTable of an unknown table")
async def _(world: World) -> Produced:
    return Produced(await fails(world.tables.GetTable(pb.GetTableRequest(table_id="no-such-table"))), "no-such-table")


@produces("TABLE_NOT_FOUND", "GetReplay of a round not finished")
async def _(world: World) -> Produced:
    table = await world.table()
    error = await fails(world.tables.GetReplay(pb.GetReplayRequest(table_id=table.table_id, round=1)))
    return Produced(error, table.table_id)


@produces("TABLE_FULL", "JoinTable on a full table")
async def _(world: World) -> Produced:
    table = await world.table()
    request = pb.JoinTableRequest(table_id=table.table_id, request_id=rid(), player_name="late")
    return Produced(await fails(world.tables.JoinTable(request)), table.table_id)


@produces("SEAT_TAKEN", "JoinTable on an occupied seat")
async def _(world: World) -> Produced:
    table = await create_table(world.tables, THREE, players=1)
    request = pb.JoinTableRequest(table_id=table.table_id, request_id=rid(), player_name="eve", seat=0)
    return Produced(await fails(world.tables.JoinTable(request)), table.table_id)


@produces("TABLE_CLOSED", "a bid at a closed table")
async def _(world: World) -> Produced:
    table = await world.table()
    closed = await world.tables.CloseTable(
        pb.CloseTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.creator
    )
    error = await fails(world.tables.Bid(bid_request(table, closed.table.version, 1), metadata=table.seat(0)))
    return Produced(error, table.table_id)


def _unauthenticated(name: str, metadata: tuple[tuple[str, str], ...]) -> None:
    on_a_table("UNAUTHENTICATED", name, lambda t, table: t.Bid(bid_request(table, 1, 1), metadata=metadata))


_unauthenticated("a bid without a token", ())
_unauthenticated("Basic credentials", (("authorization", "Basic YWxhZGRpbjpvcGVuc2VzYW1l"),))
_unauthenticated("a bare Bearer", (("authorization", "Bearer"),))
_unauthenticated("a 4 KB token", as_seat("t" * 4096))
_unauthenticated("a token of no table", as_seat("not-a-token-of-this-table"))


@produces("UNAUTHENTICATED", "GetTable with a malformed authorization")
async def _(world: World) -> Produced:
    table = await world.table()
    request = pb.GetTableRequest(table_id=table.table_id)
    return Produced(
        await fails(world.tables.GetTable(request, metadata=(("authorization", "Basic abc"),))), table.table_id
    )


@produces("UNAUTHENTICATED", "WatchTable with a revoked token")
async def _(world: World) -> Produced:
    table = await world.table()
    await world.tables.LeaveTable(
        pb.LeaveTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(0)
    )
    stream = world.tables.WatchTable(pb.WatchTableRequest(table_id=table.table_id), metadata=table.seat(0))
    return Produced(await fails(stream), table.table_id)


@produces("UNAUTHENTICATED", "CreateTable without the API key")
async def _(world: World) -> Produced:
    referee = await create_server(ServerConfig(address="127.0.0.1:0", api_keys=("the-key",)), world.store)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{referee.port}") as channel:
            stub = table_service_pb2_grpc.TableServiceStub(channel)
            request = pb.CreateTableRequest(request_id=rid(), settings=_three_player())
            return Produced(await fails(stub.CreateTable(request)), None)
    finally:
        await referee.stop(0)


def _permission_denied(name: str, call: TableCall) -> None:
    on_a_table("PERMISSION_DENIED", name, call)


_permission_denied("the creator token bids", lambda t, table: t.Bid(bid_request(table, 1, 1), metadata=table.creator))
_permission_denied(
    "the creator token plays", lambda t, table: t.Play(play_request(table, 1, []), metadata=table.creator)
)
_permission_denied(
    "the creator token settles",
    lambda t, table: t.Settle(pb.SettleRequest(table_id=table.table_id, request_id=rid()), metadata=table.creator),
)
_permission_denied(
    "the creator token leaves",
    lambda t, table: t.LeaveTable(
        pb.LeaveTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.creator
    ),
)
_permission_denied(
    "a seat token closes the table",
    lambda t, table: t.CloseTable(
        pb.CloseTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(1)
    ),
)


def _invalid(name: str, call: TableCall) -> None:
    on_a_table("INVALID_ARGUMENT", name, call)


_invalid("Bid with expected_version 0", lambda t, table: t.Bid(bid_request(table, 0, 1), metadata=table.seat(0)))
_invalid("Play with expected_version 0", lambda t, table: t.Play(play_request(table, 0, []), metadata=table.seat(0)))
_invalid("a bid of 4", lambda t, table: t.Bid(bid_request(table, 1, 4), metadata=table.seat(0)))
_invalid("a card with no rank", lambda t, table: t.Play(play_request(table, 1, [card(0, 1)]), metadata=table.seat(0)))
_invalid(
    "a second-deck card in 3p",
    lambda t, table: t.Play(play_request(table, 1, [card(cards_pb2.RANK_ACE, 4, copy=1)]), metadata=table.seat(0)),
)
_invalid("GetReplay of round 0", lambda t, table: t.GetReplay(pb.GetReplayRequest(table_id=table.table_id, round=0)))
_invalid(
    "a request id over 64 characters",
    lambda t, table: t.Bid(bid_request(table, 1, 1, request_id="r" * 65), metadata=table.seat(0)),
)
_invalid(
    "JoinTable with an empty name",
    lambda t, table: t.JoinTable(pb.JoinTableRequest(table_id=table.table_id, request_id=rid(), player_name="")),
)


@produces("INVALID_ARGUMENT", "a malformed table id (no table concerned)")
async def _(world: World) -> Produced:
    return Produced(await fails(world.tables.GetTable(pb.GetTableRequest(table_id="has space"))), None)


@produces("INVALID_ARGUMENT", "CreateTable without a variant (no table yet)")
async def _(world: World) -> Produced:
    request = pb.CreateTableRequest(request_id=rid(), settings=table_pb2.TableSettings())
    return Produced(await fails(world.tables.CreateTable(request)), None)


@produces("INVALID_ARGUMENT", "Classify of a card listed twice (no table)")
async def _(world: World) -> Produced:
    ace = card(cards_pb2.RANK_ACE, cards_pb2.SUIT_SPADES)
    request = rules_service_pb2.ClassifyRequest(variant=THREE, cards=cards_pb2.CardSet(cards=[ace, ace]))
    return Produced(await fails(world.rules.Classify(request)), None)


@produces("REQUEST_ID_REUSED", "the same request id for another bid")
async def _(world: World) -> Produced:
    table = await world.table()
    await world.tables.Bid(bid_request(table, 1, 1, request_id="bid-once"), metadata=table.seat(0))
    error = await fails(world.tables.Bid(bid_request(table, 1, 2, request_id="bid-once"), metadata=table.seat(0)))
    return Produced(error, table.table_id)


@produces("REQUEST_ID_REUSED", "the same request id for another method")
async def _(world: World) -> Produced:
    table = await world.table()
    await world.tables.Bid(bid_request(table, 1, 1, request_id="used"), metadata=table.seat(0))
    error = await fails(
        world.tables.Settle(pb.SettleRequest(table_id=table.table_id, request_id="used"), metadata=table.seat(0))
    )
    return Produced(error, table.table_id)


@produces("SEQUENCE_OUT_OF_RANGE", "WatchTable after a sequence not reached")
async def _(world: World) -> Produced:
    table = await world.table()
    stream = world.tables.WatchTable(pb.WatchTableRequest(table_id=table.table_id, after_sequence=10**6))
    return Produced(await fails(stream), table.table_id)


@produces("UNAVAILABLE", "the store went away")
async def _(world: World) -> Produced:
    async with referee_over_its_own_redis() as own:
        table = await create_table(own.tables, THREE)
        await own.server.astop()
        error = await fails(own.tables.GetTable(pb.GetTableRequest(table_id=table.table_id)))
        return Produced(error, table.table_id)


@produces("INTERNAL", "a table the store holds corrupted")
async def _(world: World) -> Produced:
    table = await world.table()
    saved = await world.store.save(table.table_id, 1, 2, b'{"v": 1, "oops": true}', [], "anon", None, None)
    assert saved.outcome.value == "SAVED"
    error = await fails(world.tables.Bid(bid_request(table, 2, 1, request_id="req-corrupt"), metadata=table.seat(0)))
    return Produced(error, table.table_id)


@contextlib.asynccontextmanager
async def _referee(store: TableStore, **config: Any) -> AsyncIterator[TableStub]:
    """A referee of its own over ``store``, configured with ``config`` (e.g. its limits on)."""
    referee = await create_server(ServerConfig(address="127.0.0.1:0", **config), store)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{referee.port}") as channel:
            yield table_service_pb2_grpc.TableServiceStub(channel)
    finally:
        await referee.stop(0)


_SLOW = 0.001  # per second: a bucket that does not refill within a test


@produces("RATE_LIMITED", "a second call with one call's burst (decided unread: no table concerned)")
async def _(world: World) -> Produced:
    table = await world.table()
    async with _referee(world.store, limits="on", rate_limit=_SLOW) as tables:
        await tables.GetTable(pb.GetTableRequest(table_id=table.table_id))
        return Produced(await fails(tables.GetTable(pb.GetTableRequest(table_id=table.table_id))), None)


@produces("QUOTA_EXCEEDED", "a second open table with a quota of one (no table yet)")
async def _(world: World) -> Produced:
    async with _referee(world.store, limits="on", max_open_tables=1) as tables:
        await tables.CreateTable(pb.CreateTableRequest(request_id=rid(), settings=_three_player()))
        error = await fails(tables.CreateTable(pb.CreateTableRequest(request_id=rid(), settings=_three_player())))
        return Produced(error, None)


@produces("STORE_FULL", "a bid when Redis has no memory left")
async def _(world: World) -> Produced:
    server = EmbeddedRedis(appendonly=False)
    await server.astart()
    client = redis.asyncio.Redis.from_url(server.url)
    try:
        store = TableStore(client)
        await store.load_scripts()
        async with _referee(store) as tables:
            table = await create_table(tables, THREE, seeds=[SEED], first_dealer=0)
            used = int((await client.info("memory"))["used_memory"])
            await client.config_set("maxmemory-policy", "noeviction")
            await client.config_set("maxmemory", used // 2)
            error = await fails(tables.Bid(bid_request(table, 1, 1), metadata=table.seat(0)))
            return Produced(error, table.table_id)
    finally:
        await client.aclose()
        await server.astop()


# -- the checks ---------------------------------------------------------------------------


@pytest.fixture
def world(tables: TableStub, rules: RulesStub, store: TableStore, redis_url: str) -> World:
    return World(tables, rules, store, redis_url)


class TestTheContractAgreesWithItself:
    def test_the_error_table_lists_every_error_reason_with_its_code(self) -> None:
        assert set(TABLE) == set(REASONS), "table_service.proto's error table and errors.proto's ErrorReason differ"
        wrong = {reason: (code, REASONS[reason].code) for reason, code in TABLE.items() if REASONS[reason].code != code}
        assert not wrong, f"(table, errors.proto) codes disagree: {wrong}"

    def test_docs_api_md_lists_every_reason_with_its_code_and_metadata(self) -> None:
        documented = api_md_error_table(API_MD.read_text())
        assert set(documented) == set(TABLE), "docs/api.md's error table and the contract's differ"
        wrong = {
            reason: (doc, REASONS[reason])
            for reason, doc in documented.items()
            if doc.code != TABLE[reason] or set(doc.metadata_keys) != set(REASONS[reason].metadata_keys)
        }
        assert not wrong, f"docs/api.md disagrees with errors.proto: {wrong}"

    def test_the_parsers_read_what_they_should(self) -> None:
        """Not vacuous: the table has the known reasons, and keys are found where documented."""
        assert TABLE["NOT_YOUR_TURN"] == "FAILED_PRECONDITION"
        assert TABLE["SEQUENCE_OUT_OF_RANGE"] == "OUT_OF_RANGE"
        assert REASONS["DOES_NOT_BEAT"].metadata_keys == ("to_beat_kind", "to_beat_size", "to_beat_main_rank")
        assert REASONS["MUST_LEAD"].metadata_keys == ()


@pytest.mark.parametrize("reason", sorted(TABLE))
def test_every_reason_of_the_error_table_has_a_producing_case(reason: str) -> None:
    assert any(case.reason == reason for case in CASES), (
        f"{reason} is in table_service.proto's error table but no test produces it: add a "
        f'@produces("{reason}", ...) case to {Path(__file__).name}'
    )


@pytest.mark.parametrize("case", CASES, ids=[f"{case.reason}: {case.name}" for case in CASES])
async def test_a_real_refusal_carries_what_the_contract_promises(world: World, case: Case) -> None:
    assert case.reason in TABLE, f"{case.reason} is not in the contract's error table"
    produced = await case.produce(world)
    error = produced.error
    assert error.code().name == TABLE[case.reason], f"{error.code()} {error.details()}"
    info = error_info(error)
    assert (info.domain, info.reason) == (DOMAIN, case.reason), error.details()
    metadata = dict(info.metadata)
    if produced.table_id is not None:
        assert metadata.get("table_id") == produced.table_id, f"table_id missing or wrong in {metadata}"
    missing = [key for key in REASONS[case.reason].metadata_keys if not metadata.get(key)]
    assert not missing, f"documented metadata {missing} missing from {metadata}"
    if TABLE[case.reason] == "RESOURCE_EXHAUSTED":
        status = rpc_status.from_call(error)
        assert status is not None
        assert any(detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR) for detail in status.details), "no RetryInfo"
    if TABLE[case.reason] == "INVALID_ARGUMENT":
        violations = bad_request(error)
        assert violations is not None, "INVALID_ARGUMENT without a google.rpc.BadRequest"
        assert all(v.field and v.description for v in violations.field_violations)
        assert violations.field_violations
