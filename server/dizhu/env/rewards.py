"""Rewards of a round, zero-sum per round (docs/env.md).

* ``"win"``: the winning side's seats +1 each and the losers -1 each, scaled so that the
  round sums to zero: the landlord wins or loses ``players - 1``, each farmer 1;
* ``"settlement"``: the referee's settlement, exactly (bid x doublings, spring when on);
* ``"log"``: the settlement on a log scale, ``1 + log2(stake / bid)`` per farmer unit (the
  number of doublings plus one: DouZero's ``logadp``), the landlord ``players - 1`` of them.

A round thrown in until its redeal cap, which settles nothing, pays 0 to every seat.
"""

from __future__ import annotations

from dizhu.rules import Settlement

__all__ = ["REWARDS", "rewards"]

#: The reward schemes by name.
REWARDS = ("win", "settlement", "log")


def rewards(settlement: Settlement, players: int, scheme: str) -> tuple[float, ...]:
    """Each seat's reward for a settled round under ``scheme``."""
    if settlement.landlord is None or settlement.stake == 0:
        return (0.0,) * players
    if scheme == "settlement":
        return tuple(float(delta) for delta in settlement.deltas)
    if scheme == "win":
        unit = 1.0
    elif scheme == "log":
        unit = 1.0 + settlement.doublings + settlement.spring
    else:
        raise ValueError(f"unknown reward {scheme!r}: expected one of {', '.join(REWARDS)}")
    farmer = -unit if settlement.landlord_won else unit
    return tuple(-farmer * (players - 1) if seat == settlement.landlord else farmer for seat in range(players))
