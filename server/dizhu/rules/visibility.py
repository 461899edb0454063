"""What each viewer may see of a round (docs/rules.md section 11).

Public to everyone, spectators included: the dealer, the face-up card and who drew it, the
seed commitment, every bid, play and pass, the landlord, the kitty once taken, how many
cards each seat holds, the stake. Private: a seat's hand, to that seat alone, until the
round is over; then every hand as dealt, the kitty and the seed are public.
"""

from __future__ import annotations

import dataclasses

from dizhu.rules.actions import Action
from dizhu.rules.cards import Card
from dizhu.rules.combinations import Combination
from dizhu.rules.round import Phase, RoundState
from dizhu.rules.variants import Variant

__all__ = ["RoundView", "view_for"]


@dataclasses.dataclass(frozen=True, slots=True)
class RoundView:
    """A round as one viewer sees it. ``viewer`` is a seat, or None for a spectator."""

    variant: Variant
    viewer: int | None
    phase: Phase
    dealer: int
    #: The seat to act; in a round that is over, the seat that acted last.
    turn: int
    face_up: Card
    face_up_seat: int
    commitment: bytes | None
    hand_sizes: tuple[int, ...]
    history: tuple[Action, ...]
    bid: int
    bidder: int | None
    landlord: int | None
    last_play: Combination | None
    last_player: int | None
    stake: int
    doublings: int
    #: The kitty, once the landlord has taken it (or the round is over).
    kitty: tuple[Card, ...] | None
    #: The viewer's own hand (None for spectators).
    hand: tuple[Card, ...] | None
    #: Once the round is over: the seed and every hand as dealt.
    seed: bytes | None
    dealt_hands: tuple[tuple[Card, ...], ...] | None


def view_for(state: RoundState, viewer: int | None) -> RoundView:
    """``state`` as seen by seat ``viewer`` (None: a spectator)."""
    if viewer is not None and not 0 <= viewer < state.variant.players:
        raise ValueError(f"{state.variant.name} has no seat {viewer}")
    deal = state.deal
    over = state.phase is Phase.FINISHED or state.phase is Phase.THROWN_IN
    return RoundView(
        variant=state.variant,
        viewer=viewer,
        phase=state.phase,
        dealer=deal.dealer,
        turn=state.turn,
        face_up=deal.face_up,
        face_up_seat=deal.face_up_seat,
        commitment=deal.commitment,
        hand_sizes=tuple(len(hand) for hand in state.hands),
        history=state.history,
        bid=state.bid,
        bidder=state.bidder,
        landlord=state.landlord,
        last_play=state.last_play,
        last_player=state.last_player,
        stake=state.stake,
        doublings=state.doublings,
        kitty=deal.kitty if state.landlord is not None or over else None,
        hand=None if viewer is None else state.hands[viewer],
        seed=deal.seed if over else None,
        dealt_hands=deal.hands if over else None,
    )
