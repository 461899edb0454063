"""Round records: what a replay holds, its JSON form, and the verifier.

A replay is everything about one finished round: every deal (thrown-in ones first) with
its seed, commitment and hands as dealt, every accepted action with the server's
timestamp and the time it took, and the settlement. Its JSON form, schema
``dizhu.replay/v1`` (``docs/replay.md``), writes cards in the rules core's notation.

``verify`` checks a replay from its JSON alone: each seed against its commitment, each
deal recomputed from its seed, every action replayed through the rules core, and the
recorded result recomputed.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from typing import Any, NamedTuple

from dizhu.rules import (
    VARIANTS,
    Action,
    Bid,
    Deal,
    HouseRules,
    IllegalAction,
    NotationError,
    Phase,
    Play,
    RoundState,
    Variant,
    apply,
    commitment,
    deal,
    forfeit,
    format_cards,
    parse_cards,
    settle,
    start_round,
)

__all__ = ["SCHEMA", "DealRecord", "Timing", "Verification", "replay_json", "verify"]

SCHEMA = "dizhu.replay/v1"


class Timing(NamedTuple):
    """The server's timing of an accepted action."""

    #: When the referee accepted it (milliseconds since the epoch).
    at_ms: int
    #: How long the seat took since its turn began.
    took_ms: int
    #: The clock acted for the seat.
    timed_out: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class DealRecord:
    """One deal of a round: its final state (deal and every action) and the actions' timings."""

    deal_number: int
    state: RoundState
    timings: tuple[Timing, ...]


