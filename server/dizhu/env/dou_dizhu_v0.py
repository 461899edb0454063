"""``dou_dizhu_v0``: the PettingZoo environments of dizhu's rules, 3p and 4p, with the auction.

* ``env()``: the AEC environment with PettingZoo's order and bounds checks (done in place, at
  no measurable cost); ``raw_env``: the same without them;
* ``parallel_env()``: the parallel API. A turn-based game in parallel form: every live agent
  gives an action each step, and only the seat to act's is played (the others' are ignored;
  their masks are all zeros).

Agents ``seat_0`` .. ``seat_{N-1}``. An observation is ``{"observation": Box(int8),
"action_mask": Box(int8)}``; actions are ``Discrete(N)`` over the variant's published action
table (``dizhu.env.actions``); the mask is all zeros for a seat not to act. An episode is one
round; see ``dizhu.env.game`` for deals and redeals and ``dizhu.env.rewards`` for the reward
schemes. An illegal action is replaced by the pass when the seat may pass, else by its lowest
legal action, and ``infos[agent]["illegal_action"]`` says so (every agent's info holds that one
flag, so that collectors can stack infos). ``legal_actions()`` lists the legal actions of the
agent to act, ascending (the mask's ones). ``state()`` is the global state of the table, every
hand included (``dizhu.env.encodings.GlobalState``): for centralised critics, never a policy.

``max_cycles``: the round is truncated once the seat to act has had that many turns (AEC), or
after that many steps (parallel: each step is one seat's move); by default rounds always run to
their end. ``reset(seed=s)`` draws the round seed (32 bytes) and the dealer from ``s``;
``reset(options={"round_seed": bytes, "dealer": d})`` deals exactly what a referee table with
that preset seed and dealer deals (docs/deal.md). Bump the module's ``_vN`` whenever behaviour,
spaces or the action table change.
"""

from __future__ import annotations

import functools
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

from dizhu.env.encodings import Encoding, GlobalState, Layout, global_state
from dizhu.env.encodings import encoding as make_encoding
from dizhu.env.engine import rules
from dizhu.env.info import NONE
from dizhu.env.native import make_game
from dizhu.env.render import RENDER_MODES, check_render_mode, rendered
from dizhu.rules import SEED_SIZE, VARIANTS, HouseRules

__all__ = ["env", "parallel_env", "raw_env"]

Observation = dict[str, npt.NDArray[np.int8]]


def env(**kwargs: Any) -> AECEnv[str, Observation, int]:
    """The AEC environment with PettingZoo's order and bounds checks; ``raw_env``'s arguments."""
    return _Checked(raw_env(**kwargs))


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


def state_space(coder: GlobalState) -> spaces.Box:
    return spaces.Box(0, coder.high, (coder.size,), dtype=np.int8)


