"""A learned policy: a small network scoring each legal action from the compact observation.

``MlpPolicy`` is ``policy(observation, action_mask) -> action`` (the environments' and
``PolicyBot``'s signature) over the ``compact`` encoding: for each legal action it builds
features of the state and of the action (the cards it plays, what it leaves in hand and how
that rest is shaped, its kind, the bid), scores them with a two-layer perceptron and plays the
best. Its weights are a ``.npz`` file (``save`` / ``load``); ``examples/imitation.py`` trains
them, by imitating the ``expert`` bot in ``dizhu.env`` (docs/env.md, "A policy that beats the
heuristic"). numpy only: it needs no deep-learning library to train or to play.

``LearnedBot`` is the shipped weights as the bundled bot ``learned``: a ``PolicyBot``, so it
plays at a referee, in tournaments, at the web table and as an environment opponent unchanged.
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from dizhu.env.actions import FIRST_PLAY, action_table
from dizhu.env.bot import PolicyBot
from dizhu.env.encodings import encoding
from dizhu.rules import VARIANTS, CombinationKind, Variant
from dizhu.v1 import cards_pb2, table_pb2

__all__ = ["FEATURES_VERSION", "LearnedBot", "MlpPolicy", "action_features", "shipped_weights", "state_features"]

#: Bumped whenever the features change: weights record it, and older ones are refused.
FEATURES_VERSION: Final = 1
_KINDS: Final = len(CombinationKind) + 1  # kinds are numbered from 1
_RANKS: Final = 15
_LOW: Final = 8  # ranks 3..10: the cards a hand wants rid of first
Float = npt.NDArray[np.float32]
#: The arrays of a policy's weights.
_WEIGHTS: Final = ("state", "action", "b1", "w2", "b2", "w3", "b3")


@functools.cache
def _layout(variant: Variant) -> tuple[dict[str, slice], Float]:
    """The compact encoding's field slices, and each entry's scale (counts by deck size, sizes by hand size)."""
    coder = encoding("compact", variant)
    fields = {field.name: field.slice for field in coder.layout.fields}
    scale = np.ones(coder.size, dtype=np.float32)
    decks = 4.0 * variant.decks
    for name in ("hand", "unseen", "played", "to_beat", "kitty"):
        scale[fields[name]] = 1 / decks
    scale[fields["cards_left"]] = 1 / variant.landlord_hand_size
    scale[fields["doublings"]] = 1 / 4
    return fields, scale


@functools.cache
def _action_columns(variant: Variant) -> tuple[npt.NDArray[np.int16], Float, npt.NDArray[np.intp]]:
    """Per action of the variant's table: its rank counts, its fixed features (kind, main rank,
    size, bomb, bid), and its main rank (15, past the jokers, for the pass and the bids)."""
    table = action_table(variant)
    counts = table.counts.astype(np.int16)
    fixed = np.zeros((table.size, _KINDS + _RANKS + 2 + FIRST_PLAY), dtype=np.float32)
    for index in range(FIRST_PLAY, table.size):
        play = table.combination(index)
        fixed[index, int(play.kind)] = 1
        fixed[index, _KINDS + int(play.main_rank)] = 1
        fixed[index, _KINDS + _RANKS] = play.size / variant.landlord_hand_size
        fixed[index, _KINDS + _RANKS + 1] = play.kind in (CombinationKind.BOMB, CombinationKind.ROCKET)
    fixed[np.arange(FIRST_PLAY), _KINDS + _RANKS + 2 + np.arange(FIRST_PLAY)] = 1  # pass / bid 1..3
    main = np.argmax(fixed[:, _KINDS : _KINDS + _RANKS], axis=1)
    main[:FIRST_PLAY] = _RANKS
    return counts, fixed, main


def state_features(variant: Variant, observations: npt.NDArray[np.int8]) -> Float:
    """One row per observation (``(N, compact size)`` int8): the scaled observation."""
    _, scale = _layout(variant)
    return observations.astype(np.float32) * scale


def action_features(
    variant: Variant, observations: npt.NDArray[np.int8], rows: npt.NDArray[np.intp], legal: npt.NDArray[np.intp]
) -> Float:
    """One row per (observation ``rows[i]``, action ``legal[i]``): what the action plays and leaves."""
    fields, _ = _layout(variant)
    counts, fixed, main = _action_columns(variant)
    decks = 4.0 * variant.decks
    in_play = observations[rows, fields["phase"].start + 1].astype(np.float32)  # phase: [auction, play]
    hand = observations[rows, fields["hand"]].astype(np.int16)
    # What the others may still hold above the action's main rank: could they answer it?
    unseen = observations[:, fields["unseen"]].astype(np.int16)
    zero = np.zeros((len(observations), 2), dtype=np.int16)
    ranks_above = np.concatenate([np.cumsum((unseen > 0)[:, ::-1], axis=1)[:, ::-1], zero], axis=1)
    pairs_above = np.concatenate([np.cumsum((unseen > 1)[:, ::-1], axis=1)[:, ::-1], zero], axis=1)
    above = main[legal] + 1
    played = counts[legal]
    after = hand - played
    left = after.sum(axis=1)
    held = hand > 0
    shape = np.stack(
        [
            left == 0,  # goes out
            left / variant.landlord_hand_size,
            (after == 1).sum(axis=1) / 10,  # singles left
            (after[:, :_LOW] == 1).sum(axis=1) / 10,  # low singles left
            (after == 2).sum(axis=1) / 10,
            (after == 3).sum(axis=1) / 10,
            (after >= 4).sum(axis=1) / 4,  # bombs kept
            (held & (after > 0) & (played > 0)).sum(axis=1) / 4,  # sets broken
            ranks_above[rows, above] / _RANKS,
            pairs_above[rows, above] / _RANKS,
            in_play,
        ],
        axis=1,
    ).astype(np.float32)
    return np.concatenate([played / decks, after / decks, fixed[legal], shape], axis=1, dtype=np.float32)


def _relu(values: Float) -> Float:
    return np.maximum(values, 0, out=values)


class MlpPolicy:
    """Scores legal actions with ``weights`` (a dict of arrays: ``state``, ``action``, ``b1``, ``w2``,
    ``b2``, ``w3``, ``b3``) and plays the best one (see the module docstring)."""

    def __init__(self, weights: dict[str, npt.NDArray[np.float32]], variant: str | Variant = "3p") -> None:
        self.variant = VARIANTS[variant] if isinstance(variant, str) else variant
        self.weights = weights

    @classmethod
    def load(cls, path: Path | str) -> MlpPolicy:
        """The policy whose weights ``save`` wrote to ``path``."""
        with np.load(path) as stored:
            version, variant = int(stored["features_version"]), str(stored["variant"])
            if version != FEATURES_VERSION:
                raise ValueError(f"{path}: weights for features version {version}, this is {FEATURES_VERSION}")
            weights = {name: stored[name].astype(np.float32) for name in _WEIGHTS}
        return cls(weights, variant)

    def save(self, path: Path | str) -> None:
        arrays: dict[str, Any] = {"features_version": np.int64(FEATURES_VERSION), "variant": np.str_(self.variant.name)}
        arrays.update(self.weights)
        np.savez_compressed(path, **arrays)

    def scores(
        self, observations: npt.NDArray[np.int8], rows: npt.NDArray[np.intp], legal: npt.NDArray[np.intp]
    ) -> Float:
        """The score of each (observation ``rows[i]``, action ``legal[i]``)."""
        weights = self.weights
        per_state = state_features(self.variant, observations) @ weights["state"]
        hidden = _relu(
            per_state[rows]
            + action_features(self.variant, observations, rows, legal) @ weights["action"]
            + weights["b1"]
        )
        second = _relu(hidden @ weights["w2"] + weights["b2"])
        return second @ weights["w3"] + weights["b3"]

    def __call__(self, observation: npt.NDArray[np.int8], mask: npt.NDArray[np.int8]) -> int:
        legal = np.flatnonzero(mask)
        if len(legal) == 1:
            return int(legal[0])
        scores = self.scores(observation[None, :], np.zeros(len(legal), dtype=np.intp), legal)
        return int(legal[int(np.argmax(scores))])


def shipped_weights(variant: str) -> Path:
    """Where the package keeps the ``learned`` bot's weights for ``variant``."""
    return Path(str(resources.files("dizhu.env") / "data" / f"learned-{variant}.npz"))


class LearnedBot(PolicyBot):
    """The bundled ``learned`` bot: ``MlpPolicy`` with the shipped weights of the table's variant."""

    name = "learned"

    def __init__(self, seed: int | str | bytes | None = None) -> None:
        del seed  # it plays the best-scored action: nothing is drawn at random
        super().__init__(_policy_for("3p"), encoding="compact")

    def _decide(self, view: table_pb2.TableView, legal: list[int]) -> int:
        self.policy = _policy_for("4p" if view.settings.variant == cards_pb2.VARIANT_FOUR_PLAYER else "3p")
        return super()._decide(view, legal)


@functools.cache
def _policy_for(variant: str) -> MlpPolicy:
    """The shipped policy of ``variant``, loaded once per process."""
    return MlpPolicy.load(shipped_weights(variant))