def _time(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _action_json(action: Action, timing: Timing) -> dict[str, Any]:
    entry: dict[str, Any] = {"seat": action.seat}
    if isinstance(action, Bid):
        entry["bid"] = action.amount
    else:
        entry["play"] = format_cards(action.cards)
    entry.update(time=_time(timing.at_ms), took_ms=timing.took_ms, timed_out=timing.timed_out)
    return entry


def _deal_json(record: DealRecord) -> dict[str, Any]:
    dealt = record.state.deal
    return {
        "deal_number": record.deal_number,
        "dealer": dealt.dealer,
        "seed": None if dealt.seed is None else dealt.seed.hex(),
        "commitment": None if dealt.commitment is None else dealt.commitment.hex(),
        "face_up": str(dealt.face_up),
        "face_up_seat": dealt.face_up_seat,
        "hands": [format_cards(hand) for hand in dealt.hands],
        "kitty": format_cards(dealt.kitty),
        "actions": [
            _action_json(action, timing) for action, timing in zip(record.state.history, record.timings, strict=True)
        ],
    }


def replay_json(
    *,
    table_id: str,
    variant: Variant,
    house_rules: HouseRules,
    round_number: int,
    deals: tuple[DealRecord, ...],
    result: dict[str, Any],
    balances: tuple[int, ...],
) -> str:
    """The JSON form of a finished round (``result`` as ``RoundResult`` fields, see ``docs/replay.md``)."""
    document = {
        "schema": SCHEMA,
        "table_id": table_id,
        "variant": variant.name,
        "house_rules": {"spring": house_rules.spring},
        "round": round_number,
        "deals": [_deal_json(record) for record in deals],
        "result": result,
        "balances": list(balances),
    }
    return json.dumps(document, indent=1)


@dataclasses.dataclass(frozen=True, slots=True)
class Verification:
    """What ``verify`` found: ``ok`` when ``problems`` is empty."""

    problems: tuple[str, ...]
    deals: int = 0
    actions: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


class _Invalid(Exception):
    pass


def _field(mapping: dict[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    value = mapping.get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise _Invalid(f"field {key!r} is missing or not {getattr(kind, '__name__', kind)}")
    return value


def _replay_deal(entry: dict[str, Any], variant: Variant, house_rules: HouseRules, problems: list[str]) -> RoundState:
    number = _field(entry, "deal_number", int)
    where = f"deal {number}"
    dealer = _field(entry, "dealer", int)
    hands = tuple(parse_cards(text, variant.decks) for text in _field(entry, "hands", list))
    kitty = parse_cards(_field(entry, "kitty", str), variant.decks)
    face_up = parse_cards(_field(entry, "face_up", str), variant.decks)
    seed_hex = entry.get("seed")
    seed = None if seed_hex is None else bytes.fromhex(seed_hex)
    if seed is None:
        problems.append(f"{where}: no seed, so the deal cannot be checked")
        recorded = Deal.arranged(variant, hands, kitty, dealer=dealer, face_up_seat=_field(entry, "face_up_seat", int))
    else:
        if entry.get("commitment") != commitment(seed).hex():
            problems.append(f"{where}: sha256(seed) is not the published commitment")
        recorded = deal(seed, variant, dealer)
        if recorded.hands != hands or tuple(sorted(recorded.kitty)) != tuple(sorted(kitty)):
            problems.append(f"{where}: the seed does not deal the recorded hands and kitty")
        if (recorded.face_up,) != face_up or recorded.face_up_seat != entry.get("face_up_seat"):
            problems.append(f"{where}: the seed does not give the recorded face-up card and seat")
    state = start_round(recorded, house_rules)
    previous_ms = 0
    for index, action_entry in enumerate(_field(entry, "actions", list)):
        seat = _field(action_entry, "seat", int)
        action: Action = (
            Bid(seat, _field(action_entry, "bid", int))
            if "bid" in action_entry
            else Play(seat, parse_cards(_field(action_entry, "play", str), variant.decks))
        )
        at = dt.datetime.fromisoformat(_field(action_entry, "time", str).replace("Z", "+00:00"))
        at_ms = int(at.timestamp() * 1000)
        if at_ms < previous_ms or _field(action_entry, "took_ms", int) < 0:
            problems.append(f"{where}, action {index + 1}: times go backwards")
        previous_ms = at_ms
        try:
            state = apply(state, action)[0]
        except IllegalAction as refusal:
            raise _Invalid(f"{where}, action {index + 1} ({action}) is illegal: {refusal}") from None
    return state


def _check_result(state: RoundState, result: dict[str, Any], problems: list[str]) -> None:
    outcome = result.get("outcome")
    forfeited_by = result.get("forfeited_by")
    if outcome == "abandoned" and forfeited_by is None:
        if result.get("stake") != 0 or any(result.get("changes") or ()):
            problems.append("an abandoned round settles nothing, yet a settlement is recorded")
        return
    if forfeited_by is not None:
        expected = forfeit(state, forfeited_by)
    elif state.phase in (Phase.FINISHED, Phase.THROWN_IN):
        expected = settle(state)
    else:
        problems.append(f"the last deal stops in the {state.phase.value} phase with no forfeit recorded")
        return
    if outcome in ("void", "abandoned"):
        wanted_outcome = outcome
    else:
        wanted_outcome = "landlord_won" if expected.landlord_won else "farmers_won"
    recomputed = {
        "outcome": wanted_outcome,
        "stake": expected.stake,
        "changes": list(expected.deltas),
        "doublings": expected.doublings,
        "spring": expected.spring,
    }
    recorded = {key: result.get(key) for key in recomputed}
    if recorded != recomputed:
        problems.append(f"the recorded result {recorded} is not the recomputed {recomputed}")
    if state.phase is Phase.FINISHED and result.get("winner") != state.winner:
        problems.append(f"the recorded winner {result.get('winner')} is not seat {state.winner}")


def verify(text: str) -> Verification:
    """Check a replay's JSON (see the module docstring); never raises on bad input."""
    problems: list[str] = []
    deals = actions = 0
    try:
        document = json.loads(text)
        if not isinstance(document, dict) or document.get("schema") != SCHEMA:
            raise _Invalid(f"not a {SCHEMA} document")
        variant = VARIANTS.get(_field(document, "variant", str))
        if variant is None:
            raise _Invalid("unknown variant")
        house_rules = HouseRules(spring=bool(_field(document, "house_rules", dict).get("spring", False)))
        entries = _field(document, "deals", list)
        if not entries:
            raise _Invalid("no deals")
        states = [_replay_deal(entry, variant, house_rules, problems) for entry in entries]
        deals = len(states)
        actions = sum(len(state.history) for state in states)
        dealers = {entry.get("dealer") for entry in entries}
        if len(dealers) != 1:
            problems.append("the deals of one round have different dealers")
        for number, state in enumerate(states[:-1], start=1):
            if state.phase is not Phase.THROWN_IN:
                problems.append(f"deal {number} was not thrown in, yet another deal followed")
        _check_result(states[-1], _field(document, "result", dict), problems)
    except (_Invalid, NotationError, ValueError, KeyError, TypeError, AttributeError) as error:
        problems.append(str(error))
    return Verification(tuple(problems), deals, actions)
