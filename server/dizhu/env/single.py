"""``DouDizhuEnv``: one seat of a table as a Gymnasium environment; the other seats are opponents.

An opponent is one of:

* a policy, any callable ``policy(observation, action_mask) -> action`` (numpy arrays in, an
  action index out): the same signature an environment-trained bot has at a real referee
  (``dizhu.env.bot.PolicyBot``); its observation is encoded when it is to act;
* ``"random"`` or ``"heuristic"``: the bundled bots (``dizhu.client.bots``) as they play at a
  referee, or any ``dizhu.client.Bot`` as a ``dizhu.env.opponents.BotOpponent``;
* by default (``opponents=None``), uniformly random legal actions drawn from the environment's
  own generator, without any observation encoded for them.

``reset(seed=...)`` fixes the whole episode (the bundled random bot is seeded from it too).
Only the learner's observations are encoded: one per ``reset`` and ``step``.

An illegal action (one the mask forbids) is replaced, deterministically, by the pass when
the seat may pass, else by its lowest legal action; ``info["illegal_action"]`` is then
True (every info holds that flag, ``reset``'s too). The same rule holds for an opponent's
illegal answer. ``action_masks()`` is the learner's mask as booleans (sb3-contrib's
``MaskablePPO`` reads it), ``legal_actions()`` its legal actions, ascending. Once the round is
over ``action_masks()`` offers the pass alone: under Gymnasium's next-step autoreset
(``gymnasium.make_vec``'s default) the step after a round's end only resets the environment
and ignores its action, which a policy still samples from the mask.

``render_mode``: ``"ansi"`` (``render()`` returns the table as text) or ``"human"`` (it prints it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, SupportsFloat

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from dizhu.env.actions import PASS
from dizhu.env.dou_dizhu_v0 import observation_space, round_seed_option
from dizhu.env.encodings import encoding as make_encoding
from dizhu.env.engine import rules
from dizhu.env.info import AUCTION
from dizhu.env.native import make_game
from dizhu.env.opponents import BOT_KINDS, BotOpponent, bundled_bot
from dizhu.env.render import RENDER_MODES, check_render_mode, rendered
from dizhu.rules import VARIANTS, HouseRules

__all__ = ["DouDizhuEnv", "Opponent", "Policy", "random_policy"]

#: ``policy(observation, action_mask) -> action``.
Policy = Callable[[npt.NDArray[np.int8], npt.NDArray[np.int8]], int]


def random_policy(rng: np.random.Generator) -> Policy:
    """A policy choosing uniformly among the legal actions, from ``rng``."""

    def choose(observation: npt.NDArray[np.int8], mask: npt.NDArray[np.int8]) -> int:
        legal = np.flatnonzero(mask)
        return int(legal[rng.integers(len(legal))])

    return choose


#: An opponent: a policy, a bundled bot's name, or a ``BotOpponent``.
Opponent = Policy | str | BotOpponent


class DouDizhuEnv(gymnasium.Env[dict[str, npt.NDArray[np.int8]], int]):
    """See the module docstring; the arguments are ``dou_dizhu_v0.raw_env``'s, plus ``seat``
    (the learner's seat) and ``opponents`` (one per other seat, in seat order)."""

    metadata: dict[str, Any] = {"render_modes": list(RENDER_MODES), "render_fps": 4}  # noqa: RUF012 -- Gymnasium declares it so

    def __init__(
        self,
        variant: str = "3p",
        seat: int = 0,
        opponents: Sequence[Opponent] | None = None,
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
        for opponent in opponents or ():
            if isinstance(opponent, str) and opponent not in BOT_KINDS:
                raise ValueError(f"unknown bot {opponent!r}: expected one of {', '.join(sorted(BOT_KINDS))}")
        check_render_mode(render_mode)
        self.render_mode = render_mode
        self.seat = seat
        self.game = make_game(self.variant, rules(engine), house_rules=HouseRules(spring=spring), reward=reward)
        self.coder = make_encoding(encoding, self.variant)
        self.observation_space = observation_space(self.coder, self.game.table.size)  # type: ignore[assignment]
        self.action_space = spaces.Discrete(self.game.table.size)  # type: ignore[assignment]
        self._given = list(opponents) if opponents is not None else None
        self._opponents: dict[int, Callable[[], int]] = {}
        #: This deal's auction so far, (seat, amount) in order: what a bot opponent is shown.
        self._bids: list[tuple[int, int]] = []

    def _observe(self, seat: int) -> dict[str, npt.NDArray[np.int8]]:
        game = self.game
        mask = np.zeros(game.table.size, dtype=np.int8)
        if not game.over and seat == game.turn:
            game.table.mask(game.legal, mask)
        return {"observation": game.observe(self.coder, seat), "action_mask": mask}

    def _chooser(self, opponent: Opponent | None, seat: int) -> Callable[[], int]:
        """How the opponent at ``seat`` chooses, each time it is to act."""
        game = self.game
        if opponent is None:
            rng = self.np_random

            def uniformly() -> int:
                legal = game.legal
                return legal[int(rng.integers(len(legal)))]

            return uniformly
        if isinstance(opponent, str):
            opponent = bundled_bot(opponent, int(self.np_random.integers(2**63)))
        if isinstance(opponent, BotOpponent):
            bot = opponent
            return lambda: bot.act(game, self._bids)
        policy = opponent

        def by_policy() -> int:
            seen = self._observe(seat)
            return int(policy(seen["observation"], seen["action_mask"]))

        return by_policy

    def _play(self, index: int) -> bool:
        """Play ``index`` for the seat to act, keeping the deal's auction for bot opponents."""
        game = self.game
        bidding = game.seen.phase[0] == AUCTION
        seat, redeals = game.turn, game.redeals
        played = index if index in game.legal else game.fallback()
        legal = game.step(index)
        if bidding:
            if game.redeals != redeals:
                self._bids = []
            else:
                self._bids.append((seat, played))
        return legal

    def _others_play(self) -> None:
        game = self.game
        while not game.over and game.turn != self.seat:
            self._play(self._opponents[game.turn]())

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, npt.NDArray[np.int8]], dict[str, Any]]:
        super().reset(seed=seed)
        others = [other for other in range(self.variant.players) if other != self.seat]
        given: Sequence[Opponent | None] = self._given or [None] * len(others)
        self._opponents = {other: self._chooser(opponent, other) for other, opponent in zip(others, given, strict=True)}
        self.game.start(*round_seed_option(options, self.np_random, self.variant.players))
        self._bids = []
        self._others_play()
        return self._observe(self.seat), {"illegal_action": False}

    def step(self, action: int) -> tuple[dict[str, npt.NDArray[np.int8]], SupportsFloat, bool, bool, dict[str, Any]]:
        game = self.game
        if game.over:
            raise RuntimeError("the round is over: call reset()")
        legal = self._play(int(action))
        self._others_play()
        reward = game.rewards()[self.seat]
        return self._observe(self.seat), reward, game.over, False, {"illegal_action": not legal}

    @property
    def auction(self) -> tuple[tuple[int, int], ...]:
        """This deal's auction so far, (seat, amount) in order: what a ``BotOpponent`` is shown."""
        return tuple(self._bids)

    def legal_actions(self) -> list[int]:
        """The learner's legal actions, ascending (empty once the round is over)."""
        game = self.game
        return [] if game.over or game.turn != self.seat else game.legal

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """The learner's action mask as booleans: what sb3-contrib's ``MaskablePPO`` asks for; the
        pass alone once the round is over (the next step resets, whatever the action)."""
        mask = np.zeros(self.game.table.size, dtype=np.bool_)
        mask[[PASS] if self.game.over else self.legal_actions()] = True
        return mask

    def render(self) -> str | None:
        return rendered(self.game, self.render_mode)
