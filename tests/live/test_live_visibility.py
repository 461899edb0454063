"""No stream hands a viewer a card of another seat's hand before that card is public (rules §11).

Several random complete games are watched by every seat and a spectator at once. Afterwards
the truth is known: GetReplay gives every hand as dealt and the full event log says when each
card became public (the face-up card when dealt, the kitty when the landlord takes it, a
card when played, everything when its deal is over). Every card of every message a viewer got
is then checked against what was public at that message's sequence.
"""

from __future__ import annotations

import dataclasses
import random

import grpc
import pytest

from dizhu.v1 import cards_pb2, table_pb2
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import FOUR, PLAYERS, THREE, act, cards_in, view
from tests.support.live import Event, Referees, card_paths, create, full_log, kind, watch

#: Fields that reveal a deal that is over (checked apart: the deal must be over by then).
_REVEALS = ("deal_thrown_in.reveal.", "round_ended.reveal.", "snapshot.last_reveal.")

DealKey = tuple[int, int]


@dataclasses.dataclass
class _Deal:
    hands: list[set[int]]
    kitty: set[int]
    started: int
    #: card id -> sequence from which it is public
    public_from: dict[int, int] = dataclasses.field(default_factory=dict)
    over_at: int | None = None
    landlord: int | None = None


def _deals(log: list[Event], replays: dict[int, pb.GetReplayResponse]) -> tuple[dict[DealKey, _Deal], list[int]]:
    """Every deal's secrets and when each card became public; the sequences that start a deal."""
    deals: dict[DealKey, _Deal] = {}
    current: _Deal | None = None
    for event in log:
        payload = kind(event)
        if payload == "deal_started":
            started = event.deal_started
            record = replays[started.round].replay.deals[started.deal_number - 1]
            assert record.deal_number == started.deal_number
            assert record.seed_commitment == started.seed_commitment
            current = _Deal(
                hands=[set(cards_in(hand.cards)) for hand in record.hands],
                kitty=set(cards_in(record.kitty)),
                started=event.sequence,
            )
            current.public_from[cards_in([started.face_up_card])[0]] = event.sequence
            deals[(started.round, started.deal_number)] = current
        elif current is None:
            continue
        elif payload == "landlord_chosen":
            current.landlord = event.landlord_chosen.landlord_seat
            for card in cards_in(event.landlord_chosen.kitty):
                current.public_from.setdefault(card, event.sequence)
        elif payload == "cards_played":
            for card in cards_in(event.cards_played.cards):
                current.public_from.setdefault(card, event.sequence)
        elif payload in ("deal_thrown_in", "round_ended") and current.over_at is None:
            current.over_at = event.sequence
    return deals, sorted(deal.started for deal in deals.values())


def _deal_at(deals: dict[DealKey, _Deal], sequence: int) -> _Deal | None:
    """The deal running after event ``sequence`` (None before the first deal or once it is over)."""
    running = [deal for deal in deals.values() if deal.started <= sequence]
    if not running:
        return None
    deal = max(running, key=lambda d: d.started)
    return None if deal.over_at is not None and deal.over_at <= sequence else deal


def _violations(messages: list[Event], viewer: int | None, deals: dict[DealKey, _Deal], players: int) -> list[str]:
    found = []
    for message in messages:
        sequence = message.sequence
        deal = _deal_at(deals, sequence)
        for path, card in card_paths(message):
            where = f"seq {sequence} {path} card {card}"
            if path.startswith(_REVEALS):
                reveal = message.snapshot.last_reveal if path.startswith("snapshot.") else None
                if reveal is not None:
                    revealed = deals[(reveal.round, reveal.deal_number)]
                    if revealed.over_at is None or revealed.over_at > sequence:
                        found.append(f"{where}: reveal of a deal not over")
                continue
            if deal is None:
                continue  # between deals everything of the last deal is public
            own = viewer is not None and (
                card in deal.hands[viewer] or (deal.landlord == viewer and card in deal.kitty)
            )
            public = deal.public_from.get(card, sequence + 1) <= sequence
            if not (own or public):
                owners = [seat for seat in range(players) if card in deal.hands[seat]]
                found.append(f"{where}: held by {owners or 'the kitty'}, not public, viewer {viewer}")
        if kind(message) == "deal_started":
            started = message.deal_started
            hand = set(cards_in(started.your_hand))
            expected = set() if viewer is None else deals[(started.round, started.deal_number)].hands[viewer]
            if hand != expected:
                found.append(f"seq {sequence}: DealStarted.your_hand is not the viewer's own hand")
    return found


