"""``dou_dizhu_v0``: the PettingZoo AEC environment of dizhu's rules, 3p and 4p, with the auction.

Agents ``seat_0`` .. ``seat_{N-1}``; each acts in turn (a turn-based game: an AEC
environment, not parallelisable). An observation is ``{"observation": Box(int8),
"action_mask": Box(int8)}``; actions are ``Discrete(N)`` over the variant's published
action table (``dizhu.env.actions``); the mask is all zeros for a seat not to act. An
episode is one round; see ``dizhu.env.game`` for deals and redeals and ``dizhu.env.rewards``
for the reward schemes. An illegal action is replaced by the pass when the seat may pass,
else by its lowest legal action, and ``infos[agent]["illegal_action"]`` says so. The agent to
act finds its legal actions, ascending, in ``infos[agent]["legal_actions"]`` (the mask's ones).

``reset(seed=s)`` draws the round seed (32 bytes) and the dealer from ``s``;
``reset(options={"round_seed": bytes, "dealer": d})`` deals exactly what a referee table
with that preset seed and dealer deals (docs/deal.md). Bump the module's ``_vN`` whenever
behaviour, spaces or the action table change.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from dizhu.env.encodings import Encoding
from dizhu.env.encodings import encoding as make_encoding
from dizhu.env.engine import rules
from dizhu.env.native import make_game
from dizhu.env.render import render_text
from dizhu.rules import SEED_SIZE, VARIANTS, HouseRules

__all__ = ["env", "raw_env"]


def env(**kwargs: Any) -> AECEnv[str, dict[str, np.ndarray], int]:
    """The environment with PettingZoo's order and bounds checks; ``raw_env``'s arguments."""
    wrapped: AECEnv[str, dict[str, np.ndarray], int] = raw_env(**kwargs)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)


def round_seed_option(
    options: dict[str, Any] | None, np_random: np.random.Generator, players: int
) -> tuple[bytes, int]:
    """The round seed and dealer of a ``reset``: those its options preset, else drawn from ``np_random``."""
    options = options or {}
    seed = options.get("round_seed")
    if isinstance(seed, str):
        seed = bytes.fromhex(seed)
    if seed is None:
        seed = np_random.bytes(SEED_SIZE)
    if len(seed) != SEED_SIZE:
        raise ValueError(f"a round seed has {SEED_SIZE} bytes, not {len(seed)}")
    dealer = options.get("dealer")
    return seed, int(np_random.integers(players)) if dealer is None else int(dealer)


def observation_space(coder: Encoding, actions: int) -> spaces.Dict:
    """The observation space of one seat: the encoding, and the action mask."""
    return spaces.Dict(
        {
            "observation": spaces.Box(0, coder.high, (coder.size,), dtype=np.int8),
            "action_mask": spaces.Box(0, 1, (actions,), dtype=np.int8),
        }
    )


class raw_env(AECEnv[str, dict[str, np.ndarray], int]):  # type: ignore[misc]  # noqa: N801 -- PettingZoo's name
    """See the module docstring. Arguments: ``variant`` (``"3p"``/``"4p"``), ``encoding``
    (``"douzero"``/``"compact"``), ``reward`` (``"win"``/``"settlement"``/``"log"``), ``spring``
    (the house rule), ``engine`` (``"python"``/``"native"``, default ``DIZHU_ENGINE`` or the
    fastest), ``render_mode`` (``"ansi"`` or None)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "name": "dou_dizhu_v0", "is_parallelizable": False}

    def __init__(
        self,
        variant: str = "3p",
        encoding: str = "douzero",
        reward: str = "win",
        spring: bool = False,
        engine: str | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode {render_mode!r}: only 'ansi' is offered")
        self.render_mode = render_mode
        self.variant = VARIANTS[variant]
        self.game = make_game(self.variant, rules(engine), house_rules=HouseRules(spring=spring), reward=reward)
        self.coder = make_encoding(encoding, self.variant)
        self.possible_agents = [f"seat_{seat}" for seat in range(self.variant.players)]
        self.agents = list(self.possible_agents)
        space = observation_space(self.coder, self.game.table.size)
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = {agent: spaces.Discrete(self.game.table.size) for agent in self.possible_agents}
        self.np_random, _ = seeding.np_random(None)
        self.agent_selection = self.possible_agents[0]

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        self.game.start(*round_seed_option(options, self.np_random, self.variant.players))
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self.agent_selection = self.possible_agents[self.game.turn]
        self.infos[self.agent_selection]["legal_actions"] = self.game.legal

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self.possible_agents.index(agent)
        game = self.game
        mask = np.zeros(game.table.size, dtype=np.int8)
        if not game.over and seat == game.turn:
            game.table.mask(game.legal, mask)
        return {"observation": game.observe(self.coder, seat), "action_mask": mask}

    def step(self, action: int) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        legal = game.step(int(action))
        self._cumulative_rewards[agent] = 0.0
        self.infos = {name: {} for name in self.agents}
        self.infos[agent]["illegal_action"] = not legal
        if game.over:
            self.rewards = dict(zip(self.agents, game.rewards(), strict=True))
            self.terminations = dict.fromkeys(self.agents, True)
        else:
            self.rewards = dict.fromkeys(self.agents, 0.0)
        self.agent_selection = self.possible_agents[game.turn]
        if not game.over:
            self.infos[self.agent_selection]["legal_actions"] = game.legal
        self._accumulate_rewards()

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        return render_text(self.game)

    def close(self) -> None:
        pass
