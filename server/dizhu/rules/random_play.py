"""Complete rounds between players that pick uniformly among their legal actions.

Used by the demonstration, the property tests and the benchmarks; it goes through the same
public API as any referee (``legal_bids``, ``legal_plays``, ``pick_cards``, ``apply``).
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from dizhu.rules.actions import Action, Bid, Play
from dizhu.rules.deal import deal
from dizhu.rules.moves import pick_cards
from dizhu.rules.round import RoundState, Transition, apply, legal_bids, legal_plays, start_round
from dizhu.rules.tables import Table
from dizhu.rules.variants import HouseRules, Variant

__all__ = ["random_action", "random_round"]

#: Each seat's pass, built once: actions are immutable, and half of all actions are passes.
_PASS: Table[int, Play] = Table(Play)


def random_action(state: RoundState, rng: random.Random) -> Action:
    """A uniformly random legal action for the seat to act (passing counts as one choice)."""
    seat = state.turn
    bids = legal_bids(state)
    if bids:
        return Bid(seat, rng.choice(bids))
    plays = legal_plays(state)
    choices = len(plays) + (state.last_play is not None)
    index = rng.randrange(choices)
    if index == len(plays):
        return _PASS[seat]
    return Play(seat, pick_cards(state.hands[seat], plays[index]))


def random_round(
    variant: Variant,
    rng: random.Random,
    *,
    dealer: int = 0,
    house_rules: HouseRules | None = None,
) -> Iterator[tuple[Action, Transition]]:
    """Deal from a seed drawn from ``rng`` and play to the end, yielding each step."""
    seed = rng.randbytes(32)
    state = start_round(deal(seed, variant, dealer), house_rules)
    while not state.is_over:
        action = random_action(state, rng)
        transition = apply(state, action)
        yield action, transition
        state = transition.state
