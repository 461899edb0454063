"""A table as the referee keeps it: settings, seats, the running match and the current deal.

Immutable like the rules core's states; every command returns a new ``TableState`` whose
``version`` is one higher. The bytes kept in the store: :mod:`dizhu.referee.table_codec`.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from dizhu.referee.replay import DealRecord, Timing
from dizhu.rules import HouseRules, MatchState, Phase, RoundState, Settlement, Variant
from dizhu.rules.cards import Card

__all__ = [
    "ClockSettings",
    "CloseReason",
    "NextRound",
    "Reveal",
    "RoundResult",
    "RoundResultKind",
    "Seat",
    "TableSettings",
    "TableState",
    "TableStatus",
    "TimeoutPolicy",
    "TurnClock",
    "Upkeep",
    "evolve",
]


class TimeoutPolicy(enum.Enum):
    """What happens when a seat's time runs out."""

    #: Pass when allowed, otherwise make the smallest legal play (bid: pass).
    AUTO_PLAY = "auto_play"
    #: The offender's side loses the round at the current stake.
    FORFEIT = "forfeit"


class NextRound(enum.Enum):
    """When the next round is dealt after one ends."""

    #: In the same change that ends a round.
    AUTOMATIC = "automatic"
    #: Once every seated player has called Settle.
    WHEN_ALL_SETTLED = "when_all_settled"


class TableStatus(enum.Enum):
    """Where a table stands."""

    #: A seat is free and no deal is running.
    WAITING = "waiting"
    #: A deal is running (auction or play).
    IN_ROUND = "in_round"
    #: A round ended; waiting for every seat to settle (``NextRound.WHEN_ALL_SETTLED``).
    ROUND_OVER = "round_over"
    #: Closed by its creator or by the round limit: readable, never changed again.
    CLOSED = "closed"


class CloseReason(enum.Enum):
    """Why a table closed."""

    CLOSED_BY_CREATOR = "closed_by_creator"
    ROUND_LIMIT = "round_limit"
    #: Nobody acted for too long, or the clock made every decision of too many rounds in a row.
    ABANDONED = "abandoned"


class RoundResultKind(enum.Enum):
    """How a round ended."""

    LANDLORD_WON = "landlord_won"
    FARMERS_WON = "farmers_won"
    #: Thrown in once more than the redeal cap allows: settles nothing.
    VOID = "void"
    #: Left during the auction, or the table closed mid-round: settles nothing.
    ABANDONED = "abandoned"


@dataclasses.dataclass(frozen=True, slots=True)
class ClockSettings:
    """Time limits per decision, in milliseconds; ``decision_ms == 0`` means no clock."""

    decision_ms: int = 0
    first_decision_ms: int = 0
    bank_ms: int = 0
    policy: TimeoutPolicy = TimeoutPolicy.AUTO_PLAY


@dataclasses.dataclass(frozen=True, slots=True)
class TableSettings:
    """Everything fixed when a table is created."""

    variant: Variant
    house_rules: HouseRules = dataclasses.field(default_factory=HouseRules)
    clock: ClockSettings = dataclasses.field(default_factory=ClockSettings)
    #: Rounds to play; 0 for no limit.
    round_limit: int = 0
    #: Consecutive redeals allowed before a round is void.
    redeal_cap: int = 10
    next_round: NextRound = NextRound.AUTOMATIC
    first_dealer: int | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Seat:
    """A seat: free when ``token_hash`` is None."""

    name: str = ""
    #: SHA-256 of the seat's bearer token; tokens themselves are never stored.
    token_hash: bytes | None = None
    #: Pre-assigned by the creator (its token went back to the creator).
    reserved: bool = False

    @property
    def occupied(self) -> bool:
        return self.token_hash is not None


