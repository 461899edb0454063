"""The web table's event reducer (``applyEvent``, web/src/events.ts) over a real referee's events.

A spectator's ``WatchTable`` stream of a seeded 3p round (bombs and the rocket dealt, played
whenever a seat may) and of a 4p round whose first deal everyone passes, fed to
``applyEvent`` in Node.js from the stream's snapshot, as the page does: no event but the
table's closing asks to read the table again, and after each decision the view it keeps
says what the referee's view of that version says (turn, trick, play to beat, doublings,
stake, cards left). Each bid and play again with ``next_seat``, ``auction_closed`` and
``doubling`` cleared, as a referee that did not write them stored it: the page reads the
table instead, but for a last card that doubled nothing (its event needs no next seat).
A seat's stream of a round: the bids its view kept (legal_bids, which no event states) are
dropped whenever the auction moves on, and the table is read again where the turn to bid
comes to that seat.

Builds events.ts with the contract's TypeScript (buf, protoc-gen-es) and esbuild from
web/node_modules, as web/build does, into a temporary folder. Needs Node.js and npm.
"""

from __future__ import annotations

import base64
import collections
import dataclasses
import json
import random
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import grpc
import pytest

from dizhu.v1 import rules_service_pb2_grpc, table_pb2, table_service_pb2_grpc
from tests.support.grpc_calls import (
    FOUR,
    THREE,
    Decision,
    RulesStub,
    Table,
    TableStub,
    bomb_first,
    create_table,
    holds_bomb_and_rocket_3p,
    legal_moves,
    seeds_dealing,
    send,
    view,
)
from tests.support.live import Event, kind, watch
from tests.support.web import WebReferee
from tests.support.web_bundles import bundle_for_node

#: Applies the events to the snapshot with the page's own ``applyEvent``; each event's
#: outcome, that of its older form (on a copy of the view), and the view after it.
_REDUCE_TS = """
import { clone, fromBinary, toBinary } from "@bufbuild/protobuf";
import { readFileSync } from "node:fs";
import { applyEvent } from "./events";
import { TableEventSchema } from "./gen/dizhu/v1/events_pb";
import { TableViewSchema } from "./gen/dizhu/v1/table_pb";

const bytes = (text: string) => new Uint8Array(Buffer.from(text, "base64"));
const input: { snapshot: string; events: string[]; older: (string | null)[] } = JSON.parse(readFileSync(0, "utf8"));
const view = fromBinary(TableViewSchema, bytes(input.snapshot));
const readAt = view.version; // as the page: the snapshot is the view read whole
const apply = (onto: typeof view, event: string) =>
  applyEvent(onto, fromBinary(TableEventSchema, bytes(event)), readAt);
const steps = input.events.map((event, index) => {
  const older = input.older[index];
  const olderApplied = older === null ? null : apply(clone(TableViewSchema, view), older);
  const applied = apply(view, event);
  return { applied, older: olderApplied, view: Buffer.from(toBinary(TableViewSchema, view)).toString("base64") };
});
process.stdout.write(JSON.stringify(steps));
"""

_Bidding = Callable[[table_pb2.TableView], int]


def _lowest_bid(mine: table_pb2.TableView) -> int:
    """The lowest amount the view allows above a pass (legal_bids: 0 first, then the bids)."""
    return mine.legal_bids[1]


def _passing_the_first_deal(mine: table_pb2.TableView) -> int:
    return 0 if mine.deal_number == 1 else _lowest_bid(mine)


@pytest.fixture(scope="module")
def reducer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """web/src's modules with the contract's TypeScript and the reducing script, bundled for Node.js."""
    return bundle_for_node(tmp_path_factory.mktemp("reducer"), "reduce", _REDUCE_TS)


def _reduce(bundle: Path, snapshot: table_pb2.TableView, events: list[Event]) -> list[dict[str, Any]]:
    def text(data: bytes) -> str:
        return base64.b64encode(data).decode()

    olders = [_older(event) for event in events]
    payload = {
        "snapshot": text(snapshot.SerializeToString()),
        "events": [text(event.SerializeToString()) for event in events],
        "older": [None if older is None else text(older.SerializeToString()) for older in olders],
    }
    ran = subprocess.run(
        ["node", str(bundle)], input=json.dumps(payload), capture_output=True, text=True, timeout=120, check=False
    )
    assert ran.returncode == 0, ran.stderr
    steps: list[dict[str, Any]] = json.loads(ran.stdout)
    return steps


