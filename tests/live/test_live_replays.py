"""GetReplay, ``verify`` and the ``dizhu verify`` / ``dizhu replay`` commands on real finished rounds.

Replays come from games played through the referee: random games (3p and 4p, with redeals),
a void round, forfeits by leaving, abandons, and clock timeouts. Every one verifies; every
kind of tampering is caught.
"""

from __future__ import annotations

import asyncio
import copy
import datetime
import hashlib
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

from dizhu.referee.replay import verify
from dizhu.v1 import cards_pb2, replay_pb2, table_pb2
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import (
    FOUR,
    THREE,
    Decision,
    Table,
    bid_to_play,
    cards_in,
    refused,
    rid,
    send,
    view,
)
from tests.support.live import Bots, Node, Referees, clock, create, full_log, kind, run_cli
from tests.support.replays import play_a_step, play_to_close, round_replays

ROOT = Path(__file__).resolve().parents[2]
Document = dict[str, Any]


async def _one_round(node: Node, seed: int, variant: cards_pb2.Variant = THREE) -> str:
    table = await create(node.tables, variant, round_limit=1)
    await play_to_close(node, table, random.Random(seed))
    return (await round_replays(node, table))[0].json


@pytest.mark.on_each_store
class TestGetReplay:
    async def test_a_finished_rounds_replay_has_the_deals_every_timed_action_and_the_settlement(
        self, referees: Referees
    ) -> None:
        node = await referees.start(clock_interval_s=0.02)
        policy = table_pb2.TIMEOUT_POLICY_FORFEIT
        table = await create(node.tables, THREE, round_limit=1, clock_settings=clock(300, policy=policy))
        hands = {seat: cards_in((await view(node.tables, table, seat)).your_hand) for seat in range(3)}
        idle = table.created.table.turn_seat  # the first to bid: its turn surely runs out once
        bots = Bots(node.tables, node.rules, table, [s for s in range(3) if s != idle], seed=3, bid=3)
        await bots.finished()
        log = await full_log(node.tables, table.table_id)
        response = await node.tables.GetReplay(pb.GetReplayRequest(table_id=table.table_id, round=1))
        replay = response.replay
        assert replay.schema == "dizhu.replay/v1"
        assert replay.table_id == table.table_id
        assert replay.round == 1
        assert replay.variant == cards_pb2.VARIANT_THREE_PLAYER
        (dealt,) = replay.deals
        assert {hand.seat: cards_in(hand.cards) for hand in dealt.hands} == hands
        assert len(dealt.kitty) == 3
        started = next(e for e in log if kind(e) == "deal_started").deal_started
        assert dealt.seed_commitment == started.seed_commitment == hashlib.sha256(dealt.seed).digest()
        assert cards_in([dealt.face_up_card]) == cards_in([started.face_up_card])
        assert dealt.dealer_seat == started.dealer_seat
        decisions = [e for e in log if kind(e) in ("bid_made", "cards_played")]
        assert len(dealt.actions) == len(decisions) > 0
        previous = 0
        for action, event in zip(dealt.actions, decisions, strict=True):
            if kind(event) == "bid_made":
                assert (action.kind, action.seat, action.bid) == (
                    replay_pb2.ACTION_KIND_BID,
                    event.bid_made.seat,
                    event.bid_made.amount,
                )
                assert action.timed_out == event.bid_made.timed_out
            else:
                assert (action.kind, action.seat) == (replay_pb2.ACTION_KIND_PLAY, event.cards_played.seat)
                assert cards_in(action.cards) == cards_in(event.cards_played.cards)
                assert action.timed_out == event.cards_played.timed_out
            assert action.time == event.time
            assert action.time.ToMilliseconds() >= previous
            previous = action.time.ToMilliseconds()
            assert action.HasField("took")
        # The idle seat's auction turns ran out (flagged, with took at least the decision time).
        flagged = [a for a in dealt.actions if a.timed_out]
        assert flagged
        assert all(a.seat == idle and a.took.ToMilliseconds() >= 300 for a in flagged)
        ended = next(e for e in log if kind(e) == "round_ended").round_ended
        assert replay.settlement == ended.settlement
        assert replay.settlement.forfeited_seat == idle
        assert list(replay.balances) == list(ended.balances)
        document = json.loads(response.json)
        assert document["result"]["forfeited_by"] == idle
        assert verify(response.json).ok, verify(response.json).problems

    async def test_an_unfinished_round_or_unknown_table_is_not_found_and_round_zero_is_invalid(
        self, referees: Referees
    ) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE)
        await refused(
            node.tables.GetReplay(pb.GetReplayRequest(table_id=table.table_id, round=1)),
            grpc.StatusCode.NOT_FOUND,
            "TABLE_NOT_FOUND",
        )
        await refused(
            node.tables.GetReplay(pb.GetReplayRequest(table_id="nope", round=1)),
            grpc.StatusCode.NOT_FOUND,
            "TABLE_NOT_FOUND",
        )
        await refused(
            node.tables.GetReplay(pb.GetReplayRequest(table_id=table.table_id, round=0)),
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_ARGUMENT",
        )