@pytest.mark.parametrize(
    ("variant", "seed"), [(THREE, 1), (THREE, 2), (FOUR, 3), (FOUR, 4)], ids=["3p-a", "3p-b", "4p-a", "4p-b"]
)
async def test_no_stream_shows_a_card_of_another_seat_before_it_is_public(
    referees: Referees, variant: cards_pb2.Variant, seed: int
) -> None:
    node = await referees.start()
    players = PLAYERS[variant]
    table = await create(node.tables, variant, round_limit=2)
    viewers: list[int | None] = [*range(players), None]
    watchers = [watch(node.tables, table.table_id, table.tokens[v] if v is not None else None) for v in viewers]
    for watcher in watchers:
        await watcher.wait_kind("snapshot")
    rng = random.Random(seed)
    current = await view(node.tables, table)
    mid_watchers = []
    decisions = 0
    while current.phase != table_pb2.PHASE_CLOSED:
        current = await act(node.tables, node.rules, table, rng)
        decisions += 1
        if decisions % 17 == 0:
            # Late joiners start from a snapshot in the middle of a deal.
            v = viewers[(decisions // 17) % len(viewers)]
            mid_watchers.append((v, watch(node.tables, table.table_id, table.tokens[v] if v is not None else None)))
    for watcher in watchers:
        assert await watcher.closed() == grpc.StatusCode.OK
    for _, watcher in mid_watchers:
        assert await watcher.closed() == grpc.StatusCode.OK
    log = await full_log(node.tables, table.table_id)
    rounds = current.round
    assert rounds == 2
    replays = {
        number: await node.tables.GetReplay(pb.GetReplayRequest(table_id=table.table_id, round=number))
        for number in range(1, rounds + 1)
    }
    deals, _ = _deals(log, replays)
    problems = []
    for v, watcher in [*zip(viewers, watchers, strict=True), *mid_watchers]:
        problems += _violations(watcher.messages, v, deals, players)
        # A seat's snapshot shows exactly its own current hand; a spectator's none.
        for message in watcher.messages:
            if kind(message) == "snapshot" and v is None:
                assert not message.snapshot.your_hand
    assert not problems, "\n".join(problems[:20])
    # The check is not vacuous: seats did receive their private hands, cards were played, and
    # mid-deal snapshots carried the round's history of plays (checked card by card above).
    assert all(kind(m) != "deal_started" or m.deal_started.your_hand for m in watchers[0].messages)
    snapshots = [m.snapshot for _, w in mid_watchers for m in w.messages if kind(m) == "snapshot"]
    assert any(entry.cards for snapshot in snapshots for entry in snapshot.history)
    assert sum(kind(e) == "cards_played" for e in log) > 10


def test_the_checker_catches_a_leak() -> None:
    """The checker itself flags a card of another seat shown before it is public."""
    hands = [{0, 1}, {2, 3}, {4, 5}]
    deal = _Deal(hands=hands, kitty={6}, started=1, public_from={4: 1})
    leak = Event(sequence=2)
    leak.snapshot.your_hand.add().CopyFrom(cards_pb2.Card(rank=1, suit=3))  # id 2: seat 1's card
    assert _violations([leak], 0, {(1, 1): deal}, 3)
    fine = Event(sequence=2)
    fine.snapshot.your_hand.add().CopyFrom(cards_pb2.Card(rank=1, suit=1))  # id 0: seat 0's own card
    fine.snapshot.face_up_card.CopyFrom(cards_pb2.Card(rank=2, suit=1))  # id 4: public face-up card
    assert not _violations([fine], 0, {(1, 1): deal}, 3)
