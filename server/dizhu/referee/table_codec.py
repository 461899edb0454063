"""The bytes a table is stored as (format 1): compact JSON, cards as ids, rounds in the rules core's form.

The table's entries are named; its small records (the clock's settings, a seat, the match's
totals, the turn clock, the table's upkeep) are stored as JSON arrays to keep every write
short. Each array's order is declared once, as an :class:`_Array`, and both directions read
that declaration: a field cannot be written in one place and read from another. Tables
already in the store keep loading: ``tests/referee/test_referee_encoding.py`` reads one
written by this format's first encoder, field by field.
"""

from __future__ import annotations

import collections
import dataclasses
import operator
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import orjson

from dizhu.referee.replay import DealRecord, Timing
from dizhu.referee.table import (
    ClockSettings,
    CloseReason,
    NextRound,
    Reveal,
    RoundResult,
    RoundResultKind,
    Seat,
    TableSettings,
    TableState,
    TableStatus,
    TimeoutPolicy,
    TurnClock,
    Upkeep,
)
from dizhu.rules import VARIANTS, HouseRules, MatchState, Settlement, cards_by_id, from_plain, serialization, to_plain
from dizhu.rules.cards import Card

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = ["decode", "encode", "keep_growing_lists_of"]

RecordT = TypeVar("RecordT", bound="DataclassInstance")

_FORMAT_VERSION = 1


@dataclasses.dataclass(frozen=True, slots=True)
class _Field:
    """An attribute stored as one array item, converted where JSON cannot hold its value as is."""

    attribute: str
    write: Callable[[Any], Any] | None = None
    read: Callable[[Any], Any] | None = None


class _Array(Generic[RecordT]):
    """A record stored as a JSON array: its fields in the order declared here, which both directions read.

    ``write``, ``read`` and ``build`` (given the ``record`` class) are generated from the
    declaration, as ``dataclasses`` generates ``__init__``: every table written and read goes
    through a few of them, and generated code costs what the hand-written positional code
    did, where a loop over the declaration cost more than twice as much.
    """

    __slots__ = ("build", "read", "write")

    def __init__(self, *fields: str | _Field, record: type[RecordT] | None = None) -> None:
        declared = [field if isinstance(field, _Field) else _Field(field) for field in fields]
        namespace: dict[str, Any] = {"record_class": record}
        written, read = [], []
        for index, field in enumerate(declared):
            if not field.attribute.isidentifier():
                raise ValueError(f"not an attribute: {field.attribute!r}")
            value = f"record.{field.attribute}"
            if field.write is not None:
                namespace[f"write_{index}"] = field.write
                value = f"write_{index}({value})"
            written.append(value)
            stored = f"v{index}"
            if field.read is not None:
                namespace[f"read_{index}"] = field.read
                stored = f"read_{index}({stored})"
            read.append((field.attribute, stored))
        # Unpacking checks the stored array's length (ValueError), as the hand-written reads did.
        unpack = "".join(f"v{index}, " for index in range(len(declared))) + "= stored"
        lines = [
            "def write(record):",
            f"    return [{', '.join(written)}]",
            "def read(stored):",
            f"    {unpack}",
            "    return {" + ", ".join(f"{name!r}: {value}" for name, value in read) + "}",
        ]
        lines += ["def build(stored):"]
        if record is None:
            lines += ["    raise TypeError('an array declared without its record class builds none: read it')"]
        else:
            lines += [
                f"    {unpack}",
                "    return record_class(" + ", ".join(f"{name}={value}" for name, value in read) + ")",
            ]
        source = "\n".join(lines)
        exec(source, namespace)  # noqa: S102 -- code made above from the declared attribute names only
        #: ``record``'s fields, in order.
        self.write: Callable[[object], list[Any]] = namespace["write"]
        #: The fields ``write`` stored, by attribute.
        self.read: Callable[[Sequence[Any]], dict[str, Any]] = namespace["read"]
        #: The ``record`` that ``write`` stored.
        self.build: Callable[[Sequence[Any]], RecordT] = namespace["build"]


def _hex_or_none(value: bytes | None) -> str | None:
    return None if value is None else value.hex()


def _bytes_or_none(stored: str | None) -> bytes | None:
    return None if stored is None else bytes.fromhex(stored)


