"""Helpers for driving the referee through its generated aio stubs, as a client would.

- ``create_table``: a table with pre-assigned players and their tokens (:class:`Table`);
- ``as_seat``: the ``authorization`` metadata of a token;
- ``error_info`` / ``bad_request`` / ``refused``: the ``google.rpc`` details of a refusal;
- ``decide`` / ``send`` / ``act``: one legal decision for the seat to act, chosen with
  ``RulesService.ListLegalMoves`` like a bot would;
- ``play_round`` / ``play_until_closed``: random but legal games;
- ``seeds_dealing`` / ``bomb_first``: deals that hold bombs (and the rocket), and seats that
  play them whenever they may;
- ``card_id`` / ``cards_in``: the contract's card ids, for comparing card sets;
- ``referee_over_its_own_redis``: a referee whose Redis a test may fill or stop.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import random
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis.asyncio
from google.protobuf.message import Message
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from dizhu.client.cards import card_id  # the contract's card id (docs/api.md, "Card id"): the SDK's
from dizhu.config import ServerConfig
from dizhu.embedded_redis import EmbeddedRedis
from dizhu.process import create_server
from dizhu.store import TableStore
from dizhu.v1 import cards_pb2, rules_service_pb2, rules_service_pb2_grpc, table_pb2, table_service_pb2_grpc
from dizhu.v1 import table_service_pb2 as pb

THREE = cards_pb2.VARIANT_THREE_PLAYER
FOUR = cards_pb2.VARIANT_FOUR_PLAYER
PLAYERS = {THREE: 3, FOUR: 4}
DOMAIN = "dizhu.v1"
Metadata = tuple[tuple[str, str], ...]
TableStub = table_service_pb2_grpc.TableServiceStub
RulesStub = rules_service_pb2_grpc.RulesServiceStub

#: A fixed round seed, so that the deal (and hence which plays are refused why) is known.
SEED = bytes(range(32))


def rid() -> str:
    """A fresh request id."""
    return uuid.uuid4().hex


def as_seat(token: str) -> Metadata:
    """The call metadata that authenticates with ``token``."""
    return (("authorization", f"Bearer {token}"),)


@dataclasses.dataclass(frozen=True)
class Table:
    """A created table and every token its creator got back."""

    table_id: str
    creator_token: str
    tokens: dict[int, str]
    variant: cards_pb2.Variant
    created: pb.CreateTableResponse

    @property
    def players(self) -> int:
        return PLAYERS[self.variant]

    def seat(self, seat: int) -> Metadata:
        """The metadata of ``seat``'s token."""
        return as_seat(self.tokens[seat])

    @property
    def creator(self) -> Metadata:
        return as_seat(self.creator_token)


async def create_table(
    tables: TableStub,
    variant: cards_pb2.Variant = THREE,
    *,
    players: int | None = None,
    round_limit: int = 0,
    seeds: Sequence[bytes] = (),
    next_round: table_pb2.NextRound = table_pb2.NEXT_ROUND_AUTOMATIC,
    first_dealer: int | None = None,
    request_id: str | None = None,
    clock_settings: table_pb2.ClockSettings | None = None,
    max_redeals: int | None = None,
) -> Table:
    """A table whose first ``players`` seats (default: all) are pre-assigned to p0, p1, ..."""
    count = PLAYERS[variant] if players is None else players
    settings = table_pb2.TableSettings(variant=variant, round_limit=round_limit, next_round=next_round)
    if clock_settings is not None:
        settings.clock.CopyFrom(clock_settings)
    if max_redeals is not None:
        settings.max_redeals = max_redeals
    if first_dealer is not None:
        settings.first_dealer = first_dealer
    created = await tables.CreateTable(
        pb.CreateTableRequest(
            request_id=request_id or rid(),
            settings=settings,
            seeds=list(seeds),
            player_names=[f"p{seat}" for seat in range(count)],
        )
    )
    return Table(
        table_id=created.table_id,
        creator_token=created.creator_token,
        tokens={entry.seat: entry.token for entry in created.seat_tokens},
        variant=variant,
        created=created,
    )


