"""``DouDizhuEnv``: one seat of a table as a Gymnasium environment; the other seats are policies.

A policy is any callable ``policy(observation, action_mask) -> action`` (numpy arrays in, an
action index out): the same signature an environment-trained bot has at a real referee
(``dizhu.env.bot.PolicyBot``). By default the other seats play uniformly random legal
actions drawn from the environment's own generator (the bundled random bot's behaviour),
so ``reset(seed=...)`` fixes the whole episode.

An illegal action (one the mask forbids) is replaced, deterministically, by the pass when
the seat may pass, else by its lowest legal action; ``info["illegal_action"]`` is then
True. The same rule holds for a policy's illegal answer. ``info["legal_actions"]`` lists the
learner's legal actions, ascending (the ones of the mask).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, SupportsFloat

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from dizhu.env.dou_dizhu_v0 import observation_space, round_seed_option
from dizhu.env.encodings import encoding as make_encoding
from dizhu.env.engine import rules
from dizhu.env.native import make_game
from dizhu.env.render import render_text
from dizhu.rules import VARIANTS, HouseRules

__all__ = ["DouDizhuEnv", "Policy", "random_policy"]

#: ``policy(observation, action_mask) -> action``.
Policy = Callable[[npt.NDArray[np.int8], npt.NDArray[np.int8]], int]


def random_policy(rng: np.random.Generator) -> Policy:
    """A policy choosing uniformly among the legal actions, from ``rng``."""

    def choose(observation: npt.NDArray[np.int8], mask: npt.NDArray[np.int8]) -> int:
        legal = np.flatnonzero(mask)
        return int(legal[rng.integers(len(legal))])

    return choose


class DouDizhuEnv(gymnasium.Env[dict[str, npt.NDArray[np.int8]], int]):
    """See the module docstring; the arguments are ``dou_dizhu_v0.raw_env``'s, plus ``seat``
    (the learner's seat) and ``opponents`` (a policy per other seat, in seat order)."""

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 4}  # noqa: RUF012 -- Gymnasium declares it so

    def __init__(
        self,
        variant: str = "3p",
        seat: int = 0,
        opponents: Sequence[Policy] | None = None,
        encoding: str = "douzero",
        reward: str = "win",
        spring: bool = False,
        engine: str | None = None,
        render_mode: str | None = None,
    ) -> None:
        self.variant = VARIANTS[variant]
        if not 0 <= seat < self.variant.players:
            raise ValueError(f"{variant} has no seat {seat}")
        if opponents is not None and len(opponents) != self.variant.players - 1:
            raise ValueError(f"{variant} needs {self.variant.players - 1} opponents, not {len(opponents)}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode {render_mode!r}: only 'ansi' is offered")
        self.render_mode = render_mode
        self.seat = seat
        self.game = make_game(self.variant, rules(engine), house_rules=HouseRules(spring=spring), reward=reward)
        self.coder = make_encoding(encoding, self.variant)
        self.observation_space = observation_space(self.coder, self.game.table.size)  # type: ignore[assignment]
        self.action_space = spaces.Discrete(self.game.table.size)  # type: ignore[assignment]
        self._given = list(opponents) if opponents is not None else None
        self._opponents: dict[int, Policy] = {}

    def _observe(self, seat: int) -> dict[str, npt.NDArray[np.int8]]:
        game = self.game
        mask = np.zeros(game.table.size, dtype=np.int8)
        if not game.over and seat == game.turn:
            game.table.mask(game.legal, mask)
        return {"observation": game.observe(self.coder, seat), "action_mask": mask}

    def _others_play(self) -> None:
        game = self.game
        while not game.over and game.turn != self.seat:
            seen = self._observe(game.turn)
            game.step(self._opponents[game.turn](seen["observation"], seen["action_mask"]))

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, npt.NDArray[np.int8]], dict[str, Any]]:
        super().reset(seed=seed)
        others = [other for other in range(self.variant.players) if other != self.seat]
        policies = self._given or [random_policy(self.np_random) for _ in others]
        self._opponents = dict(zip(others, policies, strict=True))
        self.game.start(*round_seed_option(options, self.np_random, self.variant.players))
        self._others_play()
        return self._observe(self.seat), {"legal_actions": self.game.legal}

    def step(self, action: int) -> tuple[dict[str, npt.NDArray[np.int8]], SupportsFloat, bool, bool, dict[str, Any]]:
        game = self.game
        if game.over:
            raise RuntimeError("the round is over: call reset()")
        legal = game.step(int(action))
        self._others_play()
        reward = game.rewards()[self.seat]
        info = {"illegal_action": not legal, "legal_actions": [] if game.over else game.legal}
        return self._observe(self.seat), reward, game.over, False, info

    def render(self) -> str | None:
        return render_text(self.game) if self.render_mode == "ansi" else None