#: ``settings.clock``: a :class:`ClockSettings`.
_CLOCK_SETTINGS = _Array(
    "decision_ms",
    "first_decision_ms",
    "bank_ms",
    _Field("policy", operator.attrgetter("value"), TimeoutPolicy),
    record=ClockSettings,
)
#: Each of ``seats``: a :class:`Seat`.
_SEAT = _Array("name", _Field("token_hash", _hex_or_none, _bytes_or_none), "reserved", record=Seat)
#: ``match``: the :class:`MatchState`'s running totals (the rest comes from the settings).
_MATCH: _Array[MatchState] = _Array("dealer", "rounds_played", "redeals", _Field("balances", read=tuple))
#: ``clock``: the table's :class:`TurnClock`.
_TURN_CLOCK = _Array(
    "started_ms", "deadline_ms", _Field("banks_ms", read=tuple), _Field("timeouts", read=tuple), record=TurnClock
)
#: ``care``: the table's :class:`Upkeep`.
_CARE = _Array("active_ms", "attended", "unattended_rounds", "unattended_limit", "owner", record=Upkeep)


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

    def resize(self, size: int) -> None:
        """Keep at most ``size`` tables' lists from now on (the least recently written go)."""
        self._size = size
        while len(self._tables) > size:
            self._tables.popitem(last=False)

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


def keep_growing_lists_of(tables: int) -> None:
    """Keep the growing lists of at most ``tables`` tables in this process (2,048 unless set)."""
    _GROWING.resize(tables)


def _growing_json(table: TableState, name: str, items: tuple[Any, ...], plain: Any) -> Any:
    """A list of ``table`` that grows while its deal runs, through the cache above only while it does."""
    if table.status is TableStatus.IN_ROUND:
        return _GROWING.json(table.table_id, name, items, plain)
    _GROWING.forget(table.table_id)
    return [plain(item) for item in items]


def encode(table: TableState) -> bytes:
    """The table as compact JSON bytes (cards as ids, the round via the rules core's format)."""
    settings = table.settings
    round_plain = None
    if table.round is not None:
        round_plain = to_plain(table.round, history=False)
        round_plain["history"] = _growing_json(table, "history", table.round.history, serialization.action_to_plain)
    plain = {
        "v": _FORMAT_VERSION,
        "id": table.table_id,
        "settings": {
            "variant": settings.variant.name,
            "spring": settings.house_rules.spring,
            "clock": _CLOCK_SETTINGS.write(settings.clock),
            "round_limit": settings.round_limit,
            "redeal_cap": settings.redeal_cap,
            "next_round": settings.next_round.value,
            "first_dealer": settings.first_dealer,
        },
        "seeds": [seed.hex() for seed in table.seeds],
        "creator": table.creator_hash.hex(),
        "seats": [_SEAT.write(seat) for seat in table.seats],
        "match": _MATCH.write(table.match),
        "status": table.status.value,
        "version": table.version,
        "created": table.created_ms,
        "updated": table.updated_ms,
        "round": round_plain,
        "deal": table.deal_number,
        "result": _result_plain(table.last_result),
        "awaiting": sorted(table.awaiting_settle),
        "close": None if table.close_reason is None else table.close_reason.value,
        "clock": _TURN_CLOCK.write(table.turn),
        "timings": _growing_json(table, "timings", table.timings, list),
        "earlier": [
            {"n": record.deal_number, "state": to_plain(record.state), "timings": [list(t) for t in record.timings]}
            for record in table.earlier_deals
        ],
        "care": _CARE.write(table.upkeep),
    }
    # A copy of its exact length: the bytes orjson returns occupy a buffer up to ten times as
    # large, and these are kept (the last state of each table this process wrote).
    return bytes(memoryview(orjson.dumps(plain)))


def _upkeep(plain: dict[str, Any]) -> Upkeep:
    """The table's upkeep; for tables stored before it was: active since their last change, no limit."""
    if "care" in plain:
        return _CARE.build(plain["care"])
    return Upkeep(active_ms=plain["updated"], attended=True)


def decode(data: bytes) -> TableState:
    """The table ``encode`` produced."""
    plain = orjson.loads(data)
    if plain.get("v") != _FORMAT_VERSION:
        raise ValueError(f"unsupported table format {plain.get('v')!r}")
    s = plain["settings"]
    variant = VARIANTS[s["variant"]]
    settings = TableSettings(
        variant=variant,
        house_rules=HouseRules(spring=s["spring"]),
        clock=_CLOCK_SETTINGS.build(s["clock"]),
        round_limit=s["round_limit"],
        redeal_cap=s["redeal_cap"],
        next_round=NextRound(s["next_round"]),
        first_dealer=s["first_dealer"],
    )
    return TableState(
        table_id=plain["id"],
        settings=settings,
        seeds=tuple(bytes.fromhex(seed) for seed in plain["seeds"]),
        creator_hash=bytes.fromhex(plain["creator"]),
        seats=tuple(_SEAT.build(seat) for seat in plain["seats"]),
        match=MatchState(
            variant=variant,
            redeal_cap=settings.redeal_cap,
            round_limit=settings.round_limit,
            **_MATCH.read(plain["match"]),
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
        turn=_TURN_CLOCK.build(plain["clock"]),
        timings=tuple(Timing(*timing) for timing in plain["timings"]),
        earlier_deals=tuple(
            DealRecord(record["n"], from_plain(record["state"]), tuple(Timing(*t) for t in record["timings"]))
            for record in plain["earlier"]
        ),
        upkeep=_upkeep(plain),
    )