def error_info(error: grpc.aio.AioRpcError) -> error_details_pb2.ErrorInfo:
    """The ErrorInfo of a refusal (fails the test if there is none)."""
    status = rpc_status.from_call(error)
    assert status is not None, f"no google.rpc.Status in {error.code()}: {error.details()}"
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return info
    raise AssertionError(f"no ErrorInfo in {error.code()}: {error.details()}")


def bad_request(error: grpc.aio.AioRpcError) -> error_details_pb2.BadRequest | None:
    """The BadRequest of a refusal, if it carries one."""
    status = rpc_status.from_call(error)
    for detail in status.details if status is not None else ():
        violations = error_details_pb2.BadRequest()
        if detail.Unpack(violations):
            return violations
    return None


async def refused(
    call: Awaitable[Any], code: grpc.StatusCode, reason: str, *, table_id: str | None = None
) -> error_details_pb2.ErrorInfo:
    """Await ``call``, assert it fails with ``code`` and ``reason`` (domain dizhu.v1); its ErrorInfo."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    error = caught.value
    assert error.code() == code, f"{error.code()} {error.details()}"
    info = error_info(error)
    assert (info.reason, info.domain) == (reason, DOMAIN), error.details()
    if table_id is not None:
        assert info.metadata["table_id"] == table_id
    return info


async def invalid(call: Awaitable[Any], field: str) -> error_details_pb2.BadRequest:
    """Await ``call``, assert INVALID_ARGUMENT with a BadRequest naming ``field``."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    error = caught.value
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, f"{error.code()} {error.details()}"
    info = error_info(error)
    assert (info.reason, info.domain) == ("INVALID_ARGUMENT", DOMAIN)
    violations = bad_request(error)
    assert violations is not None, "INVALID_ARGUMENT without a BadRequest"
    fields = [violation.field for violation in violations.field_violations]
    assert field in fields, fields
    return violations


def cards_in(cards: Iterable[cards_pb2.Card]) -> list[int]:
    """The ids of ``cards``, sorted."""
    return sorted(card_id(card) for card in cards)


def card(rank: int, suit: int, copy: int = 0) -> cards_pb2.Card:
    return cards_pb2.Card(rank=rank, suit=suit, copy=copy)  # type: ignore[arg-type]


async def view(tables: TableStub, table: Table, seat: int | None = None) -> table_pb2.TableView:
    """The table as ``seat`` (None: a spectator) sees it."""
    metadata = table.seat(seat) if seat is not None else ()
    return (await tables.GetTable(pb.GetTableRequest(table_id=table.table_id), metadata=metadata)).table


def to_beat(table_view: table_pb2.TableView) -> list[cards_pb2.Card]:
    """The cards the seat to act must beat; empty when it leads."""
    plays = [play for play in table_view.trick.plays if play.cards]
    if plays and plays[-1].seat != table_view.turn_seat:
        return list(plays[-1].cards)
    return []


@dataclasses.dataclass(frozen=True)
class Decision:
    """A bid (``amount``) in the auction, or cards (none: a pass) in the play."""

    amount: int | None = None
    cards: tuple[cards_pb2.Card, ...] = ()


async def legal_moves(rules: RulesStub, table_view: table_pb2.TableView) -> rules_service_pb2.ListLegalMovesResponse:
    """What the hand in ``table_view`` (a seat's view, its turn) may play now."""
    request = rules_service_pb2.ListLegalMovesRequest(
        variant=table_view.settings.variant, hand=cards_pb2.CardSet(cards=table_view.your_hand)
    )
    beaten = to_beat(table_view)
    if beaten:
        request.to_beat.cards.extend(beaten)
    return await rules.ListLegalMoves(request)


async def decide(rules: RulesStub, table_view: table_pb2.TableView, rng: random.Random) -> Decision:
    """A random legal decision for the seat whose view (on its turn) is ``table_view``."""
    if table_view.phase == table_pb2.PHASE_AUCTION:
        return Decision(amount=rng.choice([0, *range(table_view.highest_bid + 1, 4)]))
    assert table_view.phase == table_pb2.PHASE_PLAY, table_pb2.Phase.Name(table_view.phase)
    moves = await legal_moves(rules, table_view)
    options = [tuple(move.cards) for move in moves.moves]
    if moves.can_pass:
        options.append(())
    return Decision(cards=rng.choice(options))