@pytest.mark.on_each_store
class TestVerifyMany:
    @pytest.mark.parametrize("variant", [THREE, FOUR], ids=["3p", "4p"])
    async def test_every_replay_of_many_varied_games_verifies(
        self, referees: Referees, variant: cards_pb2.Variant
    ) -> None:
        node = await referees.start()
        documents: list[Document] = []

        async def collect(table: Table) -> None:
            for response in await round_replays(node, table):
                result = verify(response.json)
                assert result.ok, (response.replay.round, result.problems)
                documents.append(json.loads(response.json))

        rng = random.Random(99 + variant)
        table = await create(node.tables, variant, round_limit=6)
        await play_to_close(node, table, rng)
        await collect(table)
        # A void round (everybody passes up to the cap), then a played round.
        void = await create(node.tables, variant, round_limit=2, max_redeals=1)
        players = len(void.created.table.seats)
        for _ in range(2 * players):
            public = await view(node.tables, void)
            await send(node.tables, void, public.turn_seat, public.version, Decision(amount=0))
        await play_to_close(node, void, rng)
        await collect(void)
        # Forfeits by leaving during play (the landlord, a farmer), and an abandon in the auction.
        for leaver_offset in (0, 1):
            forfeited = await create(node.tables, variant, round_limit=1)
            playing = await bid_to_play(node.tables, forfeited)
            for _ in range(rng.randrange(0, 6)):
                playing = await play_a_step(node, forfeited, rng)
            leaver = (playing.landlord_seat + leaver_offset) % players
            await node.tables.LeaveTable(
                pb.LeaveTableRequest(table_id=forfeited.table_id, request_id=rid()), metadata=forfeited.seat(leaver)
            )
            await collect(forfeited)
        abandoned = await create(node.tables, variant)
        await node.tables.LeaveTable(
            pb.LeaveTableRequest(table_id=abandoned.table_id, request_id=rid()), metadata=abandoned.seat(1)
        )
        await collect(abandoned)
        # The creator closing a table mid-round abandons it too.
        closing = await create(node.tables, variant)
        await bid_to_play(node.tables, closing)
        await node.tables.CloseTable(
            pb.CloseTableRequest(table_id=closing.table_id, request_id=rid()), metadata=closing.creator
        )
        await collect(closing)

        outcomes = [d["result"]["outcome"] for d in documents]
        assert len(documents) == 6 + 2 + 2 + 1 + 1
        assert {"void", "abandoned"} <= set(outcomes)
        assert {"landlord_won", "farmers_won"} & set(outcomes)
        assert any(len(d["deals"]) > 1 for d in documents), "no round had a redeal"
        assert sum(d["result"]["forfeited_by"] is not None for d in documents) >= 3


def _last_plays(document: Document) -> list[dict[str, Any]]:
    return [a for a in document["deals"][-1]["actions"] if a.get("play")]


def _change_seed(d: Document) -> None:
    seed = bytearray.fromhex(d["deals"][-1]["seed"])
    seed[0] ^= 1
    d["deals"][-1]["seed"] = seed.hex()


def _change_commitment(d: Document) -> None:
    commitment = bytearray.fromhex(d["deals"][-1]["commitment"])
    commitment[-1] ^= 1
    d["deals"][-1]["commitment"] = commitment.hex()


