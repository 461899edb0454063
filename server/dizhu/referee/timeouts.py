"""What the turn clock decides for a seat whose time ran out (docs/tables.md, "Turn clock").

Shared by the referee, which applies it, and the replay verifier, which checks that every
action recorded as timed out is the one the clock would have made.
"""

from __future__ import annotations

from dizhu.rules import Action, Bid, Phase, Play, RoundState, legal_plays, pick_cards

__all__ = ["auto_action"]


def auto_action(state: RoundState) -> Action:
    """The clock's decision for the seat to act: a pass in the auction, a pass when following
    a trick, and when leading the smallest legal play (the lowest single: the first that
    ``legal_plays`` lists, made of the lowest cards by id)."""
    seat = state.turn
    if state.phase is Phase.AUCTION:
        return Bid(seat, 0)
    if state.last_play is not None:
        return Play(seat)
    return Play(seat, pick_cards(state.hands[seat], legal_plays(state)[0]))
