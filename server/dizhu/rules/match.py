"""A table's series of rounds: dealer rotation, redeals, balances, standings (docs/rules.md sections 2, 3, 4).

Decisions honoured here: the deal passes to the next seat every round; a thrown-in deal is
redealt by the same dealer until a table's cap on consecutive redeals is hit, and then the
round is void and settles nothing; a table ends after its round limit (if it has one) and
ranks seats by balance.
"""

from __future__ import annotations

import dataclasses

from dizhu.rules.round import Phase, RoundState
from dizhu.rules.settlement import Settlement, settle
from dizhu.rules.variants import Variant

__all__ = ["MatchState", "RoundOutcome", "book_settlement", "new_match", "record_round", "standings"]


@dataclasses.dataclass(frozen=True, slots=True)
class MatchState:
    """The table's running totals between rounds."""

    variant: Variant
    #: The seat dealing the current round.
    dealer: int
    #: Consecutive redeals allowed before a round is void.
    redeal_cap: int
    #: Rounds to play, 0 for no limit.
    round_limit: int = 0
    #: Rounds completed (settled or void).
    rounds_played: int = 0
    #: Redeals so far in the current round.
    redeals: int = 0
    #: Running balance per seat; always sums to zero.
    balances: tuple[int, ...] = ()

    @property
    def is_over(self) -> bool:
        return 0 < self.round_limit <= self.rounds_played


@dataclasses.dataclass(frozen=True, slots=True)
class RoundOutcome:
    """What ``record_round`` decided about a round that is over."""

    match: MatchState
    settlement: Settlement
    #: The same dealer deals again (thrown in, under the cap).
    redeal: bool
    #: Thrown in once too often: the round counts but settles nothing.
    void: bool


def new_match(
    variant: Variant, first_dealer: int, *, redeal_cap: int | None = None, round_limit: int = 0
) -> MatchState:
    """A table's totals before its first round."""
    if not 0 <= first_dealer < variant.players:
        raise ValueError(f"{variant.name} has no seat {first_dealer}")
    cap = variant.default_redeal_cap if redeal_cap is None else redeal_cap
    if cap < 0 or round_limit < 0:
        raise ValueError("the redeal cap and round limit cannot be negative")
    return MatchState(variant, first_dealer, cap, round_limit, balances=(0,) * variant.players)


def record_round(match: MatchState, state: RoundState) -> RoundOutcome:
    """Book a round that is over: settle it, or decide on a redeal or a void round."""
    if match.is_over:
        raise ValueError("the table has played its last round")
    settlement = settle(state)
    if state.phase is Phase.THROWN_IN and match.redeals < match.redeal_cap:
        return RoundOutcome(dataclasses.replace(match, redeals=match.redeals + 1), settlement, redeal=True, void=False)
    return RoundOutcome(
        book_settlement(match, settlement), settlement, redeal=False, void=state.phase is Phase.THROWN_IN
    )


def book_settlement(match: MatchState, settlement: Settlement) -> MatchState:
    """Close the current round with ``settlement`` (also a forfeit's): balances move, the deal passes on."""
    if match.is_over:
        raise ValueError("the table has played its last round")
    return dataclasses.replace(
        match,
        dealer=(match.dealer + 1) % match.variant.players,
        rounds_played=match.rounds_played + 1,
        redeals=0,
        balances=tuple(b + d for b, d in zip(match.balances, settlement.deltas, strict=True)),
    )


def standings(match: MatchState) -> list[tuple[int, int, int]]:
    """``(place, seat, balance)`` best first; equal balances share a place."""
    ordered = sorted(range(len(match.balances)), key=lambda seat: (-match.balances[seat], seat))
    table: list[tuple[int, int, int]] = []
    for index, seat in enumerate(ordered):
        balance = match.balances[seat]
        place = table[-1][0] if table and table[-1][2] == balance else index + 1
        table.append((place, seat, balance))
    return table
