"""A web table played by hand through the Python SDK, as the page tests drive it beside a browser."""

from __future__ import annotations

from typing import Any

from dizhu.client import TableClient, to_beat
from dizhu.v1 import cards_pb2, table_pb2


def two_unlike_cards(view: table_pb2.TableView) -> list[cards_pb2.Card]:
    """Two cards of the two lowest ranks held (never both jokers: in 3p they are the rocket)."""
    ranks = sorted({card.rank for card in view.your_hand})
    return [next(c for c in view.your_hand if c.rank == rank) for rank in ranks[:2]]


SEED = bytes(range(32))


async def seated_table(
    creator: TableClient, *, round_limit: int = 1, seeds: tuple[bytes, ...] = (SEED,)
) -> tuple[str, list[TableClient], list[str]]:
    """A 3p table of three pre-assigned players (Ann, Bob, Cyd), no clock, each round settled by
    hand: its id, a client per seat, and the seats' tokens."""
    created = await creator.create_table(
        player_names=["Ann", "Bob", "Cyd"],
        round_limit=round_limit,
        seeds=list(seeds),
        next_round=table_pb2.NEXT_ROUND_WHEN_ALL_SETTLED,
    )
    tokens = [entry.token for entry in sorted(created.seat_tokens, key=lambda entry: entry.seat)]
    return created.table_id, [creator.for_seat(token, created.table_id) for token in tokens], tokens


async def bid_to_the_play(seats: list[TableClient]) -> table_pb2.TableView:
    """The seat whose turn it is bids 3: it is the landlord."""
    view = await seats[0].get()
    await seats[view.turn_seat].bid(3, expected_version=view.version)
    return await seats[0].get()


async def play_chosen(seat: TableClient, choose: Any) -> None:
    """``seat`` plays what ``choose(legal moves, to beat)`` picks, or passes when it picks nothing."""
    view = await seat.get()
    beat = to_beat(view)
    legal = await seat.legal_moves(list(view.your_hand), beat, variant=view.settings.variant)
    chosen = choose(list(legal.moves), beat)
    if chosen is None:
        await seat.pass_(expected_version=view.version)
    else:
        await seat.play(list(chosen.cards), expected_version=view.version)


def lowest_single(moves: list[Any], beat: Any) -> Any:
    singles = [move for move in moves if move.combination.kind == cards_pb2.COMBINATION_KIND_SINGLE]
    return singles[0] if singles else (moves[0] if beat is None else None)


async def play_the_round_out(seats: list[TableClient]) -> table_pb2.TableView:
    """Every seat plays its first legal move (passing when none) until the round is over."""
    await bid_to_the_play(seats)
    for _ in range(400):
        view = await seats[0].get()
        if view.phase != table_pb2.PHASE_PLAY:
            return view
        await play_chosen(seats[view.turn_seat], lambda moves, beat: moves[0] if moves else None)
    raise AssertionError("the round did not end")
