"""A policy that imitates the ``expert`` in ``dizhu.env``, numpy only: it beats the heuristic bot.

The recipe (docs/env.md, "Imitating the expert"), in three steps that ``recipe``
runs one after the other within a time budget (two hours on two cores by default)::

    .venv/bin/python examples/imitation.py recipe --hours 2 --output imitation-run
    # or step by step:
    .venv/bin/python examples/imitation.py collect --minutes 60 --output imitation-run/data
    .venv/bin/python examples/imitation.py train imitation-run/data --minutes 20 --output imitation-run/policy.npz
    .venv/bin/python examples/imitation.py evaluate imitation-run/policy.npz --rounds 400

1. ``collect``: tables of ``dizhu.env.DouDizhuEnv`` where every seat is labelled by the expert
   bot (``dizhu.expert``, a determinized search): each decision's compact observation, its legal
   actions, the expert's choice and, for a play it searched, the mean settlement each candidate
   move reached in its playouts are kept. With ``--student`` (DAgger) a share of the seats
   play the student's own choices while the expert still labels them, so that the data holds
   the positions the student reaches, not only the expert's.
2. ``train``: ``dizhu.env.learned.MlpPolicy`` (a two-layer perceptron scoring each legal action
   from the state's and the action's features) fitted by softmax cross-entropy over each
   decision's legal actions, with Adam, against a target that is half the expert's choice and
   half the softmax of its candidates' means (``SOFT_SHARE``, ``SOFT_TEMPERATURE``); a tenth of
   the data is held out and its agreement with the expert printed.
3. ``evaluate``: the policy against two heuristic bots (and against random play) in
   duplicate, in-process: every deal is played with the policy in each seat, so that the luck
   of the cards cancels; points per game with a 95 % interval.

The policy enters a tournament at a real referee unchanged: ``bot = "imitation:TrainedBot"``
with ``PYTHONPATH=examples`` and ``DIZHU_IMITATION_WEIGHTS`` naming the weights
(``examples/imitation-tournament.toml``). The weights the package ships are the bundled bot
``learned`` (``dizhu bot --bot learned``, the web table's opponents, ``dizhu play``).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from dizhu.env import DouDizhuEnv
from dizhu.env.actions import ActionTable
from dizhu.env.bot import PolicyBot
from dizhu.env.encodings import encoding
from dizhu.env.learned import MlpPolicy, action_features, shipped_weights, state_features
from dizhu.env.opponents import BotOpponent, bundled_bot
from dizhu.env.single import Policy
from dizhu.expert.search import PlaySearch
from dizhu.rules import VARIANTS, Variant

#: The expert as a teacher: its default 96 sampled deals per decision, with no time limit (so the
#: labels do not depend on how loaded the machine is).
TEACHER = "expert:60s,96deals"
HIDDEN = (256, 128)
#: The target of a play the expert searched: this share of it is the softmax of the mean settlements
#: its search found for its candidates (at this temperature, in stakes), the rest its choice. The
#: means say which moves were nearly as good and which were blunders, where the choice alone says
#: only which one won a noisy contest: the student learns more from each labelled decision.
SOFT_SHARE = 0.5
SOFT_TEMPERATURE = 0.25


# -- 1. collect ------------------------------------------------------------------------------


class Labelled(BotOpponent):
    """A seat whose decisions the teacher labels; it plays the teacher's choice, or the student's."""

    def __init__(self, teacher: BotOpponent, log: list[tuple], student: Policy | None = None) -> None:  # type: ignore[type-arg]
        super().__init__(teacher.bot)
        self.log = log
        self.student = student

    def act(self, game, bids) -> int:  # type: ignore[no-untyped-def]
        seat, legal = game.turn, game.legal
        observation = game.observe(_compact(game.variant), seat)
        label = super().act(game, bids)
        if label in legal:
            actions, means = _searched(self.bot, game.table, legal)
            self.log.append((observation, np.array(legal, dtype=np.int32), label, seat, actions, means))
        if self.student is None:
            return label
        mask = np.zeros(game.table.size, dtype=np.int8)
        mask[legal] = 1
        return int(self.student(observation, mask))


def _searched(bot: object, table: ActionTable, legal: list[int]) -> tuple[list[int], list[float]]:
    """The legal actions the teacher's last search played out (at least two) and their mean settlements."""
    search: PlaySearch | None = getattr(bot, "last_search", None)
    if search is None:
        return [], []
    found = []
    for candidate, mean, deals in zip(search.candidates, search.means, search.deals, strict=True):
        action = table.index_of(candidate)
        if deals and action in legal:
            found.append((action, mean))
    if len(found) < 2:
        return [], []
    return [action for action, _ in found], [mean for _, mean in found]


