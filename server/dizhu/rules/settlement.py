"""Settling a round (docs/rules.md sections 9 and 10).

The stake is the winning bid, doubled once per doubling play (3p: every bomb and rocket;
4p: the rocket and bombs of six or more cards), and once more for a spring when that house
rule is on. The losing side pays: each farmer pays the landlord the stake, or the landlord
pays each farmer the stake. A thrown-in or void round settles nothing. Every settlement
sums to zero.
"""

from __future__ import annotations

import dataclasses

from dizhu.rules.round import Phase, RoundState

__all__ = ["Settlement", "abandon", "forfeit", "settle"]


@dataclasses.dataclass(frozen=True, slots=True)
class Settlement:
    """What a finished round pays."""

    #: Units each farmer pays or receives (0 when nothing is settled).
    stake: int
    #: Balance changes indexed by seat; they sum to zero.
    deltas: tuple[int, ...]
    landlord: int | None = None
    landlord_won: bool | None = None
    #: How many plays doubled the stake.
    doublings: int = 0
    #: Whether the spring house rule doubled the stake once more.
    spring: bool = False

    @classmethod
    def nothing(cls, players: int) -> Settlement:
        """The settlement of a thrown-in or void round."""
        return cls(stake=0, deltas=(0,) * players)


def _is_spring(state: RoundState, landlord: int, landlord_won: bool) -> bool:
    if landlord_won:
        return all(made == 0 for seat, made in enumerate(state.plays_made) if seat != landlord)
    return state.plays_made[landlord] == 1


def settle(state: RoundState) -> Settlement:
    """The settlement of a round that is over; raises ``ValueError`` while it is still on."""
    players = state.variant.players
    if state.phase is Phase.THROWN_IN:
        return Settlement.nothing(players)
    if state.phase is not Phase.FINISHED:
        raise ValueError(f"a round in the {state.phase.value} phase cannot be settled yet")
    landlord = state.landlord
    assert landlord is not None
    landlord_won = state.turn == landlord
    spring = state.house_rules.spring and _is_spring(state, landlord, landlord_won)
    stake = state.stake << spring
    farmer_delta = -stake if landlord_won else stake
    deltas = tuple(-farmer_delta * (players - 1) if seat == landlord else farmer_delta for seat in range(players))
    return Settlement(stake, deltas, landlord, landlord_won, state.doublings, spring)


def abandon(state: RoundState) -> Settlement:
    """The settlement of a round abandoned before its end (its table closed): nothing changes
    hands, but a landlord the auction already chose, and the doublings so far, are recorded."""
    return Settlement(stake=0, deltas=(0,) * state.variant.players, landlord=state.landlord, doublings=state.doublings)


def forfeit(state: RoundState, seat: int) -> Settlement:
    """The settlement when ``seat`` forfeits a round in play: its side loses the current stake.

    A forfeit during the auction, before there is a landlord, abandons the round instead:
    nothing is settled.
    """
    players = state.variant.players
    landlord = state.landlord
    if state.phase is not Phase.PLAY or landlord is None:
        return Settlement.nothing(players)
    landlord_won = seat != landlord
    stake = state.stake
    farmer_delta = -stake if landlord_won else stake
    deltas = tuple(-farmer_delta * (players - 1) if s == landlord else farmer_delta for s in range(players))
    return Settlement(stake, deltas, landlord, landlord_won, state.doublings)