@dataclasses.dataclass(frozen=True, slots=True)
class Reveal:
    """A deal made public once it is over: seed and every hand as dealt."""

    round: int
    deal_number: int
    seed: bytes | None
    hands: tuple[tuple[Card, ...], ...]
    kitty: tuple[Card, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class RoundResult:
    """How the last round ended and what it settled."""

    round: int
    kind: RoundResultKind
    settlement: Settlement
    reveal: Reveal
    bid: int = 0
    winner: int | None = None
    forfeited_by: int | None = None
    #: Why ``forfeited_by`` forfeited: ``"left"`` the table or ran out of time (``"timeout"``).
    forfeit_cause: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class TurnClock:
    """The turn clock of the running deal (all 0 or empty without a clock)."""

    #: When the seat to act got its turn.
    started_ms: int = 0
    #: When the seat to act runs out of time, bank included; 0 without a clock.
    deadline_ms: int = 0
    #: Each seat's time bank left in the running deal.
    banks_ms: tuple[int, ...] = ()
    #: How often each seat's time ran out at this table.
    timeouts: tuple[int, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class Upkeep:
    """What keeps a table from living forever, and whom it counts against."""

    #: When a client last changed the table (the clock's actions do not count).
    active_ms: int = 0
    #: Whether a seat made a decision itself (not the clock) in the running round.
    attended: bool = False
    #: Rounds in a row that ended with every decision made by the clock.
    unattended_rounds: int = 0
    #: Close the table once that many rounds in a row were unattended; 0: never.
    unattended_limit: int = 0
    #: Who created the table, as the service's quotas count it ("" when not counted).
    owner: str = ""

    # Built directly rather than by dataclasses.replace: every change of a table makes one.
    def active_at(self, now_ms: int) -> Upkeep:
        """The upkeep of a table a client changed at ``now_ms``."""
        return Upkeep(now_ms, self.attended, self.unattended_rounds, self.unattended_limit, self.owner)

    def attended_now(self) -> Upkeep:
        """The upkeep of a table whose running round a seat acted in itself."""
        return Upkeep(self.active_ms, True, self.unattended_rounds, self.unattended_limit, self.owner)


@dataclasses.dataclass(frozen=True, slots=True)
class TableState:
    """A table at one version."""

    table_id: str
    settings: TableSettings
    #: Per-round seeds preset by the creator (round n's first deal uses ``seeds[n-1]``).
    seeds: tuple[bytes, ...]
    creator_hash: bytes
    seats: tuple[Seat, ...]
    match: MatchState
    status: TableStatus = TableStatus.WAITING
    version: int = 1
    created_ms: int = 0
    updated_ms: int = 0
    #: The running deal, or the last one once it is over.
    round: RoundState | None = None
    #: How many deals the current round has had (1 + redeals).
    deal_number: int = 0
    last_result: RoundResult | None = None
    #: Seats whose Settle the next deal still waits for (``NextRound.WHEN_ALL_SETTLED``).
    awaiting_settle: frozenset[int] = frozenset()
    close_reason: CloseReason | None = None
    turn: TurnClock = TurnClock()
    #: The timing of every action of the running deal (parallel to ``round.history``).
    timings: tuple[Timing, ...] = ()
    #: The running round's earlier, thrown-in deals (kept for its replay).
    earlier_deals: tuple[DealRecord, ...] = ()
    upkeep: Upkeep = Upkeep()

    @property
    def variant(self) -> Variant:
        return self.settings.variant

    @property
    def round_number(self) -> int:
        """The current round, from 1 (the next one while waiting)."""
        return self.match.rounds_played + 1

    @property
    def is_full(self) -> bool:
        return all(seat.occupied for seat in self.seats)

    @property
    def deal_running(self) -> bool:
        return self.status is TableStatus.IN_ROUND

    @property
    def phase_name(self) -> str:
        """The table's phase as the contract names it: a ``dizhu.v1.Phase`` value name."""
        if self.status is TableStatus.CLOSED:
            return "PHASE_CLOSED"
        if self.status is TableStatus.ROUND_OVER:
            return "PHASE_ROUND_OVER"
        if self.status is TableStatus.WAITING or self.round is None:
            return "PHASE_WAITING_FOR_PLAYERS"
        return "PHASE_AUCTION" if self.round.phase is Phase.AUCTION else "PHASE_PLAY"


_TABLE_FIELDS = tuple(field.name for field in dataclasses.fields(TableState))
_set = object.__setattr__


def evolve(table: TableState, **changes: Any) -> TableState:
    """``dataclasses.replace(table, **changes)`` at a fraction of its cost (every move makes a few).

    ``TableState`` has no ``__post_init__`` and no init-only fields, so copying the fields and
    setting the changed ones builds the same value ``replace`` would.
    """
    unknown = changes.keys() - _TABLE_FIELDS_SET
    if unknown:
        raise TypeError(f"TableState has no field(s) {sorted(unknown)}")
    copy = object.__new__(TableState)
    for name in _TABLE_FIELDS:
        _set(copy, name, changes[name] if name in changes else getattr(table, name))
    return copy


_TABLE_FIELDS_SET = frozenset(_TABLE_FIELDS)