def _compact(variant: Variant):  # type: ignore[no-untyped-def]
    return encoding("compact", variant)


def _collect_worker(job: tuple[str, Path, float | None, int | None, int, int, str, str | None, float]) -> int:
    variant_name, folder, seconds, most, worker, seed, teacher, student_path, student_share = job
    variant = VARIANTS[variant_name]
    rng = np.random.default_rng([seed, worker])
    student = MlpPolicy.load(student_path) if student_path else None
    log: list[tuple] = []  # type: ignore[type-arg]
    rewards: list[float] = []
    rounds = 0
    shard = 0
    deadline = time.monotonic() + (seconds if seconds is not None else math.inf)

    def done() -> bool:
        return time.monotonic() >= deadline or (most is not None and rounds >= most)

    while not done():
        teachers = [bundled_bot(teacher, int(rng.integers(2**63))) for _ in range(variant.players)]
        seats = [
            Labelled(teacher_bot, log, student if student is not None and rng.random() < student_share else None)
            for teacher_bot in teachers
        ]
        env = DouDizhuEnv(variant_name, seat=0, opponents=seats[1:], encoding="compact", reward="settlement")
        start = len(log)
        env.reset(seed=int(rng.integers(2**63)))
        while not env.game.over:
            env.step(seats[0].act(env.game, env.auction))
        outcome = env.game.rewards()
        rewards.extend(outcome[entry[3]] for entry in log[start:])
        rounds += 1
        if rounds % 100 == 0 or done():
            _write_shard(folder / f"shard-{worker:02d}-{shard:04d}.npz", log, rewards)
            shard += 1
            log, rewards = [], []
    return rounds


def _write_shard(path: Path, log: list[tuple], rewards: list[float]) -> None:  # type: ignore[type-arg]
    legal = [entry[1] for entry in log]
    searched = [len(entry[4]) for entry in log]
    np.savez_compressed(
        path,
        observations=np.stack([entry[0] for entry in log]),
        offsets=np.concatenate([[0], np.cumsum([len(each) for each in legal])]).astype(np.int64),
        legal=np.concatenate(legal).astype(np.int32),
        labels=np.array([entry[2] for entry in log], dtype=np.int32),
        seats=np.array([entry[3] for entry in log], dtype=np.int8),
        rewards=np.array(rewards, dtype=np.float32),
        searched_offsets=np.concatenate([[0], np.cumsum(searched)]).astype(np.int64),
        searched_actions=np.array([action for entry in log for action in entry[4]], dtype=np.int32),
        searched_means=np.array([mean for entry in log for mean in entry[5]], dtype=np.float32),
    )