def _older(event: Event) -> Event | None:
    """A bid or play as a referee that did not write who acts next, nor the doubling, stored it."""
    if kind(event) not in ("bid_made", "cards_played"):
        return None
    older = Event()
    older.CopyFrom(event)
    if kind(event) == "bid_made":
        older.bid_made.ClearField("next_seat")
        older.bid_made.auction_closed = False
    else:
        older.cards_played.ClearField("next_seat")
        older.cards_played.doubling = table_pb2.DOUBLING_CAUSE_UNSPECIFIED
    return older


def _what_a_page_shows(table_view: table_pb2.TableView) -> dict[str, object]:
    return {
        "phase": table_pb2.Phase.Name(table_view.phase),
        "deal": table_view.deal_number,
        "turn": table_view.turn_seat if table_view.HasField("turn_seat") else None,
        "highest bid": table_view.highest_bid,
        "leader": table_view.trick.leader_seat if table_view.HasField("trick") else None,
        "trick": [(play.seat, len(play.cards)) for play in table_view.trick.plays],
        "to beat": table_view.to_beat.seat if table_view.HasField("to_beat") else None,
        "tricks": table_view.tricks_completed,
        "doublings": [(entry.cause, entry.seat, entry.trick) for entry in table_view.doubling_plays],
        "stake": table_view.stake,
        "cards left": [seat.cards_left for seat in table_view.seats],
    }


@dataclasses.dataclass
class _Watched:
    """A round as a spectator's stream told it: its snapshot and events, and the spectator's
    view after each decision, by version."""

    snapshot: table_pb2.TableView
    events: list[Event]
    views: dict[int, table_pb2.TableView]


async def _watched_round(
    tables: TableStub,
    rules: RulesStub,
    table: Table,
    bidding: _Bidding,
    rng: random.Random,
    viewers: Sequence[int | None] = (None,),
) -> list[_Watched]:
    """Play the round of a ``round_limit`` 1 table to its close, seats bidding by ``bidding``
    and playing a bomb or the rocket whenever they may, watched by each of ``viewers`` (a seat,
    or None: a spectator)."""
    watchers = [watch(tables, table.table_id, None if seat is None else table.tokens[seat]) for seat in viewers]
    snapshots = [(await watcher.wait_kind("snapshot")).snapshot for watcher in watchers]
    views: dict[int, table_pb2.TableView] = {}
    current = await view(tables, table)
    while current.phase in (table_pb2.PHASE_AUCTION, table_pb2.PHASE_PLAY):
        mine = await view(tables, table, current.turn_seat)
        if mine.phase == table_pb2.PHASE_AUCTION:
            decision = Decision(amount=bidding(mine))
        else:
            move = bomb_first(await legal_moves(rules, mine), rng)
            decision = Decision(cards=() if move is None else tuple(move.cards))
        await send(tables, table, mine.turn_seat, mine.version, decision)
        current = await view(tables, table)
        views[current.version] = current
    watched = []
    for watcher, snapshot in zip(watchers, snapshots, strict=True):
        assert await watcher.closed() == grpc.StatusCode.OK, watcher.error
        watched.append(_Watched(snapshot, [event for event in watcher.events if kind(event) != "snapshot"], views))
    return watched


def _outcomes(watched: _Watched, steps: list[dict[str, Any]]) -> None:
    """The reducer's outcomes and views against the referee's (see the module's docstring)."""
    events = watched.events
    kinds = [kind(event) for event in events]
    rereads = [name for name, step in zip(kinds, steps, strict=True) if step["applied"] != "applied"]
    assert rereads == ["table_closed"], list(zip(kinds, [step["applied"] for step in steps], strict=True))
    open_views = {version: seen for version, seen in watched.views.items() if seen.phase != table_pb2.PHASE_CLOSED}
    compared = 0
    for index, event in enumerate(events):
        last_of_its_change = index + 1 == len(events) or events[index + 1].version != event.version
        if last_of_its_change and event.version in open_views:
            kept = table_pb2.TableView.FromString(base64.b64decode(steps[index]["view"]))
            assert _what_a_page_shows(kept) == _what_a_page_shows(open_views[event.version]), kinds[index]
            compared += 1
    assert compared == len(open_views) > 10
    for event, step in zip(events, steps, strict=True):
        if kind(event) == "bid_made":
            assert step["older"] == "reread", event
        elif kind(event) == "cards_played":
            played = event.cards_played
            last_card_doubling_nothing = played.cards_left == 0 and not played.doubling
            assert step["older"] == ("applied" if last_card_doubling_nothing else "reread"), event