def _change_hand(d: Document) -> None:
    # Swap one card between two hands: still a partition of the deck, but not the seed's deal.
    hands = [h.split() for h in d["deals"][-1]["hands"]]
    hands[0][0], hands[1][0] = hands[1][0], hands[0][0]
    d["deals"][-1]["hands"] = [" ".join(h) for h in hands]


def _change_action(d: Document) -> None:
    # A played card becomes one that another seat was dealt.
    play = _last_plays(d)[0]
    seat = play["seat"]
    other = d["deals"][-1]["hands"][(seat + 1) % len(d["deals"][-1]["hands"])].split()
    cards = play["play"].split()
    cards[0] = other[0]
    play["play"] = " ".join(cards)


def _reorder_actions(d: Document) -> None:
    actions = d["deals"][-1]["actions"]
    first = next(i for i, a in enumerate(actions) if "play" in a)
    actions[first + 1], actions[first + 2] = actions[first + 2], actions[first + 1]


def _change_kitty(d: Document) -> None:
    # One kitty card becomes a card of the first hand: the hands stay as the seed dealt them.
    kitty = d["deals"][-1]["kitty"].split()
    kitty[0] = d["deals"][-1]["hands"][0].split()[0]
    d["deals"][-1]["kitty"] = " ".join(kitty)


def _time_goes_back(d: Document) -> None:
    # An action stamped a second before the one it follows.
    actions = d["deals"][-1]["actions"]
    before = datetime.datetime.fromisoformat(actions[0]["time"].replace("Z", "+00:00"))
    earlier = before - datetime.timedelta(seconds=1)
    actions[1]["time"] = earlier.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _change_stake(d: Document) -> None:
    d["result"]["stake"] += 1


def _change_changes(d: Document) -> None:
    changes = d["result"]["changes"]
    changes[0] += 1
    changes[1] -= 1


def _change_winner(d: Document) -> None:
    d["result"]["winner"] = (d["result"]["winner"] + 1) % len(d["result"]["changes"])


def _change_outcome(d: Document) -> None:
    d["result"]["outcome"] = "farmers_won" if d["result"]["outcome"] == "landlord_won" else "landlord_won"


TAMPERINGS: dict[str, Callable[[Document], None]] = {
    "seed": _change_seed,
    "commitment": _change_commitment,
    "hand": _change_hand,
    "action": _change_action,
    "order": _reorder_actions,
    "kitty": _change_kitty,
    "time": _time_goes_back,
    "stake": _change_stake,
    "changes": _change_changes,
    "winner": _change_winner,
    "outcome": _change_outcome,
}