def collect(
    folder: Path,
    seconds: float | None = None,
    *,
    rounds: int | None = None,
    variant: str = "3p",
    workers: int = 2,
    seed: int = 0,
    teacher: str = TEACHER,
    student: Path | None = None,
    student_share: float = 0.5,
) -> int:
    """Labels decisions for ``seconds`` (or ``rounds`` in all) on ``workers`` processes into ``folder``;
    the rounds played."""
    folder.mkdir(parents=True, exist_ok=True)
    each = None if rounds is None else -(-rounds // workers)
    jobs = [
        (variant, folder, seconds, each, worker, seed, teacher, str(student) if student else None, student_share)
        for worker in range(workers)
    ]
    if workers == 1:
        return _collect_worker(jobs[0])
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        return sum(pool.map(_collect_worker, jobs))


# -- 2. train --------------------------------------------------------------------------------


@dataclass
class Decisions:
    """Labelled decisions: observations, each one's legal actions (``legal[offsets[i]:offsets[i+1]]``),
    the teacher's choice, and the searched actions' soft targets: pairs ``searched[i]:searched[i+1]``
    of each decision's (position among its legal actions, share of the target)."""

    variant: Variant
    observations: npt.NDArray[np.int8]
    offsets: npt.NDArray[np.int64]
    legal: npt.NDArray[np.int32]
    labels: npt.NDArray[np.int32]
    searched: npt.NDArray[np.int64]
    soft_positions: npt.NDArray[np.int64]
    soft_targets: npt.NDArray[np.float32]

    @classmethod
    def load(cls, folders: list[Path], variant: str) -> Decisions:
        shards = sorted(path for folder in folders for path in folder.glob("shard-*.npz"))
        if not shards:
            raise SystemExit(f"no shard-*.npz in {', '.join(map(str, folders))}: run collect first")
        observations, legal, labels, sizes, searched, actions, means = [], [], [], [], [], [], []
        for path in shards:
            with np.load(path) as shard:
                observations.append(shard["observations"])
                legal.append(shard["legal"])
                labels.append(shard["labels"])
                sizes.append(np.diff(shard["offsets"]))
                searched.append(np.diff(shard["searched_offsets"]))
                actions.append(shard["searched_actions"])
                means.append(shard["searched_means"])
        offsets = np.concatenate([[0], np.cumsum(np.concatenate(sizes))]).astype(np.int64)
        pairs = np.concatenate([[0], np.cumsum(np.concatenate(searched))]).astype(np.int64)
        all_legal = np.concatenate(legal)
        positions, targets = _soft_targets(offsets, all_legal, pairs, np.concatenate(actions), np.concatenate(means))
        return cls(
            VARIANTS[variant],
            np.concatenate(observations),
            offsets,
            all_legal,
            np.concatenate(labels),
            pairs,
            positions,
            targets,
        )

    def __len__(self) -> int:
        return len(self.labels)

    def batch(
        self, picked: npt.NDArray[np.intp]
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], npt.NDArray[np.intp], npt.NDArray[np.intp]]:
        """For decisions ``picked``: each row's decision (0..len-1), each row's action, each decision's
        first row, and the row of each decision's label."""
        rows, within, starts = _ranges(self.offsets, picked)
        actions = self.legal[self.offsets[picked][rows] + within]
        labelled = np.flatnonzero(actions == self.labels[picked][rows])
        return rows, actions.astype(np.intp), starts, labelled

    def targets(
        self, picked: npt.NDArray[np.intp], rows: npt.NDArray[np.intp], starts: npt.NDArray[np.intp],
        labelled: npt.NDArray[np.intp],
    ) -> npt.NDArray[np.float32]:  # fmt: skip
        """Each row's share of its decision's target: ``SOFT_SHARE`` of the searched means' softmax
        where the teacher searched, the rest (all where it did not) on the teacher's choice."""
        target = np.zeros(len(rows), dtype=np.float32)
        pair_rows, within, _ = _ranges(self.searched, picked)
        soft = np.zeros(len(picked), dtype=bool)
        soft[pair_rows] = True
        target[labelled] = np.where(soft, 1 - SOFT_SHARE, 1.0)
        pairs = self.searched[picked][pair_rows] + within
        np.add.at(target, starts[pair_rows] + self.soft_positions[pairs], SOFT_SHARE * self.soft_targets[pairs])
        return target


def _ranges(
    offsets: npt.NDArray[np.int64], picked: npt.NDArray[np.intp]
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """For the ranges ``offsets[i]:offsets[i+1]`` of ``picked``, laid end to end: each element's range
    (0..len-1), its place within its range, and where each range starts."""
    sizes = offsets[picked + 1] - offsets[picked]
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.intp)
    ranges = np.repeat(np.arange(len(picked)), sizes)
    return ranges, np.arange(int(sizes.sum())) - starts[ranges], starts


