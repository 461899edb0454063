"""What one seat sees, at the level of ranks: the only input of every encoding.

An encoding never reads a round's state: it reads a ``SeatInfo``, built either from the
rules core's view of the seat (``from_state``, which goes through ``view_for``: docs/rules.md
section 11) or, at a real referee, from the seat's ``TableView`` (``dizhu.env.bot``). Both
builders see exactly what the seat may see, so an environment's observation and a bot's at
the referee are the same function of the same information.
"""

from __future__ import annotations

import dataclasses

from dizhu.rules import Bid, Phase, RoundState, Variant, view_for

__all__ = ["SeatInfo", "from_state"]

#: A seat's call in the auction, as ``SeatInfo.calls`` holds it: none yet, else the amount (0 = pass).
NO_CALL = -1


@dataclasses.dataclass(slots=True)
class SeatInfo:
    """One seat's information at one moment. Ranks are ``Rank`` values (0 = 3 ... 14 = RJ)."""

    variant: Variant
    seat: int
    #: ``"auction"``, ``"play"`` or ``"over"``.
    phase: str
    #: The seat's own cards, as counts by rank (15 entries).
    hand: list[int]
    #: How many cards each seat holds now.
    hand_sizes: tuple[int, ...]
    dealer: int
    face_up_rank: int
    face_up_seat: int
    #: The highest bid so far (the landlord's bid once chosen) and who made it.
    bid: int
    bidder: int | None
    landlord: int | None
    #: Each seat's last call in the auction of this deal (``NO_CALL`` before its first).
    calls: list[int]
    #: The kitty as counts by rank, once public (None before).
    kitty: list[int] | None
    #: Every move of the play phase in order: (seat, ranks played; empty for a pass).
    plays: list[tuple[int, tuple[int, ...]]]
    #: The play to beat (ranks; empty when the seat to act leads) and who made it.
    to_beat: tuple[int, ...]
    to_beat_kind: int
    last_player: int | None
    #: How many plays doubled the stake.
    doublings: int


def _counts(ranks: object) -> list[int]:
    counts = [0] * 15
    for rank in ranks:  # type: ignore[attr-defined]
        counts[rank] += 1
    return counts


def from_state(state: RoundState, seat: int) -> SeatInfo:
    """``seat``'s information in ``state``, read from ``view_for(state, seat)`` only."""
    view = view_for(state, seat)
    calls = [NO_CALL] * view.variant.players
    plays: list[tuple[int, tuple[int, ...]]] = []
    for action in view.history:
        if isinstance(action, Bid):
            calls[action.seat] = action.amount
        else:
            plays.append((action.seat, tuple(sorted(card.rank for card in action.cards))))
    phase = "auction" if view.phase is Phase.AUCTION else "play" if view.phase is Phase.PLAY else "over"
    last = view.last_play
    assert view.hand is not None
    return SeatInfo(
        variant=view.variant,
        seat=seat,
        phase=phase,
        hand=_counts(card.rank for card in view.hand),
        hand_sizes=view.hand_sizes,
        dealer=view.dealer,
        face_up_rank=int(view.face_up.rank),
        face_up_seat=view.face_up_seat,
        bid=view.bid,
        bidder=view.bidder,
        landlord=view.landlord,
        calls=calls,
        kitty=None if view.kitty is None or view.landlord is None else _counts(card.rank for card in view.kitty),
        plays=plays,
        to_beat=() if last is None or view.phase is not Phase.PLAY else tuple(int(rank) for rank in last.ranks),
        to_beat_kind=0 if last is None or view.phase is not Phase.PLAY else int(last.kind),
        last_player=view.last_player if view.phase is Phase.PLAY else None,
        doublings=view.doublings,
    )