class TestTampering:
    @pytest.mark.parametrize("variant", [THREE, FOUR], ids=["3p", "4p"])
    async def test_every_kind_of_tampering_is_caught(self, referees: Referees, variant: cards_pb2.Variant) -> None:
        node = await referees.start()
        text = await _one_round(node, 17, variant)
        original = json.loads(text)
        assert verify(text).ok
        assert original["result"]["outcome"] in ("landlord_won", "farmers_won")
        missed = []
        for name, tamper in TAMPERINGS.items():
            document = copy.deepcopy(original)
            tamper(document)
            assert document != original, name
            if verify(json.dumps(document)).ok:
                missed.append(name)
        assert not missed, f"tampering not caught: {missed}"

    async def test_each_problem_names_the_deal_and_the_action_it_was_found_in(self, referees: Referees) -> None:
        node = await referees.start()
        original = json.loads(await _one_round(node, 17, THREE))
        deal = original["deals"][-1]["deal_number"]
        expected = {
            "hand": f"deal {deal}: the seed does not deal the recorded hands and kitty",
            "kitty": f"deal {deal}: the seed does not deal the recorded hands and kitty",
            "commitment": f"deal {deal}: sha256(seed) is not the published commitment",
            "time": f"deal {deal}, action 2: times go backwards",
        }
        for name, problem in expected.items():
            document = copy.deepcopy(original)
            TAMPERINGS[name](document)
            assert verify(json.dumps(document)).problems == (problem,), name
        # The face-up card, or the seat that drew it, not the seed's.
        face_up = f"deal {deal}: the seed does not give the recorded face-up card and seat"
        document = copy.deepcopy(original)
        document["deals"][-1]["face_up_seat"] = (document["deals"][-1]["face_up_seat"] + 1) % 3
        assert verify(json.dumps(document)).problems == (face_up,)
        document = copy.deepcopy(original)
        document["deals"][-1]["face_up"] = next(
            card for card in document["deals"][-1]["kitty"].split() if card != document["deals"][-1]["face_up"]
        )
        assert verify(json.dumps(document)).problems == (face_up,)
        # Two actions in the same millisecond do not go backwards.
        document = copy.deepcopy(original)
        actions = document["deals"][-1]["actions"]
        actions[1]["time"] = actions[0]["time"]
        assert verify(json.dumps(document)).ok
        # A decision taken in no time is no problem; one taken in less is.
        actions[1]["took_ms"] = 0
        assert verify(json.dumps(document)).ok
        actions[1]["took_ms"] = -1
        assert verify(json.dumps(document)).problems == (f"deal {deal}, action 2: times go backwards",)
        # An action the clock never made, and an illegal one, are named by their place.
        document = copy.deepcopy(original)
        document["deals"][-1]["actions"][0]["timed_out"] = True
        (problem,) = verify(json.dumps(document)).problems
        assert problem.startswith(f"deal {deal}, action 1 (")
        assert problem.endswith("): the table has no clock, yet the action is marked timed out")
        document = copy.deepcopy(original)
        TAMPERINGS["action"](document)
        before, after = original["deals"][-1]["actions"], document["deals"][-1]["actions"]
        changed = next(index for index, (was, now) in enumerate(zip(before, after, strict=True)) if was != now)
        (problem,) = verify(json.dumps(document)).problems
        assert problem.startswith(f"deal {deal}, action {changed + 1} (")
        assert " is illegal: " in problem
        # A record without its seed is read, and says what could not be checked.
        document = copy.deepcopy(original)
        del document["deals"][-1]["seed"]
        unseeded = verify(json.dumps(document))
        assert unseeded.readable
        assert unseeded.problems == (f"deal {deal}: no seed, so the deal cannot be checked",)


async def _timed_out_round(node: Node) -> pb.GetReplayResponse:
    """A finished round where the first bidder never moves: the clock passes and plays for it (auto-play)."""
    table = await create(node.tables, THREE, round_limit=1, clock_settings=clock(100))
    idle = table.created.table.turn_seat
    bots = Bots(node.tables, node.rules, table, [s for s in range(3) if s != idle], seed=5, bid=3)
    await bots.finished()
    return await node.tables.GetReplay(pb.GetReplayRequest(table_id=table.table_id, round=1))


def _timed_out(document: Document, kind: str) -> dict[str, Any]:
    return next(a for a in document["deals"][-1]["actions"] if a["timed_out"] and kind in a)


@pytest.mark.on_each_store
class TestClockActions:
    """Every action marked timed out must be what the clock does under the table's timeout policy."""

    async def test_the_clocks_actions_verify_and_every_edit_of_them_is_caught(self, referees: Referees) -> None:
        node = await referees.start(clock_interval_s=0.02)
        response = await _timed_out_round(node)
        original = json.loads(response.json)
        assert original["timeout_policy"] == "auto_play"
        assert response.replay.timeout_policy == table_pb2.TIMEOUT_POLICY_AUTO_PLAY
        assert verify(response.json).ok, verify(response.json).problems
        assert _timed_out(original, "bid")["bid"] == 0
        assert _timed_out(original, "play")

        def edited(change: Callable[[Document], None]) -> list[str]:
            document = copy.deepcopy(original)
            change(document)
            result = verify(json.dumps(document))
            assert result.readable
            return list(result.problems)

        # The clock's auction pass turned into a bid of 1 (the next seat's 3 still beats it).
        problems = edited(lambda d: _timed_out(d, "bid").update(bid=1))
        assert any("the clock would have made" in problem for problem in problems), problems
        assert any("no clock" in problem for problem in edited(lambda d: d.update(timeout_policy=None)))
        assert any("never plays" in problem for problem in edited(lambda d: d.update(timeout_policy="forfeit")))
        # A record written before the policy was recorded is checked by what holds under every policy.
        older = copy.deepcopy(original)
        del older["timeout_policy"]
        assert verify(json.dumps(older)).ok
        _timed_out(older, "bid")["bid"] = 1
        assert not verify(json.dumps(older)).ok

    async def test_a_table_without_a_clock_records_no_policy(self, referees: Referees) -> None:
        node = await referees.start()
        document = json.loads(await _one_round(node, 3))
        assert document["timeout_policy"] is None
        assert not any(action["timed_out"] for deal in document["deals"] for action in deal["actions"])


