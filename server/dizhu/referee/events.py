"""What happened at a table, as the referee records it (one event per change seen by players).

These mirror the contract's ``TableEvent`` payloads (``LandlordChosen`` is the rules core's
own). ``DealStarted`` carries every hand: the service hands each viewer only its own, and
spectators none (see ``dizhu.service``).
"""

from __future__ import annotations

import dataclasses

from dizhu.referee.table import CloseReason, Reveal, RoundResult
from dizhu.rules import Card, Combination, LandlordChosen

__all__ = [
    "BidMade",
    "CardsPlayed",
    "DealStarted",
    "DealThrownIn",
    "LandlordChosen",
    "RoundEnded",
    "SeatJoined",
    "SeatLeft",
    "SeatSettled",
    "Standing",
    "TableClosed",
    "TableEvent",
    "TurnDeadline",
]


@dataclasses.dataclass(frozen=True, slots=True)
class Standing:
    place: int
    seat: int
    name: str
    balance: int


@dataclasses.dataclass(frozen=True, slots=True)
class SeatJoined:
    seat: int
    name: str


@dataclasses.dataclass(frozen=True, slots=True)
class SeatLeft:
    seat: int
    name: str


@dataclasses.dataclass(frozen=True, slots=True)
class DealStarted:
    round: int
    deal_number: int
    dealer: int
    face_up: Card
    face_up_seat: int
    commitment: bytes | None
    #: Every hand: private, each to its own seat only.
    hands: tuple[tuple[Card, ...], ...]


@dataclasses.dataclass(frozen=True, slots=True)
class BidMade:
    seat: int
    amount: int
    timed_out: bool = False
    #: The seat to bid next; None once the bid closed the auction.
    next_seat: int | None = None
    #: The bid closed the auction: a LandlordChosen or a thrown-in deal comes with it.
    auction_closed: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class DealThrownIn:
    reveal: Reveal
    #: The redeal cap was hit: the round is void.
    round_void: bool


@dataclasses.dataclass(frozen=True, slots=True)
class CardsPlayed:
    seat: int
    cards: tuple[Card, ...]
    combination: Combination | None
    cards_left: int
    stake: int
    trick_closed: bool
    timed_out: bool = False
    #: The seat to play next (a closed trick's new leader); None once the seat went out.
    next_seat: int | None = None
    #: The play doubled the stake (section 9; its combination says whether as a bomb or the rocket).
    doubled: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class RoundEnded:
    result: RoundResult
    balances: tuple[int, ...]
    #: The round's full record as JSON (``dizhu.referee.replay``); kept by the store, not streamed.
    replay: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class TurnDeadline:
    """The seat to act must decide by ``deadline_ms`` (its bank included)."""

    seat: int
    deadline_ms: int
    bank_ms: int


@dataclasses.dataclass(frozen=True, slots=True)
class SeatSettled:
    seat: int
    round: int


@dataclasses.dataclass(frozen=True, slots=True)
class TableClosed:
    reason: CloseReason
    standings: tuple[Standing, ...]


TableEvent = (
    SeatJoined
    | SeatLeft
    | DealStarted
    | BidMade
    | DealThrownIn
    | LandlordChosen
    | CardsPlayed
    | RoundEnded
    | SeatSettled
    | TableClosed
    | TurnDeadline
)
