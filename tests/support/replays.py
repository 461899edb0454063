"""Tables played to their end by random legal decisions, and the replays of their rounds."""

from __future__ import annotations

import random

from dizhu.v1 import table_pb2
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import (
    Decision,
    Table,
    decide,
    send,
    view,
)
from tests.support.live import Node


async def play_a_step(
    node: Node, table: Table, rng: random.Random, pass_p: float = 0.55, seat: int | None = None
) -> table_pb2.TableView:
    """One decision by the seat to act (``seat`` if known); in the auction it passes often, so deals get thrown in."""
    if seat is None:
        seat = (await view(node.tables, table)).turn_seat
    mine = await view(node.tables, table, seat)
    decision = await decide(node.rules, mine, rng)
    if mine.phase == table_pb2.PHASE_AUCTION and rng.random() < pass_p:
        decision = Decision(amount=0)
    response = await send(node.tables, table, seat, mine.version, decision)
    return response.table


async def play_to_close(node: Node, table: Table, rng: random.Random) -> None:
    current = await view(node.tables, table)
    while current.phase != table_pb2.PHASE_CLOSED:
        current = await play_a_step(node, table, rng, seat=current.turn_seat)


async def round_replays(node: Node, table: Table) -> list[pb.GetReplayResponse]:
    rounds = (await view(node.tables, table)).last_settlement.round
    return [
        await node.tables.GetReplay(pb.GetReplayRequest(table_id=table.table_id, round=number))
        for number in range(1, rounds + 1)
    ]
