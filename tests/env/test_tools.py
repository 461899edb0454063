"""Standard tools work unchanged: masks as sb3-contrib's MaskablePPO reads them, infos a collector
can stack, PettingZoo's parallel API and its tests, a Gymnasium ``VectorEnv``, a global state,
named slices of the observations, the bundled bots as opponents."""

from __future__ import annotations

import itertools
import subprocess
import sys
import warnings
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import VectorEnv
from pettingzoo.test import max_cycles_test, parallel_api_test, render_test

import dizhu.env
from dizhu.env import DouDizhuEnv, VectorDouDizhuEnv, dou_dizhu_v0, encoding
from dizhu.env.info import rank_counts
from dizhu.rules import VARIANTS


def test_gymnasium_makes_the_environment_by_its_module_qualified_id_in_a_fresh_interpreter() -> None:
    """Gymnasium 1.x loads no plugins: ``"dizhu.env:dizhu/DouDizhu-v0"`` imports the module that registers it."""
    script = (
        "import gymnasium\n"
        "env = gymnasium.make('dizhu.env:dizhu/DouDizhu-v0', variant='4p', encoding='compact')\n"
        "observation, info = env.reset(seed=1)\n"
        "print(type(env.unwrapped).__name__, observation['observation'].shape, env.spec.id)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    size = encoding("compact", VARIANTS["4p"]).size
    assert (done.returncode, done.stdout) == (0, f"DouDizhuEnv ({size},) dizhu/DouDizhu-v0\n"), done.stderr


def test_the_single_seat_environment_offers_action_masks_through_gymnasiums_wrappers(variant: str) -> None:
    """MaskablePPO asks each environment for ``action_masks()`` (through ``get_wrapper_attr``)."""
    env = gymnasium.make(dizhu.env.GYMNASIUM_ID, variant=variant, encoding="compact", seat=1)
    observation, _ = env.reset(seed=3)
    done, steps = False, 0
    while not done:
        masks = env.get_wrapper_attr("action_masks")()
        assert masks.dtype == np.bool_
        assert masks.shape == (env.action_space.n,)  # type: ignore[attr-defined]
        assert np.array_equal(masks, observation["action_mask"].astype(bool))
        assert masks.any()
        observation, _, done, _, _ = env.step(int(np.flatnonzero(masks)[-1]))
        steps += 1
    assert steps > 1
    over = env.get_wrapper_attr("action_masks")()  # the next step only resets: the pass alone, to sample
    assert np.flatnonzero(over).tolist() == [0]


def _fixed_shape(info: dict[str, Any]) -> dict[str, tuple[type, tuple[int, ...]]]:
    return {key: (type(value), np.shape(value)) for key, value in info.items()}


def test_every_info_has_the_same_fixed_shape_entries_so_collectors_can_stack_them(variant: str) -> None:
    """Tianshou's collector stacks each step's info into arrays: a variable-length list breaks it."""
    aec = dou_dizhu_v0.env(variant=variant, encoding="compact")
    aec.reset(seed=2)
    shapes = set()
    for agent in aec.agent_iter(400):
        observation, _, terminated, truncated, info = aec.last()
        shapes.add(tuple(sorted(_fixed_shape(info).items())))
        if terminated or truncated:
            aec.step(None)
            aec.reset()
        else:
            aec.step(int(np.flatnonzero(observation["action_mask"])[0]))
        assert agent in aec.possible_agents
    assert all(shape == () for entries in shapes for _, (_, shape) in entries), shapes
    single = DouDizhuEnv(variant=variant, encoding="compact")
    _, info = single.reset(seed=2)
    gym_shapes = {tuple(sorted(_fixed_shape(info).items()))}
    for _ in range(200):
        _, _, done, _, info = single.step(int(np.flatnonzero(single.action_masks())[0]))
        gym_shapes.add(tuple(sorted(_fixed_shape(info).items())))
        if done:
            _, info = single.reset()
    assert all(shape == () for entries in gym_shapes for _, (_, shape) in entries), gym_shapes
    assert len(gym_shapes - {()}) <= 1, gym_shapes


@pytest.mark.parametrize("encoding_name", ["douzero", "compact"])
def test_the_parallel_environment_passes_pettingzoos_parallel_api_test(
    variant: str, engine: str, encoding_name: str
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parallel_api_test(
            dou_dizhu_v0.parallel_env(variant=variant, encoding=encoding_name, engine=engine), num_cycles=300
        )


def test_the_module_passes_pettingzoos_max_cycles_test() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        max_cycles_test(dou_dizhu_v0)


def test_the_environment_passes_pettingzoos_render_test(capsys: pytest.CaptureFixture[str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        render_test(dou_dizhu_v0.env)
    assert "to act, holding" in capsys.readouterr().out  # "human" prints the table


def test_a_parallel_step_plays_the_seat_to_act_and_ignores_the_others() -> None:
    env = dou_dizhu_v0.parallel_env(variant="3p", encoding="compact")
    observations, _ = env.reset(seed=4)
    acting = [agent for agent in env.agents if observations[agent]["action_mask"].any()]
    assert len(acting) == 1
    mover = acting[0]
    twin = dou_dizhu_v0.raw_env(variant="3p", encoding="compact")
    twin.reset(seed=4)
    assert twin.agent_selection == mover
    bid = 3
    others = dict.fromkeys(env.agents, 0) | {mover: bid}
    observations, rewards, terminations, truncations, infos = env.step(others)
    twin.step(bid)
    for agent in env.agents:
        assert np.array_equal(observations[agent]["observation"], twin.observe(agent)["observation"])
        assert np.array_equal(observations[agent]["action_mask"], twin.observe(agent)["action_mask"])
    assert set(rewards) == set(terminations) == set(truncations) == set(infos) == set(env.possible_agents)


def test_the_global_state_holds_every_hand_and_what_is_public(variant: str) -> None:
    """A centralised critic's input: full information, the same whoever is to act."""
    env = dou_dizhu_v0.raw_env(variant=variant, encoding="compact")
    env.reset(seed=5)
    layout = env.state_layout
    size = sum(field.size for field in layout.fields)
    assert env.state_space.shape == (size,)
    for _ in range(30):
        state = env.state()
        assert env.state_space.contains(state)
        game_state = env.game.state
        hands = layout.view(state, "hands")
        assert hands.tolist() == [rank_counts(card.rank for card in hand) for hand in game_state.hands]
        assert layout.view(state, "turn").tolist() == [int(seat == game_state.turn) for seat in range(len(hands))]
        observed = env.observe(env.agent_selection)
        env.step(int(np.flatnonzero(observed["action_mask"])[-1]))
    parallel = dou_dizhu_v0.parallel_env(variant=variant)
    parallel.reset(seed=5)
    assert parallel.state_space.contains(parallel.state())


@pytest.mark.parametrize("encoding_name", ["douzero", "compact"])
def test_the_observation_layouts_name_their_slices(variant: str, encoding_name: str) -> None:
    coder = encoding(encoding_name, VARIANTS[variant])
    fields = coder.layout.fields
    assert fields[0].start == 0
    assert all(after.start == before.stop for before, after in itertools.pairwise(fields))
    assert fields[-1].stop == coder.size
    env = dou_dizhu_v0.raw_env(variant=variant, encoding=encoding_name)
    env.reset(seed=6)
    for _ in range(40):
        agent = env.agent_selection
        seat = env.possible_agents.index(agent)
        observation = env.observe(agent)["observation"]
        hand = rank_counts(card.rank for card in env.game.state.hands[seat])
        if encoding_name == "compact":
            assert coder.layout.view(observation, "hand").tolist() == hand
            assert coder.layout.view(observation, "cards_left")[0] == sum(hand)
        else:
            own = coder.layout.view(observation, "auction_hand")
            assert own.sum() == sum(hand)
        env.step(int(np.flatnonzero(env.observe(agent)["action_mask"])[0]))
        if all(env.terminations.values()):
            env.reset()


def test_the_single_seat_environment_encodes_only_the_learners_observations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Opponents that read no observation (the default random ones, the bundled bots) cost no encoding."""
    env = DouDizhuEnv(variant="3p", encoding="compact", engine="python", seat=2)
    encoded: list[int] = []
    original = env.coder.encode

    def counting(seen: Any, out: Any = None) -> Any:
        encoded.append(int(seen.seat[0]))
        return original(seen, out)

    monkeypatch.setattr(env.coder, "encode", counting)
    env.reset(seed=8)
    steps = 1
    done = False
    while not done:
        _, _, done, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        steps += 1
    assert encoded == [2] * steps


def test_the_vector_environment_is_a_gymnasium_vector_env() -> None:
    with VectorDouDizhuEnv(6, variant="3p", encoding="compact", engine="python", seed=2) as tables:
        assert isinstance(tables, VectorEnv)
        wrapped = gymnasium.wrappers.vector.RecordEpisodeStatistics(tables)
        observation, info = wrapped.reset(seed=2)
        assert tables.observation_space.contains({key: np.array(value) for key, value in observation.items()})
        rng = np.random.default_rng(0)
        finished = 0
        for _ in range(300):
            seats = info["seat"].copy() if "seat" in info else tables.buffers["seat"].copy()
            actions = [int(rng.choice(np.flatnonzero(mask))) for mask in observation["action_mask"]]
            observation, reward, terminated, truncated, info = wrapped.step(np.array(actions))
            assert reward.shape == terminated.shape == truncated.shape == (6,)
            assert np.array_equal(reward, info["rewards"][np.arange(6), seats])
            assert not truncated.any()
            finished += int(terminated.sum())
            assert np.all(info["rewards"][~terminated] == 0)
        assert finished > 0
        assert "episode" in info or finished


def test_a_reset_with_a_seed_deals_that_seeds_tables_again() -> None:
    with VectorDouDizhuEnv(4, encoding="compact", engine="python", seed=9) as tables:
        first, _ = tables.reset(seed=9)
        dealt = first["observation"].copy()
        tables.step(np.zeros(4, dtype=np.int64))
        again, _ = tables.reset(seed=9)
        assert np.array_equal(again["observation"], dealt)
        tables.step(np.zeros(4, dtype=np.int64))
        fresh, _ = tables.reset()
        assert not any(np.array_equal(row, old) for row in fresh["observation"] for old in dealt)


def test_the_checked_environment_keeps_pettingzoos_order_and_bounds_errors() -> None:
    """``env()`` checks in place what PettingZoo's OrderEnforcingWrapper and AssertOutOfBoundsWrapper check."""
    env = dou_dizhu_v0.env(variant="3p", encoding="compact")
    with pytest.raises(AttributeError, match="agent_selection cannot be accessed before reset"):
        _ = env.agent_selection
    with pytest.raises(AssertionError, match="reset\\(\\) needs to be called before step"):
        env.step(0)
    with pytest.raises(AssertionError, match="reset\\(\\) needs to be called before observe"):
        env.observe("seat_0")
    env.reset(seed=1)
    size = env.action_space(env.agent_selection).n
    for wrong in (-1, size, None, 2.5):
        with pytest.raises(AssertionError, match="action is not in action space"):
            env.step(wrong)
    env.step(np.int64(size - 1))  # in bounds, illegal: replaced by the pass and flagged
    assert env.infos[env.possible_agents[(env.possible_agents.index(env.agent_selection) - 1) % 3]] == {
        "illegal_action": True
    }
    assert str(env) == "dou_dizhu_v0"
