"""The environments pass PettingZoo's and Gymnasium's own checkers, with warnings as errors."""

from __future__ import annotations

import importlib
import warnings

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.utils.env_match import check_environments_match
from pettingzoo.test import api_test, seed_test

import dizhu.env
from dizhu.env import dou_dizhu_v0
from dizhu.env.engine import EngineMissing, available_engines, native_required, rules

# PettingZoo exempts its own classic environments, whose observations are dicts holding an
# action mask, from two advisory warnings ("should be a Box", "is not a NumPy array") by
# listing their names; dou_dizhu_v0 is such an environment, listed the same way. Every other
# warning of the checkers stays an error.
_api_test_module = importlib.import_module("pettingzoo.test.api_test")
for _exempted in (_api_test_module.env_obs_space, _api_test_module.env_obs_dicts):
    if "dou_dizhu_v0" not in _exempted:
        _exempted.append("dou_dizhu_v0")


@pytest.mark.parametrize("encoding", ["douzero", "compact"])
def test_the_aec_environment_passes_pettingzoos_api_test(variant: str, engine: str, encoding: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        api_test(dou_dizhu_v0.env(variant=variant, encoding=encoding, engine=engine), num_cycles=200)


def test_the_aec_environment_passes_pettingzoos_seed_test(variant: str, engine: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        seed_test(lambda: dou_dizhu_v0.env(variant=variant, encoding="compact", engine=engine), num_cycles=100)


def test_the_aec_environment_does_not_claim_to_be_parallelizable() -> None:
    assert dou_dizhu_v0.raw_env.metadata["is_parallelizable"] is False


@pytest.mark.parametrize("encoding", ["douzero", "compact"])
def test_the_single_seat_environment_passes_gymnasiums_check_env(variant: str, engine: str, encoding: str) -> None:
    made = gymnasium.make(dizhu.env.GYMNASIUM_ID, variant=variant, encoding=encoding, engine=engine, seat=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(made.unwrapped)


def _engine_pairs() -> list[tuple[str, str]]:
    """The pure engine against every engine offered (itself too: with one engine, a determinism check)."""
    return [("python", other) for other in available_engines()]


@pytest.mark.parametrize(("first", "second"), _engine_pairs(), ids=str)
def test_the_engines_make_identical_environments(variant: str, first: str, second: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_environments_match(
            dizhu.env.DouDizhuEnv(variant=variant, engine=first),
            dizhu.env.DouDizhuEnv(variant=variant, engine=second),
            num_steps=300,
            seed=7,
        )


def test_a_required_native_engine_is_there() -> None:
    """With ``DIZHU_REQUIRE_NATIVE=1`` the native engine must be offered (never a silent fallback)."""
    if native_required():
        assert "native" in available_engines(), "DIZHU_REQUIRE_NATIVE=1 but dizhu.engine offers no native rules"
    else:
        assert available_engines()[0] == "python"


def test_asking_for_a_missing_native_engine_says_how_to_get_it() -> None:
    if "native" in available_engines():
        assert rules("native") is not rules("python")
    else:
        with pytest.raises(EngineMissing, match="native rules engine is not installed"):
            rules("native")