#: Whether the hands of a deal, by seat, are what a test needs.
Dealt = Callable[[list[list[cards_pb2.Card]]], bool]
_DOUBLING_KINDS = (cards_pb2.COMBINATION_KIND_BOMB, cards_pb2.COMBINATION_KIND_ROCKET)


def _rank_counts(hand: list[cards_pb2.Card]) -> Counter[int]:
    return Counter(card.rank for card in hand)


def holds_bomb_and_rocket_3p(hands: list[list[cards_pb2.Card]]) -> bool:
    """A seat holds the rocket and a seat holds a bomb."""
    jokers = {cards_pb2.RANK_BLACK_JOKER, cards_pb2.RANK_RED_JOKER}
    return any(jokers <= set(_rank_counts(hand)) for hand in hands) and any(
        max(_rank_counts(hand).values()) >= 4 for hand in hands
    )


def holds_small_and_big_bombs_4p(hands: list[list[cards_pb2.Card]]) -> bool:
    """A seat holds six or more of a rank, and another four or five of one."""
    big = [seat for seat, hand in enumerate(hands) if max(_rank_counts(hand).values()) >= 6]
    small = [seat for seat, hand in enumerate(hands) if {4, 5} & set(_rank_counts(hand).values())]
    return bool(big) and bool(set(small) - set(big[:1]))


async def seeds_dealing(
    tables: TableStub, variant: cards_pb2.Variant, dealt: Dealt, attempts: int = 60
) -> AsyncIterator[bytes]:
    """The round seeds ``bytes([n]) * 32`` (n below ``attempts``) whose first deal, seat 0 dealing,
    ``dealt`` accepts (each probed on a table of its own)."""
    for attempt in range(attempts):
        seed = bytes([attempt]) * 32
        probe = await create_table(tables, variant, seeds=[seed], first_dealer=0)
        if dealt([list((await view(tables, probe, seat)).your_hand) for seat in range(probe.players)]):
            yield seed


def bomb_first(
    moves: rules_service_pb2.ListLegalMovesResponse, rng: random.Random
) -> rules_service_pb2.LegalMove | None:
    """A bomb or the rocket whenever one is legal, else any legal move or a pass (None)."""
    doubling = [move for move in moves.moves if move.combination.kind in _DOUBLING_KINDS]
    options: list[rules_service_pb2.LegalMove | None] = [*(doubling or moves.moves)]
    if moves.can_pass and not doubling:
        options.append(None)
    return rng.choice(options)


async def send(
    tables: TableStub,
    table: Table,
    seat: int,
    version: int,
    decision: Decision,
    *,
    request_id: str | None = None,
) -> pb.BidResponse | pb.PlayResponse:
    """Send ``decision`` for ``seat`` at ``version``."""
    if decision.amount is not None:
        return await tables.Bid(
            pb.BidRequest(
                table_id=table.table_id,
                request_id=request_id or rid(),
                expected_version=version,
                amount=decision.amount,
            ),
            metadata=table.seat(seat),
        )
    return await tables.Play(
        pb.PlayRequest(
            table_id=table.table_id,
            request_id=request_id or rid(),
            expected_version=version,
            cards=list(decision.cards),
        ),
        metadata=table.seat(seat),
    )


Observer = Callable[[int | None, Message], None]


async def act(
    tables: TableStub, rules: RulesStub, table: Table, rng: random.Random, observe: Observer | None = None
) -> table_pb2.TableView:
    """One legal decision by the seat to act; the table as that seat sees it afterwards.

    ``observe(seat, response)`` sees every GetTable / Bid / Play response on the way.
    """
    public = await tables.GetTable(pb.GetTableRequest(table_id=table.table_id))
    if observe is not None:
        observe(None, public)
    assert public.table.HasField("turn_seat"), table_pb2.Phase.Name(public.table.phase)
    seat = public.table.turn_seat
    mine = await tables.GetTable(pb.GetTableRequest(table_id=table.table_id), metadata=table.seat(seat))
    if observe is not None:
        observe(seat, mine)
    response = await send(tables, table, seat, mine.table.version, await decide(rules, mine.table, rng))
    if observe is not None:
        observe(seat, response)
    assert response.table.version == mine.table.version + 1
    return response.table


