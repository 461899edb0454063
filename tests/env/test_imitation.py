"""The recipe of examples/imitation.py learns: its smoke run (a minute, by counts, with a cheap
teacher) makes a policy that beats random play in duplicate, bids, enters a tournament as a
``PolicyBot``, and the curve of its checkpoints is written and drawn."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from xml.etree import ElementTree

import numpy as np
import pytest

from dizhu.env.bot import PolicyBot
from dizhu.env.learned import MlpPolicy
from dizhu.rules import VARIANTS
from tests.support.examples import EXAMPLES, load_example

EXAMPLE = EXAMPLES / "imitation.py"
#: A quick teacher: the expert with a few sampled deals per decision and no time limit (no timing).
TEACHER = "expert:60s,12deals"


@pytest.fixture(scope="module")
def imitation() -> ModuleType:
    return load_example("imitation")


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``examples/imitation.py recipe --smoke`` as a user runs it."""
    folder = tmp_path_factory.mktemp("imitation")
    command = [sys.executable, str(EXAMPLE), "recipe", "--smoke", "--workers", "1", "--teacher", TEACHER,
               "--output", str(folder)]  # fmt: skip
    finished = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert "held-out agreement with the teacher" in finished.stdout
    return folder


def test_the_smoke_run_learns_to_beat_random_play(imitation: ModuleType, smoke_run: Path) -> None:
    steps = json.loads((smoke_run / "recipe.json").read_text())["steps"]
    assert [step["step"] for step in steps] == [step for step, _ in imitation.STEPS]
    assert steps[0]["rounds"] == imitation.SMOKE[0]
    assert steps[3]["decisions"] > steps[1]["decisions"] > 500  # the student's rounds were labelled too
    trained = imitation.duplicate(MlpPolicy.load(smoke_run / "policy.npz"), "random", 30, seed=3)
    assert trained["low"] > 0, trained
    assert trained["landlord_share"] > 0  # it bids
    # The same network with fresh weights, on the same deals: the margin is learned, not built in.
    fresh = imitation.duplicate(MlpPolicy(imitation.initial_weights(VARIANTS["3p"], np.random.default_rng(0)), "3p"),
                                "random", 30, seed=3)  # fmt: skip
    assert trained["points"] > fresh["points"] + 1, (trained, fresh)


def test_the_curve_of_the_checkpoints_is_written_and_drawn(imitation: ModuleType, smoke_run: Path) -> None:
    points = imitation.curve(smoke_run, rounds=3, opponent="heuristic")
    assert len(points) == 3  # the untrained network, then a checkpoint at the end of each training
    assert points[0]["minute"] == 0 < points[1]["minute"] < points[2]["minute"]
    assert points[0]["points"] < points[2]["points"]
    assert json.loads((smoke_run / "curve.json").read_text()) == points
    assert all(point["low"] <= point["points"] <= point["high"] for point in points)
    drawn = ElementTree.parse(smoke_run / "curve.svg").getroot()
    assert drawn.tag == "{http://www.w3.org/2000/svg}svg"
    assert len(drawn.findall("{http://www.w3.org/2000/svg}circle")) == 3


def test_the_trained_bot_is_a_policy_bot_reading_the_weights_named(
    imitation: ModuleType, smoke_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DIZHU_IMITATION_WEIGHTS", str(smoke_run / "policy.npz"))
    bot = imitation.TrainedBot()
    assert isinstance(bot, PolicyBot)
    assert bot.encoding == "compact"
    trained = MlpPolicy.load(smoke_run / "policy.npz")
    assert all(np.array_equal(bot.policy.weights[name], trained.weights[name]) for name in trained.weights)


def test_a_recipe_run_again_goes_on_from_the_step_after_the_last_done(smoke_run: Path, tmp_path: Path) -> None:
    """A recipe stopped after its first training: run again, it collects with the student and
    trains, and leaves the first data and training as they were."""
    folder = tmp_path / "resumed"
    folder.mkdir()
    (folder / "data-1").symlink_to(smoke_run / "data-1")
    (folder / "policy-2.npz").write_bytes((smoke_run / "policy-2.npz").read_bytes())
    done = json.loads((smoke_run / "recipe.json").read_text())
    (folder / "recipe.json").write_text(json.dumps({**done, "steps": done["steps"][:2]}))
    before = sorted(path.stat().st_mtime_ns for path in (smoke_run / "data-1").iterdir())
    command = [sys.executable, str(EXAMPLE), "recipe", "--smoke", "--workers", "1", "--teacher", TEACHER,
               "--output", str(folder)]  # fmt: skip
    finished = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert finished.returncode == 0, finished.stderr[-3000:]
    steps = json.loads((folder / "recipe.json").read_text())["steps"]
    assert steps[:2] == done["steps"][:2]
    assert [step["step"] for step in steps[2:]] == ["collect with the student", "train"]
    assert sorted(path.stat().st_mtime_ns for path in (smoke_run / "data-1").iterdir()) == before
    assert (folder / "data-2").is_dir()
    assert (folder / "policy.npz").is_file()


def test_the_targets_hold_the_choice_and_the_softmax_of_the_searched_means(
    imitation: ModuleType, smoke_run: Path
) -> None:
    """Where the expert searched, its means (softmax at ``SOFT_TEMPERATURE``) are ``SOFT_SHARE`` of the
    target and its choice the rest; a bid or a forced move is its choice alone."""
    data = imitation.Decisions.load([smoke_run / "data-1"], "3p")
    picked = np.arange(len(data))
    rows, actions, starts, labelled = data.batch(picked)
    target = data.targets(picked, rows, starts, labelled)
    assert np.allclose(np.add.reduceat(target, starts), 1, atol=1e-5)
    searched = np.flatnonzero(np.diff(data.searched) >= 2)
    assert len(searched) > len(data) // 4  # most plays were searched among several candidates
    with np.load(sorted((smoke_run / "data-1").glob("shard-*.npz"))[0]) as shard:
        pairs, means = shard["searched_offsets"], shard["searched_means"]
        first = int(np.flatnonzero(np.diff(pairs) >= 2)[0])
        span = slice(pairs[first], pairs[first + 1])
        expected = np.exp((means[span] - means[span].max()) / imitation.SOFT_TEMPERATURE)
        expected = imitation.SOFT_SHARE * expected / expected.sum()
        rows_of_first = slice(starts[first], starts[first] + data.offsets[first + 1] - data.offsets[first])
        found = target[rows_of_first][data.soft_positions[span]] - (
            (1 - imitation.SOFT_SHARE) * (actions[rows_of_first][data.soft_positions[span]] == data.labels[first])
        )
        assert np.allclose(found, expected, atol=1e-5), (found, expected)
    unsearched = np.flatnonzero(np.diff(data.searched) == 0)
    assert len(unsearched) > 0  # the bids at least
    assert np.allclose(target[labelled[unsearched]], 1)
