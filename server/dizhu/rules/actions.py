"""What a seat can do, what happens, and why an action is refused (docs/rules.md sections 4 and 5)."""

from __future__ import annotations

import dataclasses
import enum

from dizhu.rules.cards import Card, format_cards
from dizhu.rules.combinations import Combination

__all__ = [
    "MAX_BID",
    "Action",
    "Bid",
    "BidMade",
    "CardsPlayed",
    "Event",
    "IllegalAction",
    "LandlordChosen",
    "Play",
    "Refusal",
    "RoundFinished",
    "ThrownIn",
    "TrickClosed",
]

#: The highest bid; bidding it ends the auction at once.
MAX_BID = 3


@dataclasses.dataclass(frozen=True, slots=True)
class Bid:
    """A seat's call in the auction: 1, 2 or 3 units, or 0 to pass."""

    seat: int
    amount: int

    @property
    def is_pass(self) -> bool:
        return self.amount == 0

    def __str__(self) -> str:
        return f"seat {self.seat} {'passes' if self.is_pass else f'bids {self.amount}'}"


@dataclasses.dataclass(frozen=True, slots=True)
class Play:
    """A seat's move in the play: the cards it plays, none to pass."""

    seat: int
    cards: tuple[Card, ...] = ()

    @property
    def is_pass(self) -> bool:
        return not self.cards

    def __str__(self) -> str:
        return f"seat {self.seat} {'passes' if self.is_pass else 'plays ' + format_cards(self.cards)}"


Action = Bid | Play


class Refusal(enum.StrEnum):
    """Why an action was refused; the value is the machine-readable reason."""

    #: The round is not in the phase the action belongs to (a bid during play, any action after the end).
    WRONG_PHASE = "WRONG_PHASE"
    #: The seat does not exist in this variant.
    INVALID_SEAT = "INVALID_SEAT"
    #: It is another seat's turn.
    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    #: A bid outside 0..3.
    INVALID_BID = "INVALID_BID"
    #: A bid not higher than the highest bid so far.
    BID_TOO_LOW = "BID_TOO_LOW"
    #: The leader of a trick tried to pass.
    MUST_LEAD = "MUST_LEAD"
    #: A card the seat does not hold, or the same card listed twice.
    CARDS_NOT_IN_HAND = "CARDS_NOT_IN_HAND"
    #: The cards form no combination of this variant.
    ILLEGAL_COMBINATION = "ILLEGAL_COMBINATION"
    #: The combination does not beat the last play of the trick.
    DOES_NOT_BEAT = "DOES_NOT_BEAT"


class IllegalAction(Exception):
    """Raised by ``apply`` for an action the rules refuse; the state is unchanged."""

    def __init__(self, reason: Refusal, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message

    def __str__(self) -> str:
        return f"{self.reason}: {self.message}"


@dataclasses.dataclass(frozen=True, slots=True)
class BidMade:
    """A seat bid or passed in the auction."""

    seat: int
    amount: int


@dataclasses.dataclass(frozen=True, slots=True)
class ThrownIn:
    """Everybody passed before anyone bid: the cards are thrown in (a redeal follows)."""


@dataclasses.dataclass(frozen=True, slots=True)
class LandlordChosen:
    """The auction is over: ``seat`` is the landlord at ``bid`` and takes the public kitty."""

    seat: int
    bid: int
    kitty: tuple[Card, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class CardsPlayed:
    """A seat played (``combination`` set) or passed (no cards) in the current trick."""

    seat: int
    cards: tuple[Card, ...]
    combination: Combination | None
    #: Whether the play doubled the stake (section 9).
    doubled: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class TrickClosed:
    """Everyone else passed: ``leader`` played last and leads the next trick."""

    leader: int


@dataclasses.dataclass(frozen=True, slots=True)
class RoundFinished:
    """``seat`` played its last card; the landlord's side or the farmers' won."""

    seat: int
    landlord_won: bool


Event = BidMade | ThrownIn | LandlordChosen | CardsPlayed | TrickClosed | RoundFinished
