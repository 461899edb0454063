"""Rewards are zero-sum; the vector environment matches single tables; no observation leaks a card."""

from __future__ import annotations

import random

import numpy as np
import pytest

from dizhu.env import REWARDS, VectorDouDizhuEnv, encoding, from_state, rewards
from dizhu.env.engine import rules
from dizhu.env.game import Game
from dizhu.rules import VARIANTS, HouseRules, RoundState, Settlement
from dizhu.rules.random_play import random_round


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
        rngs = [np.random.default_rng(40 + i) for i in range(tables)]
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
                assert np.array_equal(out["observation"][i], coder.encode(game.info(game.turn)))
                assert np.array_equal(out["action_mask"][i], game.table.mask(game.legal))
        assert ended > 0


def _twin(state: RoundState, seat: int, rng: random.Random) -> RoundState:
    """``state`` with every card the seat cannot see shuffled among the seats that hold them."""
    hidden = [card for other, hand in enumerate(state.hands) if other != seat for card in hand]
    rng.shuffle(hidden)
    hands = []
    for other, hand in enumerate(state.hands):
        if other == seat:
            hands.append(hand)
        else:
            hands.append(tuple(sorted(hidden[: len(hand)])))
            hidden = hidden[len(hand) :]
    return state._replace(hands=tuple(hands))


#: Observations checked by the leak test: each seat's view of random positions of both variants.
LEAK_TEST_OBSERVATIONS = 15_000
#: Of which encoded in both encodings too (the rest compare the seat's information, which is all
#: an encoding reads).
LEAK_TEST_ENCODED = 2_000


def test_no_observation_reveals_a_card_the_seat_cannot_see() -> None:
    """Each observation equals that of a twin position, where the cards the seat cannot see are
    dealt differently among the seats holding them: the seat cannot tell who holds what."""
    rng = random.Random(5)
    observations = encoded = 0
    while observations < LEAK_TEST_OBSERVATIONS:
        for variant in VARIANTS.values():
            coders = [encoding("douzero", variant), encoding("compact", variant)]
            for _action, transition in random_round(variant, rng):
                state = transition.state
                for seat in range(variant.players):
                    seen, twin_seen = from_state(state, seat), from_state(_twin(state, seat, rng), seat)
                    assert seen == twin_seen
                    if encoded < LEAK_TEST_ENCODED:
                        for coder in coders:
                            assert np.array_equal(coder.encode(seen), coder.encode(twin_seen))
                        encoded += 1
                    observations += 1
    assert encoded == LEAK_TEST_ENCODED
