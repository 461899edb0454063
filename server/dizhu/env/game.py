"""One table's round as the environments play it: deal, auction, play, settlement.

An episode is one round of the referee's: the deal from a round seed and a dealer (the
same function the referee deals with, docs/deal.md), redealt by the same dealer from
``derive_seed(seed, "redeal", k)`` when everybody passes (as a referee table with preset
seeds does), up to the redeal cap; a round thrown in at the cap is void and pays nothing.
Every rules call goes through the engine (``dizhu.env.engine``).

The game keeps what the seats see (``seen``, one row of a ``Seen``: every hand, and what is
public) up to date move by move, so that an observation costs no pass over the history;
``tests/env`` check it against ``from_state``, which reads the rules core's view.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from dizhu.env.actions import PASS, ActionTable, action_table
from dizhu.env.encodings import Encoding
from dizhu.env.engine import Rules
from dizhu.env.info import AUCTION, NONE, OVER, PLAY, Seen, rank_counts
from dizhu.env.rewards import rewards
from dizhu.rules import VARIANTS, Bid, HouseRules, Phase, RoundState, Settlement, Variant

__all__ = ["Game"]


class Game:
    """A round in progress, with its legal actions; ``step(index)`` plays the seat to act.

    ``seen``: the row this game keeps up to date (a fresh one by default; a vector
    environment passes a row of its batch).
    """

    def __init__(
        self,
        variant: Variant | str,
        engine: Rules,
        *,
        house_rules: HouseRules | None = None,
        reward: str = "win",
        seen: Seen | None = None,
    ) -> None:
        self.variant = VARIANTS[variant] if isinstance(variant, str) else variant
        self.engine = engine
        self.house_rules = house_rules or HouseRules()
        self.reward = reward
        self.table: ActionTable = action_table(self.variant)
        self.redeal_cap = self.variant.default_redeal_cap
        self.seen = seen if seen is not None else Seen.zeros(self.variant, 1)
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
        self.state = state = engine.start_round(engine.deal(seed, self.variant, dealer), self.house_rules)
        self.legal = self.table.legal_indices(state, engine)
        seen = self.seen
        deal = state.deal
        seen.phase[0] = AUCTION
        seen.hands[0] = [rank_counts(card.rank for card in hand) for hand in state.hands]
        seen.hand_sizes[0] = [len(hand) for hand in state.hands]
        seen.dealer[0] = deal.dealer
        seen.face_up_rank[0] = deal.face_up.rank
        seen.face_up_seat[0] = deal.face_up_seat
        seen.bid[0] = 0
        unset: tuple[npt.NDArray[Any], ...] = (seen.bidder, seen.landlord, seen.calls, seen.last_player)
        for field in unset:
            field[0] = NONE
        cleared: tuple[npt.NDArray[Any], ...] = (seen.kitty, seen.played, seen.last_moves, seen.history, seen.to_beat)
        for field in cleared:
            field[0] = 0
        seen.to_beat_kind[0] = 0
        seen.doublings[0] = 0

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
        before = self.state
        action = self.table.to_action(before, index, engine)
        state = engine.apply(before, action).state
        if state.phase is Phase.THROWN_IN:
            if self.redeals < self.redeal_cap:
                self.redeals += 1
                self._deal(engine.derive_seed(self.seed, "redeal", self.redeals), state.deal.dealer)
                return legal
            self.state = state
            self.legal = []
            self.settlement = engine.settle(state)
            self.seen.phase[0] = OVER
            self.seen.calls[0, action.seat] = 0
            return legal
        self.state = state
        if isinstance(action, Bid):
            self._seen_bid(action, state)
        else:
            self._seen_play(action.seat, index, state)
        if state.phase is Phase.FINISHED:
            self.legal = []
            self.settlement = engine.settle(state)
            self.seen.phase[0] = OVER
        else:
            self.legal = self.table.legal_indices(state, engine)
        return legal

    def _seen_bid(self, bid: Bid, state: RoundState) -> None:
        seen = self.seen
        seen.calls[0, bid.seat] = bid.amount
        seen.bid[0] = state.bid
        seen.bidder[0] = NONE if state.bidder is None else state.bidder
        if state.landlord is not None:
            landlord = state.landlord
            kitty = rank_counts(card.rank for card in state.deal.kitty)
            seen.phase[0] = PLAY
            seen.landlord[0] = landlord
            seen.kitty[0] = kitty
            seen.hands[0, landlord] += np.array(kitty, dtype=np.int8)
            seen.hand_sizes[0, landlord] = len(state.hands[landlord])

    def _seen_play(self, seat: int, index: int, state: RoundState) -> None:
        seen = self.seen
        move = self.table.counts[index]
        if index != PASS:
            seen.hands[0, seat] -= move
            seen.hand_sizes[0, seat] = len(state.hands[seat])
            seen.played[0, seat] += move
        seen.last_moves[0, seat] = move
        history = seen.history[0]
        history[:-1] = history[1:]
        history[-1] = move
        last = state.last_play
        if last is None or state.phase is not Phase.PLAY:
            seen.to_beat[0] = 0
            seen.to_beat_kind[0] = 0
            seen.last_player[0] = NONE
        else:
            seen.to_beat[0] = self.table.counts[self.table.index_of(last)]
            seen.to_beat_kind[0] = last.kind
            assert state.last_player is not None
            seen.last_player[0] = state.last_player
        seen.doublings[0] = state.doublings

    def rewards(self) -> tuple[float, ...]:
        """Each seat's reward: zero until the round is settled."""
        players = self.variant.players
        if self.settlement is None:
            return (0.0,) * players
        return rewards(self.settlement, players, self.reward)

    def seen_by(self, seat: int) -> Seen:
        """What ``seat`` sees now: the game's row, viewed by ``seat``."""
        self.seen.seat[0] = seat
        return self.seen

    def observe(self, coder: Encoding, seat: int) -> npt.NDArray[np.int8]:
        """``seat``'s observation now, in ``coder``'s encoding."""
        encoded: npt.NDArray[np.int8] = coder.encode(self.seen_by(seat))[0]
        return encoded
