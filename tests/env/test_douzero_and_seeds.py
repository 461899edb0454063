"""The DouZero encoding is DouZero's own, bit for bit; seeds deal what the referee deals."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from dizhu.env import dou_dizhu_v0, douzero_features, from_state
from dizhu.env.info import rank_counts
from dizhu.env.single import DouDizhuEnv
from dizhu.rules import THREE_PLAYER, Bid, Phase, RoundState, legal_plays
from dizhu.rules.random_play import random_round

VECTORS = json.loads((Path(__file__).parents[2] / "docs" / "deal-vectors.json").read_text())["vectors"]
#: DouZero's card codes, by our rank (3..A are 3..14, then 2 = 17, BJ = 20, RJ = 30).
DOUZERO_CODES = (3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 17, 20, 30)


def douzero_infoset(state: RoundState) -> tuple[object, list[tuple[int, ...]]]:
    """DouZero's ``InfoSet`` of the seat to act, built from the whole state as DouZero's game builds it."""
    try:
        from douzero.env.game import InfoSet
    except ImportError as missing:
        raise AssertionError("douzero is not installed: pip install --no-deps douzero (.ci/run does)") from missing

    def codes(ranks: object) -> list[int]:
        return [DOUZERO_CODES[rank] for rank in sorted(ranks)]  # type: ignore[call-overload]

    landlord = state.landlord
    assert landlord is not None
    position = {landlord: "landlord", (landlord + 1) % 3: "landlord_down", (landlord + 2) % 3: "landlord_up"}
    seat = state.turn
    info = InfoSet(position[seat])
    info.player_hand_cards = codes(card.rank for card in state.hands[seat])
    info.other_hand_cards = codes(card.rank for other in range(3) if other != seat for card in state.hands[other])
    sequence: list[list[int]] = []
    info.played_cards = {name: [] for name in position.values()}
    info.last_move_dict = {name: [] for name in position.values()}
    for action in state.history:
        if isinstance(action, Bid):
            continue
        move = codes(card.rank for card in action.cards)
        sequence.append(move)
        info.played_cards[position[action.seat]] += move
        info.last_move_dict[position[action.seat]] = move
    info.card_play_action_seq = sequence
    # DouZero's GameEnv.get_last_move: the last move, or the one before it when the last was a pass.
    info.last_move = (sequence[-1] or sequence[-2]) if len(sequence) >= 2 else (sequence[-1] if sequence else [])
    info.num_cards_left_dict = {position[other]: len(state.hands[other]) for other in range(3)}
    info.bomb_num = state.doublings
    legal = [tuple(int(rank) for rank in play.ranks) for play in legal_plays(state)]
    if state.last_play is not None:
        legal.insert(0, ())
    info.legal_actions = [codes(play) for play in legal]
    return info, legal


def test_the_3p_features_are_douzeros_own_bit_for_bit() -> None:
    try:
        from douzero.env.env import get_obs
    except ImportError as missing:
        raise AssertionError("douzero is not installed: pip install --no-deps douzero (.ci/run does)") from missing
    rng = random.Random(11)
    checked = {"landlord": 0, "landlord_up": 0, "landlord_down": 0}
    widths = set()
    for _ in range(60):
        for _action, transition in random_round(THREE_PLAYER, rng):
            state = transition.state
            if state.phase is not Phase.PLAY:
                continue
            info, legal = douzero_infoset(state)
            theirs = get_obs(info)
            ours = douzero_features(from_state(state, state.turn), [rank_counts(play) for play in legal])
            for key in ("x_batch", "z_batch", "x_no_action", "z"):
                assert ours[key].dtype == theirs[key].dtype, key
                assert ours[key].shape == theirs[key].shape, key
                assert np.array_equal(ours[key], theirs[key]), (key, theirs["position"])
            checked[theirs["position"]] += 1
            widths.add(ours["x_batch"].shape[1])
    assert min(checked.values()) > 100, checked
    assert widths == {373, 484}


def test_the_feature_sizes_are_douzeros_in_3p_and_the_same_scheme_in_4p() -> None:
    env = DouDizhuEnv(variant="3p")
    assert env.coder.state_size == 484 - 54
    assert env.coder.history_size == 5 * 162
    env4 = DouDizhuEnv(variant="4p")
    assert env4.coder.history_size == 5 * 4 * 108


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: f"{v['variant']}-{v['seed'][:8]}-d{v['dealer']}")
def test_a_preset_round_seed_deals_the_documented_vector(vector: dict[str, object]) -> None:
    env = dou_dizhu_v0.raw_env(variant=str(vector["variant"]))
    env.reset(options={"round_seed": vector["seed"], "dealer": vector["dealer"]})
    dealt = env.game.state.deal
    assert [sorted(card.id for card in hand) for hand in dealt.hands] == [
        sorted(hand["ids"])
        for hand in vector["hands"]  # type: ignore[attr-defined]
    ]
    assert [card.id for card in dealt.kitty] == vector["kitty"]["ids"]  # type: ignore[index]
    assert dealt.face_up.id == vector["face_up"]["id"]  # type: ignore[index]
    assert env.agent_selection == f"seat_{vector['face_up']['seat']}"  # type: ignore[index]


def test_the_same_seed_gives_the_same_episode(variant: str) -> None:
    first, second = DouDizhuEnv(variant=variant), DouDizhuEnv(variant=variant)
    one, _ = first.reset(seed=5)
    two, _ = second.reset(seed=5)
    assert np.array_equal(one["observation"], two["observation"])
    assert first.game.state == second.game.state
    second.reset(seed=6)
    assert first.game.state.deal != second.game.state.deal
