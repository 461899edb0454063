"""A table as the referee keeps it: settings, seats, the running match and the current deal.

Immutable like the rules core's states; every command returns a new ``TableState`` whose
``version`` is one higher. ``encode`` / ``decode`` give the compact bytes kept in the store.
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import operator
from typing import Any

import orjson

from dizhu.referee.replay import DealRecord, Timing
from dizhu.rules import (
    VARIANTS,
    HouseRules,
    MatchState,
    Phase,
    RoundState,
    Settlement,
    Variant,
    cards_by_id,
    from_plain,
    to_plain,
)
from dizhu.rules.cards import Card
from dizhu.rules.serialization import action_to_plain

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
    "decode",
    "encode",
    "evolve",
]

_FORMAT_VERSION = 1


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
    #: When the seat to act got its turn.
    turn_started_ms: int = 0
    #: When the seat to act runs out of time, bank included; 0 without a clock.
    deadline_ms: int = 0
    #: Each seat's time bank left in the running deal.
    banks_ms: tuple[int, ...] = ()
    #: How often each seat's time ran out at this table.
    timeouts: tuple[int, ...] = ()
    #: The timing of every action of the running deal (parallel to ``round.history``).
    timings: tuple[Timing, ...] = ()
    #: The running round's earlier, thrown-in deals (kept for its replay).
    earlier_deals: tuple[DealRecord, ...] = ()
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


def _ids(cards: tuple[Card, ...]) -> list[int]:
    return [card.id for card in cards]


def _settlement_plain(settlement: Settlement) -> dict[str, Any]:
    return {
        "stake": settlement.stake,
        "deltas": list(settlement.deltas),
        "landlord": settlement.landlord,
        "landlord_won": settlement.landlord_won,
        "doublings": settlement.doublings,
        "spring": settlement.spring,
    }


def _result_plain(result: RoundResult | None) -> dict[str, Any] | None:
    if result is None:
        return None
    reveal = result.reveal
    return {
        "round": result.round,
        "kind": result.kind.value,
        "settlement": _settlement_plain(result.settlement),
        "reveal": {
            "round": reveal.round,
            "deal": reveal.deal_number,
            "seed": None if reveal.seed is None else reveal.seed.hex(),
            "hands": [_ids(hand) for hand in reveal.hands],
            "kitty": _ids(reveal.kitty),
        },
        "bid": result.bid,
        "winner": result.winner,
        "forfeited_by": result.forfeited_by,
        "forfeit_cause": result.forfeit_cause,
    }


def _result_from_plain(data: dict[str, Any] | None) -> RoundResult | None:
    if data is None:
        return None
    s = data["settlement"]
    r = data["reveal"]
    return RoundResult(
        round=data["round"],
        kind=RoundResultKind(data["kind"]),
        settlement=Settlement(
            s["stake"], tuple(s["deltas"]), s["landlord"], s["landlord_won"], s["doublings"], s["spring"]
        ),
        reveal=Reveal(
            round=r["round"],
            deal_number=r["deal"],
            seed=None if r["seed"] is None else bytes.fromhex(r["seed"]),
            hands=tuple(cards_by_id(hand) for hand in r["hands"]),
            kitty=cards_by_id(r["kitty"]),
        ),
        bid=data["bid"],
        winner=data["winner"],
        forfeited_by=data["forfeited_by"],
        forfeit_cause=data.get("forfeit_cause"),  # absent from states written before it existed
    )


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


class _GrowingList:
    """One growing list of a table -- its running deal's history, or the timings -- as JSON."""

    __slots__ = ("body", "items")

    def __init__(self) -> None:
        self.items: tuple[Any, ...] = ()
        #: The JSON of ``items``' entries, comma-separated, without the brackets.
        self.body = b""


class _GrowingLists:
    """The JSON arrays of each running deal's lists that only grow, kept from one state to the next.

    The table is written after every move with its deal's whole history and timings; the
    JSON written for the previous state is extended when the new list begins with the very
    same objects (states share them), else the list is encoded afresh. Either way the bytes
    are those ``orjson`` writes for the whole list.

    Only tables with a deal running are kept (a finished deal's lists grow no more: its table
    is encoded without this cache and forgotten here), at most ``size`` of them, the least
    recently written going first. Each list is kept as one ``bytes`` of its exact length:
    what ``orjson.dumps`` returns occupies a buffer of at least 4 KiB whatever its length, so
    a slice of it (a copy) is what stays.
    """

    def __init__(self, size: int = 2048) -> None:
        self._size = size
        self._tables: collections.OrderedDict[str, dict[str, _GrowingList]] = collections.OrderedDict()

    def __len__(self) -> int:
        """How many tables' lists are kept."""
        return len(self._tables)

    def __contains__(self, table_id: object) -> bool:
        return table_id in self._tables

    def forget(self, table_id: str) -> None:
        self._tables.pop(table_id, None)

    def json(self, table_id: str, name: str, items: tuple[Any, ...], plain: Any) -> orjson.Fragment:
        lists = self._tables.get(table_id)
        if lists is None:
            lists = self._tables[table_id] = {}
            if len(self._tables) > self._size:
                self._tables.popitem(last=False)
        else:
            self._tables.move_to_end(table_id)
        known = lists.get(name)
        if known is None:
            known = lists[name] = _GrowingList()
        count = len(known.items)
        if len(items) < count or not all(map(operator.is_, known.items, items)):
            known.body, count = b"", 0
        if len(items) > count:
            added = orjson.dumps([plain(item) for item in items[count:]])[1:-1]
            known.body = known.body + b"," + added if known.body else added
        known.items = items
        return orjson.Fragment(b"[" + known.body + b"]")