class TestCardOrder:
    async def test_the_json_writes_cards_in_notation_order_and_the_message_by_card_id(self, referees: Referees) -> None:
        from dizhu.rules import format_cards, parse_cards

        node = await referees.start()
        table = await create(node.tables, FOUR, round_limit=1)
        await play_to_close(node, table, random.Random(31))
        response = (await round_replays(node, table))[0]
        document = json.loads(response.json)
        for entry, dealt in zip(document["deals"], response.replay.deals, strict=True):
            for text, hand in zip(entry["hands"], dealt.hands, strict=True):
                assert text == format_cards(parse_cards(text, 2))  # by rank, then suit, then deck
                ids = [card.copy * 54 + card_index(card) for card in hand.cards]
                assert ids == sorted(ids)
            kitty_ids = [card.copy * 54 + card_index(card) for card in dealt.kitty]
            assert kitty_ids == sorted(kitty_ids)
            assert entry["kitty"] == format_cards(parse_cards(entry["kitty"], 2))
        # In 4p the two orders differ: the JSON interleaves the decks, the message does not.
        first_hand = document["deals"][0]["hands"][0].split()
        assert any(card.endswith("'") for card in first_hand[: len(first_hand) // 2])


def card_index(card: cards_pb2.Card) -> int:
    """The card's id within its deck (docs/api.md, "Card id")."""
    if card.rank >= cards_pb2.RANK_BLACK_JOKER:
        return 52 + card.rank - cards_pb2.RANK_BLACK_JOKER
    return 4 * (card.rank - 1) + card.suit - 1


class TestUnreadable:
    @pytest.mark.parametrize(
        "text",
        ["", "not json", "[1, 2]", '{"schema": "other/v1"}', '{"schema": "dizhu.replay/v1", "variant": "3p"}'],
        ids=["empty", "not-json", "a-list", "another-schema", "no-deals"],
    )
    def test_a_text_that_is_no_replay_is_unreadable_not_tampered(self, text: str) -> None:
        result = verify(text)
        assert not result.ok
        assert not result.readable
        assert result.problems[0].startswith("not a replay")


class TestCommandLine:
    async def test_dizhu_replay_fetches_and_dizhu_verify_passes_it_and_fails_a_tampered_copy(
        self, referees: Referees, tmp_path: Path
    ) -> None:
        node = await referees.start()
        table = await create(node.tables, THREE, round_limit=1)
        await play_to_close(node, table, random.Random(23))
        text = (await node.tables.GetReplay(pb.GetReplayRequest(table_id=table.table_id, round=1))).json
        code, fetched = await run_cli("replay", table.table_id, "1", "--target", f"127.0.0.1:{node.referee.port}")
        assert code == 0, fetched
        assert json.loads(fetched) == json.loads(text)
        good = tmp_path / "round.json"
        good.write_text(fetched)
        tampered_document = json.loads(text)
        _change_action(tampered_document)
        bad = tmp_path / "tampered.json"
        bad.write_text(json.dumps(tampered_document))
        (code_good, out_good), (code_bad, out_bad), (code_missing, _) = await asyncio.gather(
            run_cli("verify", str(good)),
            run_cli("verify", str(bad)),
            run_cli("replay", "no-such-table", "1", "--target", f"127.0.0.1:{node.referee.port}"),
        )
        assert code_good == 0, out_good
        assert out_good.startswith("OK")
        assert code_bad == 1, out_bad
        assert "NOT VERIFIED" in out_bad
        assert code_missing == 1
