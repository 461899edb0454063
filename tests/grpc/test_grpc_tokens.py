"""Tokens and visibility: a seat sees its own hand and public cards only, never another seat's.

The truth to check against comes straight from the store (the decoded table state), so the
check does not trust the view conversion it is checking.
"""

from __future__ import annotations

import random

import grpc
import pytest
from google.protobuf.message import Message

from dizhu.referee import decode
from dizhu.referee.table import TableState
from dizhu.store import TableStore
from dizhu.v1 import cards_pb2, table_pb2
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import (
    FOUR,
    THREE,
    RulesStub,
    Table,
    TableStub,
    card_id,
    cards_in,
    create_table,
    decide,
    refused,
    rid,
    send,
    view,
)

_CARD = cards_pb2.Card.DESCRIPTOR


def _cards_anywhere(message: Message, skip: Message | None = None) -> list[int]:
    """The ids of every Card submessage in ``message`` (``skip``'s subtree excepted)."""
    if message is skip:
        return []
    if message.DESCRIPTOR is _CARD:
        return [card_id(message)]  # type: ignore[arg-type]
    found: list[int] = []
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        for item in value if field.is_repeated else [value]:
            if isinstance(item, Message):
                found += _cards_anywhere(item, skip)
    return found


async def _truth(store: TableStore, table: Table) -> TableState:
    loaded = await store.load(table.table_id, "anon", None)
    assert loaded.state is not None
    return decode(loaded.state)


def _check_visibility(
    response: Message, table_view: table_pb2.TableView, viewer: int | None, truth: TableState
) -> None:
    """``response`` (holding ``table_view``) shows ``viewer`` no card of another seat's current hand."""
    assert table_view.version == truth.version
    state = truth.round if truth.deal_running else None
    if viewer is None:
        assert not table_view.your_hand
        assert not table_view.HasField("your_seat")
    else:
        assert table_view.your_seat == viewer
        expected = sorted(card.id for card in state.hands[viewer]) if state is not None else []
        assert cards_in(table_view.your_hand) == expected
    if state is None:
        return
    public = {state.deal.face_up.id}
    if state.landlord is not None:
        public |= {card.id for card in state.deal.kitty}
    secret = {card.id for seat, hand in enumerate(state.hands) if seat != viewer for card in hand} - public
    # The last reveal is public; it belongs to a finished deal, never the running one.
    reveal = table_view.last_reveal if table_view.HasField("last_reveal") else None
    if reveal is not None:
        assert (reveal.round, reveal.deal_number) != (table_view.round, table_view.deal_number)
    leaked = secret.intersection(_cards_anywhere(response, skip=reveal))
    assert not leaked, f"viewer {viewer} sees cards {sorted(leaked)} of other seats"


class TestVisibility:
    @pytest.mark.parametrize("variant", [THREE, FOUR], ids=["3p", "4p"])
    async def test_no_response_of_a_game_shows_anyone_another_seats_hand(
        self, tables: TableStub, rules: RulesStub, store: TableStore, variant: cards_pb2.Variant
    ) -> None:
        rng = random.Random(11 + variant)
        table = await create_table(tables, variant, round_limit=2)
        everyone: list[int | None] = [None, *range(table.players)]
        secrets = [table.creator_token, *table.tokens.values()]
        steps = 0
        longest_history = 0
        while True:
            truth = await _truth(store, table)
            views: dict[int | None, table_pb2.TableView] = {}
            for viewer in everyone:
                response = await tables.GetTable(
                    pb.GetTableRequest(table_id=table.table_id),
                    metadata=table.seat(viewer) if viewer is not None else (),
                )
                _check_visibility(response, response.table, viewer, truth)
                assert not any(token.encode() in response.SerializeToString() for token in secrets)
                views[viewer] = response.table
                # The round's history is public: every viewer gets the same one.
                assert response.table.history == views[None].history
                longest_history = max(longest_history, sum(len(a.cards) for a in response.table.history))
            if views[None].phase == table_pb2.PHASE_CLOSED:
                break
            seat = views[None].turn_seat
            decision = await decide(rules, views[seat], rng)
            answer = await send(tables, table, seat, views[seat].version, decision)
            _check_visibility(answer, answer.table, seat, await _truth(store, table))
            steps += 1
        assert steps > 10
        assert longest_history > 10, "no view carried a history of plays: the check above was vacuous"
        closed = await view(tables, table)
        assert closed.close_reason == table_pb2.CLOSE_REASON_ROUND_LIMIT

    async def test_the_creator_sees_what_a_spectator_sees(self, tables: TableStub) -> None:
        table = await create_table(tables, THREE)
        as_creator = await tables.GetTable(pb.GetTableRequest(table_id=table.table_id), metadata=table.creator)
        spectator = await view(tables, table)
        assert as_creator.table == spectator
        assert not spectator.your_hand
        assert not spectator.HasField("your_seat")
        assert all(seat.cards_left == 17 for seat in spectator.seats)


class TestTokensAcrossTables:
    async def test_a_seat_token_is_worthless_at_another_table(self, tables: TableStub) -> None:
        first = await create_table(tables, THREE)
        second = await create_table(tables, THREE)
        turn = (await view(tables, second)).turn_seat
        play_as_first = pb.BidRequest(table_id=second.table_id, request_id=rid(), expected_version=1, amount=1)
        await refused(
            tables.Bid(play_as_first, metadata=first.seat(turn)),
            grpc.StatusCode.UNAUTHENTICATED,
            "UNAUTHENTICATED",
            table_id=second.table_id,
        )
        await refused(
            tables.GetTable(pb.GetTableRequest(table_id=second.table_id), metadata=first.seat(turn)),
            grpc.StatusCode.UNAUTHENTICATED,
            "UNAUTHENTICATED",
        )
        assert (await view(tables, second)).version == 1

    async def test_a_joined_seat_sees_only_its_own_hand(self, tables: TableStub) -> None:
        table = await create_table(tables, THREE, players=2)
        joined = await tables.JoinTable(pb.JoinTableRequest(table_id=table.table_id, request_id=rid(), player_name="z"))
        assert joined.table.your_seat == 2
        assert len(joined.table.your_hand) == 17
        theirs = await view(tables, table, 0)
        assert set(cards_in(theirs.your_hand)).isdisjoint(cards_in(joined.table.your_hand))
        assert joined.seat_token not in (table.creator_token, *table.tokens.values())