#: Process-wide, as the tables' states are: bounded by tables with a deal running, never by tables served.
_GROWING = _GrowingLists()


def _growing_json(table: TableState, name: str, items: tuple[Any, ...], plain: Any) -> Any:
    """A list of ``table`` that grows while its deal runs, through the cache above only while it does."""
    if table.status is TableStatus.IN_ROUND:
        return _GROWING.json(table.table_id, name, items, plain)
    _GROWING.forget(table.table_id)
    return [plain(item) for item in items]


def encode(table: TableState) -> bytes:
    """The table as compact JSON bytes (cards as ids, the round via the rules core's format)."""
    settings = table.settings
    match = table.match
    round_plain = None
    if table.round is not None:
        round_plain = to_plain(table.round, history=False)
        round_plain["history"] = _growing_json(table, "history", table.round.history, action_to_plain)
    plain = {
        "v": _FORMAT_VERSION,
        "id": table.table_id,
        "settings": {
            "variant": settings.variant.name,
            "spring": settings.house_rules.spring,
            "clock": [
                settings.clock.decision_ms,
                settings.clock.first_decision_ms,
                settings.clock.bank_ms,
                settings.clock.policy.value,
            ],
            "round_limit": settings.round_limit,
            "redeal_cap": settings.redeal_cap,
            "next_round": settings.next_round.value,
            "first_dealer": settings.first_dealer,
        },
        "seeds": [seed.hex() for seed in table.seeds],
        "creator": table.creator_hash.hex(),
        "seats": [[s.name, None if s.token_hash is None else s.token_hash.hex(), s.reserved] for s in table.seats],
        "match": [match.dealer, match.rounds_played, match.redeals, list(match.balances)],
        "status": table.status.value,
        "version": table.version,
        "created": table.created_ms,
        "updated": table.updated_ms,
        "round": round_plain,
        "deal": table.deal_number,
        "result": _result_plain(table.last_result),
        "awaiting": sorted(table.awaiting_settle),
        "close": None if table.close_reason is None else table.close_reason.value,
        "clock": [table.turn_started_ms, table.deadline_ms, list(table.banks_ms), list(table.timeouts)],
        "timings": _growing_json(table, "timings", table.timings, list),
        "earlier": [
            {"n": record.deal_number, "state": to_plain(record.state), "timings": [list(t) for t in record.timings]}
            for record in table.earlier_deals
        ],
        "care": [table.active_ms, table.attended, table.unattended_rounds, table.unattended_limit, table.owner],
    }
    # A copy of its exact length: the bytes orjson returns occupy a buffer up to ten times as
    # large, and these are kept (the last state of each table this process wrote).
    return bytes(memoryview(orjson.dumps(plain)))


def decode(data: bytes) -> TableState:
    """The table ``encode`` produced."""
    plain = orjson.loads(data)
    if plain.get("v") != _FORMAT_VERSION:
        raise ValueError(f"unsupported table format {plain.get('v')!r}")
    s = plain["settings"]
    variant = VARIANTS[s["variant"]]
    decision, first, bank, policy = s["clock"]
    settings = TableSettings(
        variant=variant,
        house_rules=HouseRules(spring=s["spring"]),
        clock=ClockSettings(decision, first, bank, TimeoutPolicy(policy)),
        round_limit=s["round_limit"],
        redeal_cap=s["redeal_cap"],
        next_round=NextRound(s["next_round"]),
        first_dealer=s["first_dealer"],
    )
    dealer, rounds_played, redeals, balances = plain["match"]
    turn_started, deadline, banks, timeouts = plain["clock"]
    # Tables stored before the "care" entry existed: active since their last change, no limit.
    active, attended, unattended, unattended_limit, owner = plain.get("care", [plain["updated"], True, 0, 0, ""])
    return TableState(
        table_id=plain["id"],
        settings=settings,
        seeds=tuple(bytes.fromhex(seed) for seed in plain["seeds"]),
        creator_hash=bytes.fromhex(plain["creator"]),
        seats=tuple(
            Seat(name, None if token is None else bytes.fromhex(token), reserved)
            for name, token, reserved in plain["seats"]
        ),
        match=MatchState(
            variant, dealer, settings.redeal_cap, settings.round_limit, rounds_played, redeals, tuple(balances)
        ),
        status=TableStatus(plain["status"]),
        version=plain["version"],
        created_ms=plain["created"],
        updated_ms=plain["updated"],
        round=None if plain["round"] is None else from_plain(plain["round"]),
        deal_number=plain["deal"],
        last_result=_result_from_plain(plain["result"]),
        awaiting_settle=frozenset(plain["awaiting"]),
        close_reason=None if plain["close"] is None else CloseReason(plain["close"]),
        turn_started_ms=turn_started,
        deadline_ms=deadline,
        banks_ms=tuple(banks),
        timeouts=tuple(timeouts),
        timings=tuple(Timing(*timing) for timing in plain["timings"]),
        earlier_deals=tuple(
            DealRecord(record["n"], from_plain(record["state"]), tuple(Timing(*t) for t in record["timings"]))
            for record in plain["earlier"]
        ),
        active_ms=active,
        attended=attended,
        unattended_rounds=unattended,
        unattended_limit=unattended_limit,
        owner=owner,
    )