def _soft_targets(
    offsets: npt.NDArray[np.int64], legal: npt.NDArray[np.int32], pairs: npt.NDArray[np.int64],
    actions: npt.NDArray[np.int32], means: npt.NDArray[np.float32],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:  # fmt: skip
    """Each searched pair's position among its decision's (ascending) legal actions, and its share of
    the softmax of its decision's means at ``SOFT_TEMPERATURE``."""
    # Each decision's legal actions ascend, and decisions follow each other: (decision, action) keys
    # are sorted, so one search finds every pair.
    stride = np.int64(1 << 20)
    keys = np.repeat(np.arange(len(offsets) - 1, dtype=np.int64), np.diff(offsets)) * stride + legal
    sizes = np.diff(pairs)
    decisions = np.repeat(np.arange(len(pairs) - 1, dtype=np.int64), sizes)
    positions = np.searchsorted(keys, decisions * stride + actions) - offsets[decisions]
    firsts, groups = pairs[:-1][sizes > 0], np.repeat(np.arange(int((sizes > 0).sum())), sizes[sizes > 0])
    scaled = means / SOFT_TEMPERATURE
    if not len(scaled):
        return positions, scaled.astype(np.float32)
    exps = np.exp(scaled - np.maximum.reduceat(scaled, firsts)[groups])
    return positions, (exps / np.add.reduceat(exps, firsts)[groups]).astype(np.float32)


def initial_weights(variant: Variant, rng: np.random.Generator) -> dict[str, npt.NDArray[np.float32]]:
    """He-initialised weights of the sizes the features need."""
    observations = np.zeros((1, encoding("compact", variant).size), dtype=np.int8)
    state_size = state_features(variant, observations).shape[1]
    action_size = action_features(variant, observations, np.zeros(1, dtype=np.intp), np.zeros(1, dtype=np.intp)).shape[
        1
    ]
    first, second = HIDDEN

    def he(rows: int, columns: int, fan_in: int) -> npt.NDArray[np.float32]:
        return (rng.standard_normal((rows, columns)) * math.sqrt(2 / fan_in)).astype(np.float32)

    return {
        "state": he(state_size, first, state_size + action_size),
        "action": he(action_size, first, state_size + action_size),
        "b1": np.zeros(first, dtype=np.float32),
        "w2": he(first, second, first),
        "b2": np.zeros(second, dtype=np.float32),
        "w3": he(second, 1, second)[:, 0],
        "b3": np.zeros((), dtype=np.float32),
    }


def _gradients(
    policy: MlpPolicy, data: Decisions, picked: npt.NDArray[np.intp]
) -> tuple[float, float, dict[str, npt.NDArray[np.float32]]]:
    """The batch's mean cross-entropy, its agreement with the teacher, and the loss's gradients."""
    weights, variant = policy.weights, policy.variant
    observations = data.observations[picked]
    rows, actions, starts, labelled = data.batch(picked)
    target = data.targets(picked, rows, starts, labelled)
    states = state_features(variant, observations)
    acts = action_features(variant, observations, rows, actions)
    first = states @ weights["state"] + 0  # (decisions, hidden)
    z1 = first[rows] + acts @ weights["action"] + weights["b1"]
    h1 = np.maximum(z1, 0)
    z2 = h1 @ weights["w2"] + weights["b2"]
    h2 = np.maximum(z2, 0)
    scores = h2 @ weights["w3"] + weights["b3"]
    top = np.maximum.reduceat(scores, starts)
    exps = np.exp(scores - top[rows])
    sums = np.add.reduceat(exps, starts)
    probability = exps / sums[rows]
    count = len(picked)
    loss = float(-(target * np.log(probability + 1e-12)).sum() / count)
    agreement = float((scores[labelled] >= top - 1e-7).mean())
    d_scores = (probability - target) / count
    d_h2 = np.outer(d_scores, weights["w3"]) * (z2 > 0)
    d_h1 = (d_h2 @ weights["w2"].T) * (z1 > 0)
    d_first = np.add.reduceat(d_h1, starts)
    gradients = {
        "w3": h2.T @ d_scores,
        "b3": np.asarray(d_scores.sum(), dtype=np.float32),
        "w2": h1.T @ d_h2,
        "b2": d_h2.sum(axis=0),
        "action": acts.T @ d_h1,
        "b1": d_h1.sum(axis=0),
        "state": states.T @ d_first,
    }
    return loss, agreement, {name: value.astype(np.float32) for name, value in gradients.items()}


def agreement(policy: MlpPolicy, data: Decisions, picked: npt.NDArray[np.intp], batch: int = 2048) -> float:
    """The share of ``picked`` decisions where the policy's choice is the teacher's."""
    agreed = 0
    for begin in range(0, len(picked), batch):
        part = picked[begin : begin + batch]
        rows, actions, starts, labelled = data.batch(part)
        scores = policy.scores(data.observations[part], rows, actions)
        agreed += int((scores[labelled] >= np.maximum.reduceat(scores, starts) - 1e-7).sum())
    return agreed / max(1, len(picked))


def train(
    data: Decisions,
    seconds: float | None = None,
    *,
    epochs: int | None = None,
    seed: int = 0,
    batch: int = 256,
    rate: float = 1e-3,
    start: MlpPolicy | None = None,
    decay: float = 1e-4,
    checkpoint_seconds: float | None = None,
    on_checkpoint: Callable[[float, MlpPolicy], None] | None = None,
) -> MlpPolicy:
    """The policy after ``seconds`` (or ``epochs``) of Adam (with ``decay``) on nine tenths of ``data``,
    from ``start``'s weights or fresh ones, the rate falling linearly to a tenth: the weights of the
    epoch that agreed best with the teacher on the tenth held out (a network this size overfits a
    few tens of thousands of decisions within ten epochs). ``on_checkpoint(seconds trained, best
    policy so far)`` every ``checkpoint_seconds``."""
    if (seconds is None) == (epochs is None):
        raise ValueError("train for seconds or for epochs")
    rng = np.random.default_rng(seed)
    policy = start if start is not None else MlpPolicy(initial_weights(data.variant, rng), data.variant)
    order = rng.permutation(len(data))
    held_out, learn = order[: len(data) // 10], order[len(data) // 10 :]
    batch = max(1, min(batch, len(learn)))
    batches = len(learn) // batch
    moments = {name: np.zeros_like(value) for name, value in policy.weights.items()}
    squares = {name: np.zeros_like(value) for name, value in policy.weights.items()}
    began = time.monotonic()
    next_checkpoint = checkpoint_seconds or math.inf
    steps = 0
    best, best_agreement = policy, -1.0

    def progress() -> float:
        return (time.monotonic() - began) / seconds if seconds is not None else steps / (batches * (epochs or 1))

    epoch = 0
    while progress() < 1:
        shuffled = rng.permutation(learn)
        losses = []
        for begin in range(0, batches * batch, batch):
            loss, _, gradients = _gradients(policy, data, shuffled[begin : begin + batch])
            losses.append(loss)
            steps += 1
            step_rate = rate * max(0.1, 1 - progress())
            for name, gradient in gradients.items():
                moments[name] = 0.9 * moments[name] + 0.1 * gradient
                squares[name] = 0.999 * squares[name] + 0.001 * gradient * gradient
                corrected = moments[name] / (1 - 0.9**steps)
                scale = np.sqrt(squares[name] / (1 - 0.999**steps)) + 1e-8
                updated = policy.weights[name] * (1 - step_rate * decay) - step_rate * corrected / scale
                policy.weights[name] = updated.astype(np.float32)
            trained = time.monotonic() - began
            if on_checkpoint is not None and trained >= next_checkpoint:
                on_checkpoint(trained, best)
                next_checkpoint += checkpoint_seconds or math.inf
            if progress() >= 1:
                break
        epoch += 1
        agreed = agreement(policy, data, held_out[:20000])
        if agreed > best_agreement:
            best_agreement = agreed
            best = MlpPolicy({name: value.copy() for name, value in policy.weights.items()}, policy.variant)
        line = f"epoch {epoch}: loss {np.mean(losses):.4f}, held-out agreement with the teacher {agreed:.3f}"
        print(line, flush=True)  # noqa: T201
    if on_checkpoint is not None:
        on_checkpoint(time.monotonic() - began, best)
    return best


# -- 3. evaluate -----------------------------------------------------------------------------


def duplicate(policy: Policy, opponent: str, rounds: int, *, variant: str = "3p", seed: int = 0) -> dict[str, float]:
    """``policy`` against bundled bots ``opponent`` in every seat of ``rounds`` deals (the same deals
    for each seat): its points per game with a 95 % interval, and its share of games as the landlord."""
    players = VARIANTS[variant].players
    per_deal = []
    landlord = games = 0
    for deal in range(rounds):
        total = 0.0
        for seat in range(players):
            others = [bundled_bot(opponent, seed * 7919 + deal * players + other) for other in range(players - 1)]
            env = DouDizhuEnv(variant, seat=seat, opponents=others, encoding="compact", reward="settlement")
            observation, _ = env.reset(seed=seed * 1_000_003 + deal)
            done, reward = False, 0.0
            while not done:
                observation, reward, done, _, _ = env.step(
                    policy(observation["observation"], observation["action_mask"])
                )
            total += float(reward)
            settled = env.game.settlement
            games += 1
            landlord += settled is not None and settled.landlord == seat
        per_deal.append(total / players)
    points = np.array(per_deal)
    half = 1.96 * points.std(ddof=1) / math.sqrt(len(points)) if len(points) > 1 else math.inf
    return {
        "points": float(points.mean()),
        "low": float(points.mean() - half),
        "high": float(points.mean() + half),
        "landlord_share": landlord / games,
        "games": games,
    }


# -- the recipe and its learning curve -------------------------------------------------------

#: The recipe's steps for a two-hour budget, in minutes (scaled to another budget): collect from the
#: expert's play, train, collect again with the student in half the seats (DAgger), train on it all.
STEPS = (("collect", 55.0), ("train", 5.0), ("collect with the student", 47.0), ("train", 5.0))
#: The same steps by count, for a run of a minute or so (``--smoke``): rounds, epochs, rounds, epochs.
SMOKE = (40, 8, 20, 4)
CHECKPOINT_MINUTES = 2.5


def recipe(folder: Path, *, hours: float = 2.0, smoke: bool = False, workers: int = 2, seed: int = 0,
           teacher: str = TEACHER, variant: str = "3p") -> MlpPolicy:  # fmt: skip
    """Runs ``STEPS`` into ``folder``: the data (``data-*``), each training's policy (``policy-*.npz``,
    the last also ``policy.npz``), checkpoints named by the minute of the recipe they were taken at
    (``checkpoints/*.npz``), and ``recipe.json``, written after each step: a recipe stopped between
    steps goes on from the next one when run again with the same folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "checkpoints").mkdir(exist_ok=True)
    progress = folder / "recipe.json"
    log: list[dict[str, object]] = json.loads(progress.read_text())["steps"] if progress.exists() else []
    scale = hours / 2.0
    began = time.monotonic() - 60 * sum(float(str(step["minutes"])) for step in log)

    def checkpoint(_: float, policy: MlpPolicy) -> None:
        minute = (time.monotonic() - began) / 60
        policy.save(folder / "checkpoints" / f"minute-{minute:07.2f}.npz")

    def policy_after(number: int) -> Path:
        return folder / f"policy-{number + 1}.npz"

    policy: MlpPolicy | None = None
    folders: list[Path] = []
    for number, (step, minutes) in enumerate(STEPS):
        collecting = step.startswith("collect")
        if collecting:
            folders.append(folder / f"data-{len(folders) + 1}")
        if number < len(log):  # done before
            if not collecting:
                policy = MlpPolicy.load(policy_after(number))
            continue
        started = time.monotonic()
        budget = None if smoke else minutes * 60 * scale
        if collecting:
            student = None
            if policy is not None:
                student = folder / "student.npz"
                policy.save(student)
            rounds = collect(folders[-1], budget, rounds=SMOKE[number] if smoke else None, variant=variant,
                             workers=workers, seed=seed + number, teacher=teacher, student=student)  # fmt: skip
            log.append({"step": step, "rounds": rounds})
        else:
            data = Decisions.load(folders, variant)
            policy = train(data, budget, epochs=SMOKE[number] if smoke else None, seed=seed + number, start=policy,
                           checkpoint_seconds=None if smoke else CHECKPOINT_MINUTES * 60 * scale,
                           on_checkpoint=checkpoint)  # fmt: skip
            policy.save(policy_after(number))
            log.append({"step": step, "decisions": len(data)})
        log[-1]["minutes"] = round((time.monotonic() - started) / 60, 2)
        progress.write_text(json.dumps({"hours": hours, "smoke": smoke, "teacher": teacher, "steps": log}, indent=1))
        print(f"{step}: {log[-1]}", flush=True)  # noqa: T201
    assert policy is not None
    policy.save(folder / "policy.npz")
    return policy


def curve(folder: Path, *, rounds: int = 200, opponent: str = "heuristic", seed: int = 1) -> list[dict[str, float]]:
    """Each checkpoint of a recipe against ``opponent`` (``duplicate``), by the minute it was taken at,
    after the untrained network at minute 0: written to ``curve.json`` and drawn in ``curve.svg``.
    A training keeps its best epoch so far, so checkpoints often hold the same weights: those are
    played once."""
    checkpoints = [
        (float(path.stem.removeprefix("minute-")), MlpPolicy.load(path))
        for path in sorted((folder / "checkpoints").glob("minute-*.npz"))
    ]
    variant = checkpoints[0][1].variant if checkpoints else VARIANTS["3p"]
    checkpoints.insert(0, (0.0, MlpPolicy(initial_weights(variant, np.random.default_rng(seed)), variant)))
    measured: dict[bytes, dict[str, float]] = {}
    points = []
    for minute, policy in checkpoints:
        weights = b"".join(policy.weights[name].tobytes() for name in sorted(policy.weights))
        if weights not in measured:
            measured[weights] = duplicate(policy, opponent, rounds, variant=variant.name, seed=seed)
        points.append({"minute": minute, **measured[weights]})
        print(_report(f"minute {minute:.1f} against {opponent}", measured[weights]), flush=True)  # noqa: T201
    (folder / "curve.json").write_text(json.dumps(points, indent=1) + "\n")
    (folder / "curve.svg").write_text(_svg(points, opponent))
    return points


def _svg(points: list[dict[str, float]], opponent: str) -> str:
    """A plot of points per game (with intervals) over the recipe's minutes; 0 is parity with ``opponent``."""
    width, height, margin = 640, 320, 48
    top = max([1.0, *(point["high"] for point in points)])
    bottom = min([-1.0, *(point["low"] for point in points)])
    right = max([1.0, *(point["minute"] for point in points)])

    def x(minute: float) -> float:
        return margin + (width - 2 * margin) * minute / right

    def y(value: float) -> float:
        return margin + (height - 2 * margin) * (top - value) / (top - bottom)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
        'font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<line x1="{margin}" y1="{y(0):.1f}" x2="{width - margin}" y2="{y(0):.1f}" stroke="#999" '
        'stroke-dasharray="4 4"/>',
        f'<text x="{width - margin}" y="{y(0) - 4:.1f}" text-anchor="end" fill="#666">{opponent} (parity)</text>',
        f'<text x="{width / 2}" y="{height - 10}" text-anchor="middle">minutes of the recipe (two cores)</text>',
        f'<text x="14" y="{height / 2}" transform="rotate(-90 14 {height / 2})" text-anchor="middle">'
        f"points per game against {opponent} (95 %)</text>",
    ]
    parts += [
        f'<text x="{margin - 6}" y="{y(value) + 4:.1f}" text-anchor="end">{value:+d}</text>'
        for value in range(math.ceil(bottom), math.floor(top) + 1)
    ]
    parts += [
        f'<text x="{x(minute):.1f}" y="{height - margin + 16}" text-anchor="middle">{minute}</text>'
        for minute in range(0, int(right) + 1, 15 if right > 30 else 1)
    ]
    line = " ".join(f"{x(point['minute']):.1f},{y(point['points']):.1f}" for point in points)
    parts.append(f'<polyline points="{line}" fill="none" stroke="#c0392b" stroke-width="2"/>')
    for point in points:
        px = x(point["minute"])
        parts.append(f'<line x1="{px:.1f}" y1="{y(point["low"]):.1f}" x2="{px:.1f}" y2="{y(point["high"]):.1f}" '
                     'stroke="#c0392b"/>')  # fmt: skip
        parts.append(f'<circle cx="{px:.1f}" cy="{y(point["points"]):.1f}" r="3" fill="#c0392b"/>')
    return "\n".join([*parts, "</svg>", ""])


# -- at a referee ----------------------------------------------------------------------------


class TrainedBot(PolicyBot):
    """The trained policy at a referee (``bot = "imitation:TrainedBot"``): the weights
    ``DIZHU_IMITATION_WEIGHTS`` names, else the package's shipped ``learned`` weights."""

    name = "imitation"

    def __init__(self) -> None:
        path = os.environ.get("DIZHU_IMITATION_WEIGHTS") or str(shipped_weights("3p"))
        super().__init__(MlpPolicy.load(path), encoding="compact")


# -- the command line ------------------------------------------------------------------------


def _report(name: str, figures: dict[str, float]) -> str:
    return (
        f"{name}: {figures['points']:+.2f} points/game [{figures['low']:+.2f}, {figures['high']:+.2f}] over "
        f"{figures['games']:.0f} games, landlord in {figures['landlord_share']:.0%}"
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant", default="3p", choices=sorted(VARIANTS))
    parser.add_argument("--seed", type=int, default=0)
    commands = parser.add_subparsers(dest="command", required=True)
    collecting = commands.add_parser("collect", help="label decisions with the expert")
    collecting.add_argument("--minutes", type=float, default=60)
    collecting.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    collecting.add_argument("--teacher", default=TEACHER)
    collecting.add_argument("--student", type=Path, help="weights whose choices a share of the seats play (DAgger)")
    collecting.add_argument("--student-share", type=float, default=0.5)
    collecting.add_argument("--output", type=Path, required=True)
    training = commands.add_parser("train", help="fit the policy to the labelled decisions")
    training.add_argument("data", type=Path, nargs="+")
    training.add_argument("--minutes", type=float, default=20)
    training.add_argument("--start", type=Path, help="weights to go on from")
    training.add_argument("--output", type=Path, required=True)
    whole = commands.add_parser("recipe", help="collect, train, collect with the student, train: within --hours")
    whole.add_argument("--hours", type=float, default=2.0)
    whole.add_argument("--smoke", action="store_true", help="a minute's run by counts, to check an install")
    whole.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    whole.add_argument("--teacher", default=TEACHER)
    whole.add_argument("--output", type=Path, required=True)
    plotting = commands.add_parser("curve", help="a recipe's checkpoints against the heuristic: curve.json, curve.svg")
    plotting.add_argument("folder", type=Path)
    plotting.add_argument("--rounds", type=int, default=200)
    plotting.add_argument("--opponent", default="heuristic")
    evaluating = commands.add_parser("evaluate", help="the policy against the heuristic and random bots, in duplicate")
    evaluating.add_argument("weights", type=Path)
    evaluating.add_argument("--rounds", type=int, default=200)
    evaluating.add_argument("--opponents", default="heuristic,random")
    return parser


def main(argv: list[str] | None = None) -> None:
    arguments = _parser().parse_args(argv)
    if arguments.command == "collect":
        rounds = collect(
            arguments.output,
            arguments.minutes * 60,
            variant=arguments.variant,
            workers=arguments.workers,
            seed=arguments.seed,
            teacher=arguments.teacher,
            student=arguments.student,
            student_share=arguments.student_share,
        )
        print(f"{rounds} rounds labelled into {arguments.output}")  # noqa: T201
    elif arguments.command == "recipe":
        recipe(arguments.output, hours=arguments.hours, smoke=arguments.smoke, workers=arguments.workers,
               seed=arguments.seed, teacher=arguments.teacher, variant=arguments.variant)  # fmt: skip
        print(f"the policy: {arguments.output / 'policy.npz'}")  # noqa: T201
        print(f"its learning curve: examples/imitation.py curve {arguments.output}")  # noqa: T201
    elif arguments.command == "curve":
        curve(arguments.folder, rounds=arguments.rounds, opponent=arguments.opponent, seed=arguments.seed)
    elif arguments.command == "train":
        data = Decisions.load(arguments.data, arguments.variant)
        print(f"{len(data)} decisions, {len(data.legal)} legal actions")  # noqa: T201
        start = MlpPolicy.load(arguments.start) if arguments.start else None
        policy = train(data, arguments.minutes * 60, seed=arguments.seed, start=start)
        policy.save(arguments.output)
        print(f"weights written to {arguments.output}")  # noqa: T201
    else:
        policy = MlpPolicy.load(arguments.weights)
        for opponent in arguments.opponents.split(","):
            figures = duplicate(policy, opponent, arguments.rounds, variant=policy.variant.name, seed=arguments.seed)
            print(_report(f"against {opponent}", figures), flush=True)  # noqa: T201
            print(json.dumps({"opponent": opponent, **figures}))  # noqa: T201


if __name__ == "__main__":
    main()