def round_ended(table_view: table_pb2.TableView, round_number: int) -> bool:
    """Whether round ``round_number`` is over in ``table_view``."""
    return table_view.HasField("last_settlement") and table_view.last_settlement.round >= round_number


async def play_round(
    tables: TableStub, rules: RulesStub, table: Table, rng: random.Random, observe: Observer | None = None
) -> table_pb2.TableView:
    """Play the running round to its end; the last view (of the seat that ended it)."""
    current = await view(tables, table)
    round_number = current.round
    assert current.phase in (table_pb2.PHASE_AUCTION, table_pb2.PHASE_PLAY), table_pb2.Phase.Name(current.phase)
    for _ in range(1000):
        current = await act(tables, rules, table, rng, observe)
        if round_ended(current, round_number):
            return current
    raise AssertionError("the round did not end within 1000 decisions")


async def play_until_closed(
    tables: TableStub, rules: RulesStub, table: Table, rng: random.Random
) -> table_pb2.TableView:
    """Play every round until the table closes (it needs a round limit)."""
    current = await view(tables, table)
    while current.phase != table_pb2.PHASE_CLOSED:
        current = await play_round(tables, rules, table, rng)
    return current


async def bid_to_play(tables: TableStub, table: Table) -> table_pb2.TableView:
    """End the auction at once (the seat to act bids 3); the landlord's view, who leads."""
    public = await view(tables, table)
    seat = public.turn_seat
    response = await tables.Bid(
        pb.BidRequest(table_id=table.table_id, request_id=rid(), expected_version=public.version, amount=3),
        metadata=table.seat(seat),
    )
    assert response.table.phase == table_pb2.PHASE_PLAY
    assert response.table.landlord_seat == seat
    return response.table


@dataclasses.dataclass(frozen=True)
class OwnRedis:
    """A referee over a Redis of its own (see :func:`referee_over_its_own_redis`)."""

    server: EmbeddedRedis
    client: redis.asyncio.Redis
    tables: TableStub
    #: Another server as this one was made: started once it is stopped, it answers at its address
    #: (on a unix socket: see ``socket_dir``).
    another_server: Callable[[], EmbeddedRedis]


@contextlib.asynccontextmanager
async def referee_over_its_own_redis(
    binary: str | None = None, socket_dir: Path | None = None
) -> AsyncIterator[OwnRedis]:
    """A referee on port 0 over a ``redis-server`` of its own (``binary``: which one), which a
    test may fill up or stop; both are stopped afterwards. With ``socket_dir`` the server
    listens on a unix socket there, where another started in the same folder answers after it."""
    another_server = functools.partial(
        EmbeddedRedis, socket_dir, appendonly=False, unix_socket=socket_dir is not None, binary=binary
    )
    server = await another_server().astart()
    client = redis.asyncio.Redis.from_url(server.url)
    try:
        store = TableStore(client)
        await store.load_scripts()
        referee = await create_server(ServerConfig(address="127.0.0.1:0"), store)
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{referee.port}") as channel:
                yield OwnRedis(server, client, table_service_pb2_grpc.TableServiceStub(channel), another_server)
        finally:
            await referee.stop(0)
    finally:
        await client.aclose()
        await server.astop()


def bid_request(table: Table, version: int, amount: int, request_id: str | None = None) -> pb.BidRequest:
    """A Bid of ``amount`` at ``version`` (a fresh request id unless one is given, "" included)."""
    return pb.BidRequest(
        table_id=table.table_id,
        request_id=rid() if request_id is None else request_id,
        expected_version=version,
        amount=amount,
    )


def play_request(
    table: Table, version: int, cards: list[cards_pb2.Card], request_id: str | None = None
) -> pb.PlayRequest:
    """A Play of ``cards`` at ``version`` (a fresh request id unless one is given)."""
    return pb.PlayRequest(
        table_id=table.table_id,
        request_id=rid() if request_id is None else request_id,
        expected_version=version,
        cards=cards,
    )
