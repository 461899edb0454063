"""One table's round as the environments play it: deal, auction, play, settlement.

An episode is one round of the referee's: the deal from a round seed and a dealer (the
same function the referee deals with, docs/deal.md), redealt by the same dealer from
``derive_seed(seed, "redeal", k)`` when everybody passes (as a referee table with preset
seeds does), up to the redeal cap; a round thrown in at the cap is void and pays nothing.
Every rules call goes through the engine (``dizhu.env.engine``).
"""

from __future__ import annotations

from dizhu.env.actions import PASS, ActionTable, action_table
from dizhu.env.engine import Rules
from dizhu.env.info import SeatInfo, from_state
from dizhu.env.rewards import rewards
from dizhu.rules import VARIANTS, HouseRules, Phase, RoundState, Settlement, Variant

__all__ = ["Game"]


class Game:
    """A round in progress, with its legal actions; ``step(index)`` plays the seat to act."""

    def __init__(
        self, variant: Variant | str, engine: Rules, *, house_rules: HouseRules | None = None, reward: str = "win"
    ) -> None:
        self.variant = VARIANTS[variant] if isinstance(variant, str) else variant
        self.engine = engine
        self.house_rules = house_rules or HouseRules()
        self.reward = reward
        self.table: ActionTable = action_table(self.variant)
        self.redeal_cap = self.variant.default_redeal_cap
        self.state: RoundState
        self.seed = b""
        self.redeals = 0
        self.legal: list[int] = []
        self.settlement: Settlement | None = None

    def start(self, seed: bytes, dealer: int) -> None:
        """Deal the round of ``seed`` with ``dealer``, as a referee table with that preset seed."""
        self.seed = seed
        self.redeals = 0
        self.settlement = None
        self._deal(seed, dealer)

    def _deal(self, seed: bytes, dealer: int) -> None:
        engine = self.engine
        self.state = engine.start_round(engine.deal(seed, self.variant, dealer), self.house_rules)
        self.legal = self.table.legal_indices(self.state, engine)

    @property
    def over(self) -> bool:
        return self.settlement is not None

    @property
    def turn(self) -> int:
        return self.state.turn

    def fallback(self) -> int:
        """The action an illegal one is replaced by: the pass when allowed, else the lowest legal action."""
        return self.legal[0]

    def step(self, index: int) -> bool:
        """Play action ``index`` for the seat to act (an illegal one is replaced by ``fallback()``).

        Returns whether the action was legal.
        """
        legal = index in self.legal
        if not legal:
            index = self.fallback()
        engine = self.engine
        state = engine.apply(self.state, self.table.to_action(self.state, index, engine)).state
        if state.phase is Phase.THROWN_IN:
            if self.redeals < self.redeal_cap:
                self.redeals += 1
                self._deal(engine.derive_seed(self.seed, "redeal", self.redeals), state.deal.dealer)
                return legal
            self.state = state
            self.legal = []
            self.settlement = engine.settle(state)
            return legal
        self.state = state
        if state.phase is Phase.FINISHED:
            self.legal = []
            self.settlement = engine.settle(state)
        else:
            self.legal = self.table.legal_indices(state, engine)
        return legal

    def rewards(self) -> tuple[float, ...]:
        """Each seat's reward: zero until the round is settled."""
        players = self.variant.players
        if self.settlement is None:
            return (0.0,) * players
        return rewards(self.settlement, players, self.reward)

    def info(self, seat: int) -> SeatInfo:
        return from_state(self.state, seat)

    def can_pass(self) -> bool:
        return bool(self.legal) and self.legal[0] == PASS
