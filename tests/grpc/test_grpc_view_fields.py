"""What a view says that clients used to work out for themselves: the play to beat
(``TableView.to_beat``) and the plays that doubled the stake, with why
(``TableView.doubling_plays``).

Over gRPC: a trick followed step by step (leading, following, after a pass, a new trick),
and random 3p and 4p rounds where every view is checked against its own trick and stake.
In process: views of random rounds (bombs and rockets played often) against the rules
core's own reckoning (``view_for``: ``last_play``, ``last_player``, ``doublings``),
4p bombs of four and five cards against bombs of six or more.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dizhu.referee import commands
from dizhu.referee.auth import Principal, Role
from dizhu.referee.table import TableSettings, TableState
from dizhu.rules import (
    FOUR_PLAYER,
    THREE_PLAYER,
    Action,
    Bid,
    CombinationKind,
    Play,
    RoundState,
    Variant,
    legal_bids,
    legal_plays,
    pick_cards,
    try_classify,
    view_for,
)
from dizhu.rules.random_play import random_action
from dizhu.service import convert
from dizhu.service.convert.cards import card_id
from dizhu.v1 import cards_pb2, rules_service_pb2, table_pb2
from tests.support.grpc_calls import (
    FOUR,
    SEED,
    THREE,
    Dealt,
    Decision,
    RulesStub,
    TableStub,
    act,
    bid_to_play,
    cards_in,
    create_table,
    holds_bomb_and_rocket_3p,
    holds_small_and_big_bombs_4p,
    legal_moves,
    send,
    view,
)

_DOUBLING = (CombinationKind.BOMB, CombinationKind.ROCKET)


def _last_with_cards(table_view: table_pb2.TableView) -> table_pb2.TrickPlay | None:
    plays = [play for play in table_view.trick.plays if play.cards]
    return plays[-1] if plays else None


def _assert_consistent(table_view: table_pb2.TableView) -> None:
    """The new fields agree with the rest of the same view."""
    last = _last_with_cards(table_view) if table_view.phase == table_pb2.PHASE_PLAY else None
    if last is None:
        assert not table_view.HasField("to_beat"), table_view.to_beat
    else:
        assert table_view.to_beat == last
    assert len(table_view.doubling_plays) == table_view.doublings
    if table_view.phase == table_pb2.PHASE_AUCTION:
        assert list(table_view.legal_bids) == [0, *range(table_view.highest_bid + 1, 4)]
    else:
        assert list(table_view.legal_bids) == []
    if table_view.HasField("landlord_seat"):
        assert table_view.stake == table_view.highest_bid << table_view.doublings
    else:  # table.proto: 0 until the landlord is chosen, whatever the auction's highest bid
        assert table_view.stake == 0, (table_view.highest_bid, table_view.stake)


class TestATrickStepByStep:
    @pytest.mark.parametrize("variant", [THREE, FOUR], ids=["3p", "4p"])
    async def test_leading_following_passing_and_a_new_trick(
        self, tables: TableStub, rules: RulesStub, variant: cards_pb2.Variant
    ) -> None:
        table = await create_table(tables, variant, seeds=[SEED], first_dealer=0)
        leader_view = await bid_to_play(tables, table)
        landlord = leader_view.landlord_seat
        # Leading: nothing to beat, nothing doubled yet.
        assert not leader_view.HasField("to_beat")
        assert list(leader_view.doubling_plays) == []
        lead = (await legal_moves(rules, leader_view)).moves[0]
        led = (await send(tables, table, landlord, leader_view.version, Decision(cards=tuple(lead.cards)))).table
        # Following: the lead is the play to beat, for the next seat and for a spectator alike.
        follower = (landlord + 1) % table.players
        for seen in (await view(tables, table, follower), await view(tables, table), led):
            assert seen.to_beat.seat == landlord
            assert cards_in(seen.to_beat.cards) == sorted(cards_in(lead.cards))
            assert seen.to_beat.combination == lead.combination
        # After a pass the lead is still the play to beat.
        passed = (await send(tables, table, follower, led.version, Decision(cards=()))).table
        assert passed.turn_seat != landlord
        assert passed.to_beat.seat == landlord
        assert cards_in(passed.to_beat.cards) == sorted(cards_in(lead.cards))
        # Everyone else passes: the trick closes, the landlord leads a new one with nothing to beat.
        current = passed
        while current.tricks_completed == 0:
            current = (await send(tables, table, current.turn_seat, current.version, Decision(cards=()))).table
        assert current.turn_seat == landlord
        assert current.trick.leader_seat == landlord
        assert list(current.trick.plays) == []
        assert not current.HasField("to_beat")


class TestLegalBids:
    @pytest.mark.parametrize("variant", [THREE, FOUR], ids=["3p", "4p"])
    async def test_the_view_lists_the_bids_the_seat_to_act_may_make(
        self, tables: TableStub, variant: cards_pb2.Variant
    ) -> None:
        table = await create_table(tables, variant, seeds=[SEED], first_dealer=0)
        opening = await view(tables, table)
        assert opening.phase == table_pb2.PHASE_AUCTION
        assert list(opening.legal_bids) == [0, 1, 2, 3]
        # Every viewer reads the same list: the seat to act, another seat, a spectator.
        for seat in (opening.turn_seat, (opening.turn_seat + 1) % table.players):
            assert list((await view(tables, table, seat)).legal_bids) == [0, 1, 2, 3]
        after_one = (await send(tables, table, opening.turn_seat, opening.version, Decision(amount=1))).table
        assert list(after_one.legal_bids) == [0, 2, 3]
        after_two = (await send(tables, table, after_one.turn_seat, after_one.version, Decision(amount=2))).table
        assert list(after_two.legal_bids) == [0, 3]
        # A bid of 3 ends the auction: nothing to bid in the play.
        landlord_view = (await send(tables, table, after_two.turn_seat, after_two.version, Decision(amount=3))).table
        assert landlord_view.phase == table_pb2.PHASE_PLAY
        assert list(landlord_view.legal_bids) == []


class TestRandomRoundsOverGrpc:
    @pytest.mark.parametrize("variant", [THREE, FOUR], ids=["3p", "4p"])
    async def test_every_view_agrees_with_its_trick_and_stake(
        self, tables: TableStub, rules: RulesStub, variant: cards_pb2.Variant
    ) -> None:
        rng = random.Random(30)
        table = await create_table(tables, variant, seeds=[SEED, bytes(range(1, 33))], round_limit=2)
        seen: list[table_pb2.TableView] = []
        current = await view(tables, table)
        while current.phase != table_pb2.PHASE_CLOSED:
            before = current
            current = await act(tables, rules, table, rng, lambda _seat, response: seen.append(response.table))
            if current.HasField("last_settlement") and current.last_settlement.round == before.round:
                # The round's doubling plays, as the last view inside it told them, are what it settled.
                assert before.doublings == current.last_settlement.doublings
                assert list(current.doubling_plays) == []
        assert len(seen) > 100
        for table_view in seen:
            _assert_consistent(table_view)


class TestDoublingsOverGrpc:
    """Rounds dealt so that bombs (and in 3p the rocket) are held, played by seats that play a bomb
    or the rocket whenever they may: each such play adds a doubling play exactly when the rule says."""

    @pytest.mark.parametrize(
        ("variant", "dealt", "expected"),
        [
            (THREE, holds_bomb_and_rocket_3p, {"rocket, doubled", "bomb of 4, doubled"}),
            (FOUR, holds_small_and_big_bombs_4p, {"bomb of 6, doubled"}),
        ],
        ids=["3p", "4p"],
    )
    async def test_bombs_and_rockets_double_as_the_rule_says(
        self, tables: TableStub, rules: RulesStub, variant: cards_pb2.Variant, dealt: Dealt, expected: set[str]
    ) -> None:
        rng = random.Random(9)
        seen: Counter[str] = Counter()
        for attempt in range(60):
            seed = bytes([attempt]) * 32
            probe = await create_table(tables, variant, seeds=[seed], first_dealer=0)
            hands = [list((await view(tables, probe, seat)).your_hand) for seat in range(probe.players)]
            if not dealt(hands):
                continue
            table = await create_table(tables, variant, seeds=[seed], first_dealer=0, round_limit=1)
            current = await bid_to_play(tables, table)
            while current.phase == table_pb2.PHASE_PLAY:
                seat = current.turn_seat
                mine = await view(tables, table, seat)
                moves = await legal_moves(rules, mine)
                doubling = [move for move in moves.moves if move.combination.kind in _PB_DOUBLING]
                options: list[rules_service_pb2.LegalMove | None] = [*(doubling or moves.moves)]
                if moves.can_pass and not doubling:
                    options.append(None)
                move = rng.choice(options)
                cards = () if move is None else tuple(move.cards)
                after = (await send(tables, table, seat, mine.version, Decision(cards=cards))).table
                kind, size = (None, 0) if move is None else (move.combination.kind, len(cards))
                doubles = kind == cards_pb2.COMBINATION_KIND_ROCKET or (
                    kind == cards_pb2.COMBINATION_KIND_BOMB and size >= _MIN_DOUBLING_BOMB[variant]
                )
                if kind in _PB_DOUBLING:
                    what = "rocket" if kind == cards_pb2.COMBINATION_KIND_ROCKET else f"bomb of {size}"
                    seen[f"{what}, {'doubled' if doubles else 'not doubled'}"] += 1
                if after.phase != table_pb2.PHASE_PLAY:
                    # The round is over: it settled the doublings the views had told, and this play's.
                    assert after.last_settlement.doublings == len(mine.doubling_plays) + doubles
                    break
                _assert_consistent(after)
                assert list(after.doubling_plays[: len(mine.doubling_plays)]) == list(mine.doubling_plays)
                added = list(after.doubling_plays[len(mine.doubling_plays) :])
                if move is not None:
                    assert (after.to_beat.seat, cards_in(after.to_beat.cards)) == (seat, sorted(cards_in(cards)))
                elif after.tricks_completed == mine.tricks_completed:
                    assert after.to_beat == mine.to_beat
                else:
                    assert not after.HasField("to_beat")
                if not doubles:
                    assert added == []
                    current = after
                    continue
                cause = (
                    table_pb2.DOUBLING_CAUSE_ROCKET
                    if kind == cards_pb2.COMBINATION_KIND_ROCKET
                    else table_pb2.DOUBLING_CAUSE_BOMB
                )
                assert [(entry.cause, entry.seat, entry.trick) for entry in added] == [
                    (cause, seat, mine.tricks_completed)
                ]
                assert cards_in(added[0].cards) == sorted(cards_in(cards))
                current = after
            if expected <= set(seen) and (variant == THREE or any("not doubled" in key for key in seen)):
                break
        assert expected <= set(seen), seen
        if variant == FOUR:
            assert any(key.endswith("not doubled") for key in seen), seen


_PB_DOUBLING = (cards_pb2.COMBINATION_KIND_BOMB, cards_pb2.COMBINATION_KIND_ROCKET)
_MIN_DOUBLING_BOMB = {THREE: THREE_PLAYER.min_doubling_bomb_size, FOUR: FOUR_PLAYER.min_doubling_bomb_size}


# In process: views against the rules core.

_SEAT_0 = Principal(Role.SEAT, 0)
_SPECTATOR = Principal(Role.SPECTATOR)


def _eager_doubler(state: RoundState, rng: random.Random) -> Action:
    """A random legal action that plays a bomb or the rocket whenever it may, half the time."""
    bids = legal_bids(state)
    if bids:
        return Bid(state.turn, rng.choice(bids))
    doubling = [play for play in legal_plays(state) if play.kind in _DOUBLING]
    if doubling and rng.random() < 0.5:
        return Play(state.turn, pick_cards(state.hands[state.turn], rng.choice(doubling)))
    return random_action(state, rng)


def _round_tables(variant: Variant, seed: int) -> list[TableState]:
    """The table after every decision of one random round (one round, its thrown-in deals included)."""
    rng = random.Random(seed)
    names = [f"p{seat}" for seat in range(variant.players)]
    settings_ = TableSettings(variant, round_limit=1)
    table = commands.create_table("view-fields", settings_, [rng.randbytes(32)], names, 0, lambda: "").outcome.table
    found = [table]
    while table.deal_running and table.round is not None:
        action = _eager_doubler(table.round, rng)
        ctx = commands.Context(Principal(Role.SEAT, action.seat), 0)
        if isinstance(action, Bid):
            table = commands.bid(table, ctx, action.amount).table
        else:
            table = commands.play(table, ctx, action.cards).table
        found.append(table)
    return found


def _check_against_rules(table: TableState, principal: Principal, seen: Counter[str]) -> None:
    table_view = convert.table_view(table, principal)
    _assert_consistent(table_view)
    if not (table.deal_running and table.round is not None):
        assert not table_view.HasField("to_beat")
        assert list(table_view.doubling_plays) == []
        return
    state = table.round
    reckoned = view_for(state, None)
    if reckoned.last_play is None:
        assert not table_view.HasField("to_beat")
    else:
        seen["to beat"] += 1
        assert table_view.to_beat.seat == reckoned.last_player
        assert table_view.to_beat.combination.size == reckoned.last_play.size
        assert int(table_view.to_beat.combination.kind) == int(reckoned.last_play.kind)
    assert len(table_view.doubling_plays) == reckoned.doublings == table_view.doublings
    # Every bomb and rocket of the deal, doubled or not, with the rule's reason.
    doubled = iter(table_view.doubling_plays)
    trick = 0
    to_close = state.variant.passes_to_close
    passes = 0
    for action in state.history:
        if not isinstance(action, Play):
            continue
        if action.is_pass:
            passes += 1
            if passes == to_close:
                trick, passes = trick + 1, 0
            continue
        passes = 0
        combination = try_classify(action.cards, state.variant)
        assert combination is not None
        kind = combination.kind
        if kind is CombinationKind.ROCKET:
            seen["rocket"] += 1
            entry = next(doubled)
            assert entry.cause == table_pb2.DOUBLING_CAUSE_ROCKET
        elif kind is CombinationKind.BOMB and len(action.cards) >= state.variant.min_doubling_bomb_size:
            seen[f"bomb of {len(action.cards)}, doubled"] += 1
            entry = next(doubled)
            assert entry.cause == table_pb2.DOUBLING_CAUSE_BOMB
        else:
            if kind is CombinationKind.BOMB:
                seen[f"bomb of {len(action.cards)}, not doubled"] += 1
            continue
        assert (entry.seat, entry.trick) == (action.seat, trick)
        assert cards_in(entry.cards) == sorted(card_id(card) for card in action.cards)
    assert next(doubled, None) is None


class TestViewsAgainstTheRulesCore:
    @pytest.mark.parametrize(
        ("variant", "expected"),
        [
            (THREE_PLAYER, {"rocket", "bomb of 4, doubled"}),
            (FOUR_PLAYER, {"bomb of 4, not doubled", "bomb of 5, not doubled", "bomb of 6, doubled"}),
        ],
        ids=["3p", "4p"],
    )
    def test_random_rounds_with_bombs_and_rockets(self, variant: Variant, expected: set[str]) -> None:
        seen: Counter[str] = Counter()
        for seed in range(40):
            for table in _round_tables(variant, seed):
                _check_against_rules(table, _SEAT_0, seen)
                _check_against_rules(table, _SPECTATOR, seen)
        # The rounds did reach every case the rule tells apart.
        assert expected <= set(seen), seen
        assert seen["to beat"] > 0

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(seed=st.integers(min_value=0, max_value=2**32), four=st.booleans())
    def test_any_round(self, seed: int, four: bool) -> None:
        seen: Counter[str] = Counter()
        for table in _round_tables(FOUR_PLAYER if four else THREE_PLAYER, seed):
            _check_against_rules(table, _SEAT_0, seen)
