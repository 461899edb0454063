"""Rewards are zero-sum; the vector environment matches single tables; no observation leaks a card."""

from __future__ import annotations

import numpy as np
import pytest

from dizhu.env import ENCODINGS, REWARDS, Seen, VectorDouDizhuEnv, encoding, from_state, rewards
from dizhu.env.engine import rules
from dizhu.env.game import Game
from dizhu.env.streams import table_generator
from dizhu.rules import VARIANTS, HouseRules, Settlement


@pytest.mark.parametrize("scheme", REWARDS)
def test_every_reward_scheme_is_zero_sum_and_follows_the_settlement(variant: str, scheme: str) -> None:
    game = Game(variant, rules("python"), house_rules=HouseRules(spring=True), reward=scheme)
    rng = np.random.default_rng(2)
    finished = 0
    for _ in range(40):
        game.start(rng.bytes(32), int(rng.integers(game.variant.players)))
        while not game.over:
            game.step(int(rng.choice(game.legal)))
        paid = game.rewards()
        assert sum(paid) == 0
        settlement = game.settlement
        assert settlement is not None
        if settlement.landlord is not None:
            finished += 1
            landlord_sign = 1 if settlement.landlord_won else -1
            assert np.sign(paid[settlement.landlord]) == landlord_sign
            if scheme == "settlement":
                assert paid == tuple(float(delta) for delta in settlement.deltas)
    assert finished > 30


def test_the_log_reward_counts_doublings_and_spring_as_douzeros_logadp() -> None:
    settled = Settlement(stake=8, deltas=(16, -8, -8), landlord=0, landlord_won=True, doublings=2, spring=True)
    assert rewards(settled, 3, "log") == (8.0, -4.0, -4.0)
    assert rewards(settled, 3, "win") == (2.0, -1.0, -1.0)
    assert rewards(Settlement.nothing(4), 4, "log") == (0.0,) * 4


def test_a_table_thrown_in_to_its_cap_pays_nothing(variant: str) -> None:
    game = Game(variant, rules("python"))
    game.redeal_cap = 2
    game.start(bytes(32), 0)
    while not game.over:
        game.step(0)  # everyone always passes
    assert game.redeals == 2
    assert game.rewards() == (0.0,) * game.variant.players


@pytest.mark.parametrize("workers", [0, 2])
def test_the_vector_environment_steps_each_table_as_a_single_game_would(variant: str, workers: int) -> None:
    tables = 4
    with VectorDouDizhuEnv(tables, variant=variant, encoding="compact", seed=40, workers=workers) as vector:
        games = [Game(variant, rules("python")) for _ in range(tables)]
        rngs = [table_generator(40, i) for i in range(tables)]
        coder = encoding("compact", VARIANTS[variant])
        for game, rng in zip(games, rngs, strict=True):
            game.start(rng.bytes(32), int(rng.integers(game.variant.players)))
        choose = np.random.default_rng(0)
        ended = 0
        for _ in range(150):
            masks = vector.action_mask.copy()
            actions = [int(choose.choice(np.flatnonzero(mask))) for mask in masks]
            vector.send(actions)
            out = vector.recv()
            for i, (game, rng) in enumerate(zip(games, rngs, strict=True)):
                game.step(actions[i])
                if game.over:
                    assert out["terminated"][i]
                    assert tuple(out["rewards"][i]) == game.rewards()
                    game.start(rng.bytes(32), int(rng.integers(game.variant.players)))
                    ended += 1
                else:
                    assert not out["terminated"][i]
                assert out["seat"][i] == game.turn
                assert np.array_equal(out["observation"][i], coder.encode(game.seen_by(game.turn))[0])
                assert np.array_equal(out["action_mask"][i], game.table.mask(game.legal))
        assert ended > 0


def test_what_a_game_keeps_is_what_the_rules_cores_view_shows(variant: str) -> None:
    game = Game(variant, rules("python"), house_rules=HouseRules(spring=True))
    rng = np.random.default_rng(8)
    positions = 0
    for _ in range(25):
        game.start(rng.bytes(32), int(rng.integers(game.variant.players)))
        while True:
            for seat in range(game.variant.players):
                assert game.seen_by(seat).same_as(from_state(game.state, seat)), (seat, game.state.history)
                positions += 1
            if game.over:
                break
            game.step(int(rng.choice(game.legal)))
    assert positions > 1_000


#: Observations the leak test checks, in both encodings, each seat's of every position.
LEAK_TEST_OBSERVATIONS = 1_000_000


def test_no_observation_of_a_million_tells_who_holds_a_card_the_seat_cannot_see() -> None:
    """Every observation stays the same when the cards of the seats other than the viewer's are
    replaced by noise: no encoding reads them (the cards the viewer has not seen enter only as
    the deck less what it saw). Positions are recorded from random rounds of both variants,
    then encoded and compared in bulk."""
    checked = 0
    noise = np.random.default_rng(9)
    while checked < LEAK_TEST_OBSERVATIONS:
        for variant in VARIANTS.values():
            positions = 4_000
            recorded = Seen.zeros(variant, positions)
            game = Game(variant, rules("python"), seen=recorded.rows(0, 1))
            rng = np.random.default_rng(checked)
            row = 0
            game.start(rng.bytes(32), 0)
            while row < positions:
                game.seen = recorded.rows(row, row + 1)
                if row:
                    game.seen_by(0)
                    for name in _SEEN_ARRAYS:
                        getattr(recorded, name)[row] = getattr(recorded, name)[row - 1]
                if game.over:
                    game.start(rng.bytes(32), int(rng.integers(variant.players)))
                else:
                    game.step(int(rng.choice(game.legal)))
                row += 1
            for seat in range(variant.players):
                recorded.seat[:] = seat
                twin = recorded.copy()
                others = np.arange(variant.players) != seat
                twin.hands[:, others] = noise.integers(0, 9, size=twin.hands[:, others].shape, dtype=np.int8)
                for name in ENCODINGS:
                    coder = encoding(name, variant)
                    assert np.array_equal(coder.encode(recorded), coder.encode(twin)), (name, seat)
                    checked += positions
    assert checked >= LEAK_TEST_OBSERVATIONS


_SEEN_ARRAYS = [name for name in Seen.__slots__ if name != "variant"]