class TestThePagesReducer:
    async def test_a_round_with_bombs_and_the_rocket(self, web_referee: WebReferee, reducer: Path) -> None:
        rng = random.Random(5)
        causes: set[int] = set()
        async with grpc.aio.insecure_channel(web_referee.target) as channel:
            tables = table_service_pb2_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
            rules = rules_service_pb2_grpc.RulesServiceStub(channel)  # type: ignore[no-untyped-call]
            async for seed in seeds_dealing(tables, THREE, holds_bomb_and_rocket_3p):
                table = await create_table(tables, THREE, seeds=[seed], first_dealer=0, round_limit=1)
                (watched,) = await _watched_round(tables, rules, table, _lowest_bid, rng)
                _outcomes(watched, _reduce(reducer, watched.snapshot, watched.events))
                causes |= {event.cards_played.doubling for event in watched.events}
                if {table_pb2.DOUBLING_CAUSE_BOMB, table_pb2.DOUBLING_CAUSE_ROCKET} <= causes:
                    break
        assert {table_pb2.DOUBLING_CAUSE_BOMB, table_pb2.DOUBLING_CAUSE_ROCKET} <= causes, causes

    async def test_a_4p_round_whose_first_deal_is_thrown_in(self, web_referee: WebReferee, reducer: Path) -> None:
        async with grpc.aio.insecure_channel(web_referee.target) as channel:
            tables = table_service_pb2_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
            rules = rules_service_pb2_grpc.RulesServiceStub(channel)  # type: ignore[no-untyped-call]
            table = await create_table(tables, FOUR, first_dealer=0, round_limit=1)
            (watched,) = await _watched_round(tables, rules, table, _passing_the_first_deal, random.Random(5))
        _outcomes(watched, _reduce(reducer, watched.snapshot, watched.events))
        kinds = [kind(event) for event in watched.events]
        assert "deal_thrown_in" in kinds, kinds
        assert any(event.cards_played.trick_closed for event in watched.events)

    async def test_a_seats_page_reads_the_table_when_the_auction_comes_to_it(
        self, web_referee: WebReferee, reducer: Path
    ) -> None:
        """Each seat's stream of a 4p round whose first deal is thrown in: after every event that
        moves the auction on, the view kept has no legal_bids (they were another seat's, or are
        over), and the reducer answers "reread" where the turn to bid comes to that seat (a bid
        after which it bids, the deal it bids first in), so that its page reads the bids it may
        make; nowhere else but at the table's closing."""
        async with grpc.aio.insecure_channel(web_referee.target) as channel:
            tables = table_service_pb2_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
            rules = rules_service_pb2_grpc.RulesServiceStub(channel)  # type: ignore[no-untyped-call]
            table = await create_table(tables, FOUR, first_dealer=0, round_limit=1)
            seats = range(table.players)
            watched = await _watched_round(
                tables, rules, table, _passing_the_first_deal, random.Random(5), viewers=tuple(seats)
            )
        brought_turns: collections.Counter[str] = collections.Counter()
        for seat, seen in zip(seats, watched, strict=True):
            assert seen.snapshot.your_seat == seat
            steps = _reduce(reducer, seen.snapshot, seen.events)

            def comes_to_the_seat(event: Event, seat: int = seat) -> bool:
                if kind(event) == "deal_started":
                    return event.deal_started.face_up_seat == seat
                return (
                    kind(event) == "bid_made"
                    and event.bid_made.HasField("next_seat")
                    and event.bid_made.next_seat == seat
                )

            expected = [
                "reread" if comes_to_the_seat(event) or kind(event) == "table_closed" else "applied"
                for event in seen.events
            ]
            assert [step["applied"] for step in steps] == expected, (seat, [kind(event) for event in seen.events])
            brought_turns.update(kind(event) for event in seen.events if comes_to_the_seat(event))
            for event, step in zip(seen.events, steps, strict=True):
                if kind(event) in ("deal_started", "bid_made", "deal_thrown_in", "landlord_chosen", "round_ended"):
                    kept = table_pb2.TableView.FromString(base64.b64decode(step["view"]))
                    assert list(kept.legal_bids) == [], (seat, kind(event))
        # The first deal: every seat after the one that drew the face-up card bids after a pass;
        # the second deal starts with its bid.
        assert brought_turns["bid_made"] >= 3, brought_turns
        assert brought_turns["deal_started"] == 1, brought_turns
