"""What the single-seat and vector environments promise beside the game itself: the ``"human"``
render mode, the ``illegal_action`` flag in every info (``reset``'s and the vector
environment's too), and a mask to sample from on every step of Gymnasium's next-step autoreset."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import dizhu.env
from dizhu.env import DouDizhuEnv, VectorDouDizhuEnv
from dizhu.env.actions import PASS


def test_the_single_seat_environment_renders_for_humans_as_the_aec_environment_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    made = gymnasium.make(dizhu.env.GYMNASIUM_ID, variant="3p", encoding="compact", render_mode="human")
    assert "human" in made.metadata["render_modes"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(made.unwrapped)
    made.reset(seed=1)
    capsys.readouterr()
    assert made.render() is None
    assert "to act, holding" in capsys.readouterr().out


def test_an_unknown_render_mode_is_refused_naming_the_modes_offered() -> None:
    with pytest.raises(ValueError, match="expected one of ansi, human or None"):
        DouDizhuEnv(render_mode="rgb_array")


def test_resets_info_holds_the_illegal_action_flag_as_every_steps_does(engine: str) -> None:
    env = DouDizhuEnv(variant="4p", encoding="compact", engine=engine)
    _, info = env.reset(seed=4)
    assert info == {"illegal_action": False}
    _, _, _, _, stepped = env.step(env.action_space.n - 1)  # never legal at the first decision
    assert stepped == {"illegal_action": True}


def test_every_mask_offers_an_action_under_gymnasiums_next_step_autoreset(engine: str) -> None:
    """``make_vec``'s default autoreset spends the step after a round's end on a reset: the mask
    asked for before it must still offer an action to sample (it is ignored)."""
    envs = gymnasium.make_vec(
        dizhu.env.GYMNASIUM_ID, num_envs=3, vectorization_mode="sync", variant="3p", encoding="compact", engine=engine
    )
    envs.reset(seed=5)
    rng = np.random.default_rng(5)
    ended = resets_after_an_end = 0
    previous = np.zeros(3, dtype=np.bool_)
    for _ in range(600):
        masks = envs.call("action_masks")
        assert all(mask.any() for mask in masks)
        for i in np.flatnonzero(previous):
            assert np.flatnonzero(masks[i]).tolist() == [PASS]  # the round is over: anything goes, the pass alone
            resets_after_an_end += 1
        actions = np.array([int(rng.choice(np.flatnonzero(mask))) for mask in masks])
        _, _, terminated, truncated, infos = envs.step(actions)
        assert not infos["illegal_action"][~previous].any()
        previous = terminated | truncated
        ended += int(previous.sum())
    envs.close()
    assert ended > 3
    assert resets_after_an_end > 3


@pytest.mark.parametrize("workers", [0, 2])
def test_the_vector_environment_flags_each_replaced_action_in_its_info(engine: str, workers: int) -> None:
    with VectorDouDizhuEnv(4, variant="3p", encoding="douzero", engine=engine, workers=workers, seed=3) as tables:
        observation, info = tables.reset(seed=3)
        assert info["illegal_action"].tolist() == [False] * 4
        size = tables.single_action_space.n
        rng = np.random.default_rng(3)
        for _ in range(40):
            masks = observation["action_mask"]
            legal = [int(rng.choice(np.flatnonzero(mask))) for mask in masks]
            forbidden = int(np.flatnonzero(masks[1] == 0)[0])
            actions = np.array([legal[0], forbidden, size, -1])
            observation, _, _, _, info = tables.step(actions)
            assert info["illegal_action"].tolist() == [False, True, True, True]
            assert info["illegal_action"] is tables.buffers["illegal_action"]
        tables.send(np.array([int(np.flatnonzero(mask)[0]) for mask in observation["action_mask"]]))
        assert not tables.recv()["illegal_action"].any()
        tables.step(np.full(4, -1))
        _, info = tables.reset()
        assert not info["illegal_action"].any()  # a new round: nothing replaced yet


def test_an_illegal_action_in_one_shard_is_flagged_for_its_rows_only(engine: str) -> None:
    with VectorDouDizhuEnv(4, variant="4p", encoding="douzero", engine=engine, workers=2, seed=6) as tables:
        buffers = tables.buffers
        first, second = tables.shards
        tables.send(np.full(2, tables.single_action_space.n - 1), 0)  # never legal at the first decision
        tables.recv_shard()
        assert buffers["illegal_action"][first].tolist() == [True, True]
        assert buffers["illegal_action"][second].tolist() == [False, False]
        legal = [int(np.flatnonzero(mask)[0]) for mask in buffers["action_mask"][second]]
        tables.send(legal, 1)
        tables.recv_shard()
        assert buffers["illegal_action"].tolist() == [True, True, False, False]  # each row: its table's last step
