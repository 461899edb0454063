"""A bid's or a play's event says who acts next and what the play doubled, as the view after it does.

``BidMade.next_seat`` and ``CardsPlayed.next_seat`` against the ``turn_seat`` of the view the
referee answers the decision with (unset, with ``BidMade.auction_closed``, when the auction
closed; unset when the seat went out); after a closed trick, the new trick's leader.
``CardsPlayed.doubling`` against the rule (docs/rules.md §9): 3p, every bomb and the rocket; 4p,
the rocket and bombs of six or more cards. Rounds dealt so that bombs (and in 3p the rocket)
are held, played by seats that play a bomb or the rocket whenever they may, each event read
from a spectator's ``WatchTable`` stream.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from dizhu.rules import FOUR_PLAYER, THREE_PLAYER
from dizhu.v1 import cards_pb2, rules_service_pb2, table_pb2
from tests.support.grpc_calls import (
    FOUR,
    THREE,
    Dealt,
    Decision,
    Table,
    bomb_first,
    holds_bomb_and_rocket_3p,
    holds_small_and_big_bombs_4p,
    legal_moves,
    seeds_dealing,
    send,
    view,
)
from tests.support.live import Event, Node, Referees, Watcher, create, kind, watch

_DOUBLING_KINDS = (cards_pb2.COMBINATION_KIND_BOMB, cards_pb2.COMBINATION_KIND_ROCKET)
_MIN_DOUBLING_BOMB = {THREE: THREE_PLAYER.min_doubling_bomb_size, FOUR: FOUR_PLAYER.min_doubling_bomb_size}


async def _event_of(watcher: Watcher, version: int, name: str, then: str = "") -> Event:
    """The ``name`` event of the change that made ``version``; with ``then``, once that change's
    ``then`` event came too, which must come right after it."""

    def change(messages: list[Event]) -> list[str]:
        return [kind(message) for message in messages if message.version == version and kind(message) != "heartbeat"]

    await watcher.wait_for(lambda ms: name in change(ms), f"{name} of version {version}")
    if then:
        await watcher.wait_for(lambda ms: then in change(ms), f"{then} of version {version}")
        kinds = change(watcher.messages)
        assert kinds[kinds.index(name) + 1] == then, kinds
    return next(m for m in watcher.messages if m.version == version and kind(m) == name)


def _cause(variant: cards_pb2.Variant, move: rules_service_pb2.LegalMove | None) -> table_pb2.DoublingCause:
    """The doubling ``move`` causes by the rule; UNSPECIFIED when it does not double."""
    if move is None:
        return table_pb2.DOUBLING_CAUSE_UNSPECIFIED
    if move.combination.kind == cards_pb2.COMBINATION_KIND_ROCKET:
        return table_pb2.DOUBLING_CAUSE_ROCKET
    if move.combination.kind == cards_pb2.COMBINATION_KIND_BOMB and len(move.cards) >= _MIN_DOUBLING_BOMB[variant]:
        return table_pb2.DOUBLING_CAUSE_BOMB
    return table_pb2.DOUBLING_CAUSE_UNSPECIFIED


async def _bid(node: Node, table: Table, watcher: Watcher, mine: table_pb2.TableView, seen: Counter[str]) -> None:
    """The seat to act outbids the highest bid by one (3 closes the auction); its event checked."""
    seat, amount = mine.turn_seat, mine.highest_bid + 1
    after = (await send(node.tables, table, seat, mine.version, Decision(amount=amount))).table
    closed = after.phase != table_pb2.PHASE_AUCTION
    made = (await _event_of(watcher, after.version, "bid_made", "landlord_chosen" if closed else "")).bid_made
    assert (made.seat, made.amount) == (seat, amount)
    if not closed:
        assert made.HasField("next_seat"), made
        assert (made.next_seat, made.auction_closed) == (after.turn_seat, False)
        seen["bid, the auction goes on"] += 1
    else:
        assert not made.HasField("next_seat"), made
        assert made.auction_closed
        seen["bid closing the auction"] += 1


async def _play(
    node: Node, table: Table, watcher: Watcher, mine: table_pb2.TableView, rng: random.Random, seen: Counter[str]
) -> table_pb2.TableView:
    """The seat to act plays a bomb or the rocket if it may, else a random legal move; its event checked."""
    seat = mine.turn_seat
    move = bomb_first(await legal_moves(node.rules, mine), rng)
    cards = () if move is None else tuple(move.cards)
    after = (await send(node.tables, table, seat, mine.version, Decision(cards=cards))).table
    went_on = after.phase == table_pb2.PHASE_PLAY
    played = (await _event_of(watcher, after.version, "cards_played", "" if went_on else "round_ended")).cards_played
    assert played.seat == seat
    if went_on:
        assert played.HasField("next_seat"), played
        assert played.next_seat == after.turn_seat
        if played.trick_closed:
            assert (after.trick.leader_seat, list(after.trick.plays)) == (played.next_seat, [])
            seen["pass closing a trick"] += 1
        else:
            seen["play, the trick goes on"] += 1
    else:
        assert not played.HasField("next_seat"), played
        assert played.cards_left == 0
        seen["the last card"] += 1
    cause = _cause(table.variant, move)
    assert played.doubling == cause, (played, table_pb2.DoublingCause.Name(cause))
    if move is not None and move.combination.kind in _DOUBLING_KINDS:
        what = "rocket" if move.combination.kind == cards_pb2.COMBINATION_KIND_ROCKET else "bomb"
        seen[f"{what}, {'doubled' if cause else 'not doubled'}"] += 1
    return after


class TestTheNextSeatAndTheDoubling:
    @pytest.mark.parametrize(
        ("variant", "dealt", "expected"),
        [
            (THREE, holds_bomb_and_rocket_3p, {"rocket, doubled", "bomb, doubled"}),
            (FOUR, holds_small_and_big_bombs_4p, {"bomb, doubled", "bomb, not doubled"}),
        ],
        ids=["3p", "4p"],
    )
    async def test_each_bid_and_play_says_what_the_view_after_it_says(
        self, referees: Referees, variant: cards_pb2.Variant, dealt: Dealt, expected: set[str]
    ) -> None:
        node = await referees.start()
        rng = random.Random(9)
        seen: Counter[str] = Counter()
        async for seed in seeds_dealing(node.tables, variant, dealt):
            table = await create(node.tables, variant, seeds=[seed], first_dealer=0, round_limit=1)
            watcher = watch(node.tables, table.table_id)
            await watcher.wait_kind("snapshot")
            current = await view(node.tables, table)
            while current.phase in (table_pb2.PHASE_AUCTION, table_pb2.PHASE_PLAY):
                mine = await view(node.tables, table, current.turn_seat)
                if mine.phase == table_pb2.PHASE_AUCTION:
                    await _bid(node, table, watcher, mine, seen)
                    current = await view(node.tables, table)
                else:
                    current = await _play(node, table, watcher, mine, rng, seen)
            await watcher.cancel()
            if expected <= set(seen):
                break
        assert expected <= set(seen), seen
        for step in ("bid, the auction goes on", "bid closing the auction", "pass closing a trick", "the last card"):
            assert seen[step], seen

    async def test_a_deal_everyone_passes_closes_its_auction_and_is_thrown_in(self, referees: Referees) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE, first_dealer=0)
        watcher = watch(node.tables, table.table_id)
        await watcher.wait_kind("snapshot")
        for turn in range(table.players):
            mine = await view(node.tables, table, (await view(node.tables, table)).turn_seat)
            after = (await send(node.tables, table, mine.turn_seat, mine.version, Decision(amount=0))).table
            last = turn == table.players - 1
            made = (await _event_of(watcher, after.version, "bid_made", "deal_thrown_in" if last else "")).bid_made
            if not last:
                assert made.HasField("next_seat"), made
                assert (made.next_seat, made.auction_closed) == (after.turn_seat, False)
            else:
                assert not made.HasField("next_seat"), made
                assert made.auction_closed
        await watcher.cancel()