class raw_env(AECEnv[str, Observation, int]):  # type: ignore[misc]  # noqa: N801 -- PettingZoo's name
    """See the module docstring. Arguments: ``variant`` (``"3p"``/``"4p"``), ``encoding``
    (``"douzero"``/``"compact"``), ``reward`` (``"win"``/``"settlement"``/``"log"``), ``spring``
    (the house rule), ``engine`` (``"python"``/``"native"``, default ``DIZHU_ENGINE`` or the
    fastest), ``render_mode`` (``"ansi"``, ``"human"`` or None), ``max_cycles`` (None: no limit)."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": list(RENDER_MODES),
        "name": "dou_dizhu_v0",
        "is_parallelizable": False,
    }

    def __init__(
        self,
        variant: str = "3p",
        encoding: str = "douzero",
        reward: str = "win",
        spring: bool = False,
        engine: str | None = None,
        render_mode: str | None = None,
        max_cycles: int | None = None,
    ) -> None:
        super().__init__()
        check_render_mode(render_mode)
        self.render_mode = render_mode
        self.max_cycles = max_cycles
        self.variant = VARIANTS[variant]
        self.game = make_game(self.variant, rules(engine), house_rules=HouseRules(spring=spring), reward=reward)
        self.coder = make_encoding(encoding, self.variant)
        self.state_coder = global_state(self.variant)
        #: The global state's named slices (``state_layout.view(state, "hands")``).
        self.state_layout: Layout = self.state_coder.layout
        self.state_space = state_space(self.state_coder)
        self.possible_agents = [f"seat_{seat}" for seat in range(self.variant.players)]
        self.agents = list(self.possible_agents)
        space = observation_space(self.coder, self.game.table.size)
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = {agent: spaces.Discrete(self.game.table.size) for agent in self.possible_agents}
        self.np_random, _ = seeding.np_random(None)
        self.agent_selection = self.possible_agents[0]
        self._turns = [0] * self.variant.players

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
        self.infos: dict[str, dict[str, Any]] = {agent: {"illegal_action": False} for agent in self.agents}
        self.agent_selection = self.possible_agents[self.game.turn]
        self._turns = [0] * self.variant.players

    def observe(self, agent: str) -> Observation:
        seat = self.possible_agents.index(agent)
        game = self.game
        mask = np.zeros(game.table.size, dtype=np.int8)
        if not game.over and seat == game.turn and not self.truncations[agent]:
            game.table.mask(game.legal, mask)
        return {"observation": game.observe(self.coder, seat), "action_mask": mask}

    def legal_actions(self) -> list[int]:
        """The legal actions of the agent to act, ascending (empty once the round is over)."""
        return [] if self.truncations[self.agent_selection] else self.game.legal

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """The mask of the agent to act, as booleans."""
        mask = np.zeros(self.game.table.size, dtype=np.bool_)
        mask[self.legal_actions()] = True
        return mask

    def state(self) -> npt.NDArray[np.int8]:
        """The global state: every hand and what is public (full information; docs/env.md)."""
        game = self.game
        seen = game.seen
        seen.seat[0] = NONE if game.over or self.truncations[self.agent_selection] else game.turn
        encoded: npt.NDArray[np.int8] = self.state_coder.encode(seen)[0]
        return encoded

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} is to act: its action cannot be None")
        game = self.game
        seat = game.turn
        legal = game.step(int(action))
        self._turns[seat] += 1
        self._cumulative_rewards[agent] = 0.0
        self.infos = {name: {"illegal_action": False} for name in self.agents}
        self.infos[agent]["illegal_action"] = not legal
        if game.over:
            self.rewards = dict(zip(self.agents, game.rewards(), strict=True))
            self.terminations = dict.fromkeys(self.agents, True)
        else:
            self.rewards = dict.fromkeys(self.agents, 0.0)
            if self.max_cycles is not None and self._turns[game.turn] >= self.max_cycles:
                self.truncations = dict.fromkeys(self.agents, True)
        self.agent_selection = self.possible_agents[game.turn]
        self._accumulate_rewards()

    def render(self) -> str | None:
        return rendered(self.game, self.render_mode)

    def close(self) -> None:
        pass


class _Checked(wrappers.OrderEnforcingWrapper[str, Observation, int]):  # type: ignore[misc]
    """PettingZoo's ``OrderEnforcingWrapper`` and ``AssertOutOfBoundsWrapper`` over a ``raw_env``,
    with the same checks and errors, but reading the attributes a loop reads on every step
    (``agent_selection``, ``rewards``, ...) straight from the environment rather than through
    two wrappers' ``__getattr__`` (which cost the wrapped environment a third of its speed)."""

    env: raw_env

    def _checked(name: str) -> property:  # noqa: N805 -- a property factory, not a method
        def read(self: _Checked) -> Any:
            if not self._has_reset:
                raise AttributeError(f"{name} cannot be accessed before reset")
            return getattr(self.env, name)

        return property(read)

    agent_selection = _checked("agent_selection")
    agents = _checked("agents")
    rewards = _checked("rewards")
    terminations = _checked("terminations")
    truncations = _checked("truncations")
    infos = _checked("infos")
    num_agents = _checked("num_agents")
    _cumulative_rewards = _checked("_cumulative_rewards")
    del _checked

    @property
    def possible_agents(self) -> list[str]:
        return self.env.possible_agents

    def step(self, action: int | None) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        raw = self.env
        if not raw.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = raw.agent_selection
        if action is None:
            in_bounds = raw.terminations[agent] or raw.truncations[agent]
        elif isinstance(action, int | np.integer):  # Discrete.contains, without its conversions
            in_bounds = 0 <= action < raw.game.table.size
        else:
            in_bounds = raw.action_spaces[agent].contains(action)
        if not in_bounds:
            raise AssertionError("action is not in action space")
        self._has_updated = True
        raw.step(action)

    def last(self, observe: bool = True) -> tuple[Observation | None, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        raw = self.env
        agent = raw.agent_selection
        return (
            raw.observe(agent) if observe else None,
            raw._cumulative_rewards[agent],
            raw.terminations[agent],
            raw.truncations[agent],
            raw.infos[agent],
        )

    def __str__(self) -> str:
        return str(self.env)


class parallel_env(ParallelEnv[str, Observation, int]):  # type: ignore[misc]  # noqa: N801 -- PettingZoo's name
    """The parallel API over a ``raw_env`` (same arguments): see the module docstring."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": list(RENDER_MODES), "name": "dou_dizhu_v0"}

    def __init__(self, **kwargs: Any) -> None:
        self.max_cycles: int | None = kwargs.pop("max_cycles", None)
        self.aec = raw_env(**kwargs)
        self.render_mode = self.aec.render_mode
        self.possible_agents = list(self.aec.possible_agents)
        self.agents: list[str] = []
        self.state_space = self.aec.state_space
        self.state_layout = self.aec.state_layout
        self._steps = 0

    @functools.cache  # noqa: B019 -- one space per agent, the same object every call (PettingZoo asks it)
    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.aec.observation_space(agent)

    @functools.cache  # noqa: B019 -- as above
    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.aec.action_space(agent)

    def _observations(self) -> dict[str, Observation]:
        return {agent: self.aec.observe(agent) for agent in self.possible_agents}

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Observation], dict[str, dict[str, Any]]]:
        self.aec.reset(seed=seed, options=options)
        self.agents = list(self.possible_agents)
        self._steps = 0
        return self._observations(), {agent: dict(info) for agent, info in self.aec.infos.items()}

    def step(
        self, actions: dict[str, int]
    ) -> tuple[
        dict[str, Observation],
        dict[str, float],
        dict[str, bool],
        dict[str, bool],
        dict[str, dict[str, Any]],
    ]:
        aec = self.aec
        aec.step(actions[aec.agent_selection])
        self._steps += 1
        over = aec.game.over
        truncated = not over and self.max_cycles is not None and self._steps >= self.max_cycles
        observations = self._observations()
        agents = self.agents
        rewards = {agent: aec.rewards[agent] for agent in agents}
        terminations = dict.fromkeys(agents, over)
        truncations = dict.fromkeys(agents, truncated)
        infos = {agent: dict(aec.infos[agent]) for agent in agents}
        if over or truncated:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def state(self) -> npt.NDArray[np.int8]:
        return self.aec.state()

    def render(self) -> str | None:
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()
