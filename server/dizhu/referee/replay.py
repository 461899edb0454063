"""Round records: what a replay holds, its JSON form, and the verifier.

A replay is everything about one finished round: every deal (thrown-in ones first) with
its seed, commitment and hands as dealt, every accepted action with the server's
timestamp and the time it took, and the settlement. Its JSON form, schema
``dizhu.replay/v1`` (``docs/replay.md``), writes cards in the rules core's notation.

``verify`` checks a replay from its JSON alone: each seed against its commitment, each
deal recomputed from its seed, every action replayed through the rules core, every action
the clock made checked against the table's timeout policy, and the recorded result
recomputed; given the referee's public keys, it also checks the record's signature
(:mod:`dizhu.referee.signing`). What it can and cannot detect is in ``docs/replay.md``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Iterable
from typing import Any, NamedTuple

import orjson

from dizhu.referee.signing import Authenticity, PublicKey, SignatureCheck, check_signature
from dizhu.referee.timeouts import auto_action
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
    Settlement,
    Variant,
    abandon,
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
    timeout_policy: str | None,
) -> str:
    """The JSON form of a finished round (``result`` as ``RoundResult`` fields, see ``docs/replay.md``).

    ``timeout_policy``: the table's (``"auto_play"`` or ``"forfeit"``), None without a clock.
    """
    document = {
        "schema": SCHEMA,
        "table_id": table_id,
        "variant": variant.name,
        "house_rules": {"spring": house_rules.spring},
        "timeout_policy": timeout_policy,
        "round": round_number,
        "deals": [_deal_json(record) for record in deals],
        "result": result,
        "balances": list(balances),
    }
    # orjson: the standard library's indented output cost about 0.3 ms per round, on the move that ends it.
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode()


_NOT_CHECKED = SignatureCheck(Authenticity.NOT_CHECKED)


@dataclasses.dataclass(frozen=True, slots=True)
class Verification:
    """What ``verify`` found: ``ok`` when ``problems`` is empty.

    ``readable`` is False when the text is no ``dizhu.replay/v1`` document at all (not JSON,
    another schema, a missing or mistyped field, bad card notation): nothing was checked.
    Otherwise every problem is a disagreement of the record with itself (tampering, or a
    bug), or, when keys were given, a signature that does not make it the referee's.
    """

    problems: tuple[str, ...]
    deals: int = 0
    actions: int = 0
    readable: bool = True
    #: What the signature check found (``NOT_CHECKED`` without keys).
    signature: SignatureCheck = _NOT_CHECKED

    @property
    def ok(self) -> bool:
        return not self.problems


class _NotAReplay(Exception):
    """The text is no replay document: it cannot be checked."""


class _Stopped(Exception):
    """A check found a problem that the following checks cannot get past (an illegal action)."""


_POLICIES = ("auto_play", "forfeit", None)


def _field(mapping: dict[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    value = mapping.get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise _NotAReplay(f"field {key!r} is missing or not {getattr(kind, '__name__', kind)}")
    return value


def _timeout_problem(state: RoundState, action: Action, policy: str | None) -> str | None:
    """Why ``action`` cannot be what the clock did for the seat to act, or None if it can be.

    In the auction the clock only ever passes; in the play only auto-play acts (a pass when
    following, the lowest card when leading), since a forfeit ends the round instead.
    """
    if policy is None:
        return "the table has no clock, yet the action is marked timed out"
    if state.phase is Phase.PLAY and policy == "forfeit":
        return "under the forfeit policy the clock never plays: a timeout in the play ends the round"
    clock = auto_action(state)
    same = (
        action == clock
        if isinstance(action, Bid)
        else isinstance(clock, Play) and sorted(action.cards) == sorted(clock.cards)
    )
    return None if same else f"marked timed out, but the clock would have made {clock}"


def _replay_deal(
    entry: dict[str, Any], variant: Variant, house_rules: HouseRules, policy: str | None, problems: list[str]
) -> RoundState:
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
        if _field(action_entry, "timed_out", bool):
            problem = _timeout_problem(state, action, policy)
            if problem is not None:
                problems.append(f"{where}, action {index + 1} ({action}): {problem}")
        try:
            state = apply(state, action)[0]
        except IllegalAction as refusal:
            raise _Stopped(f"{where}, action {index + 1} ({action}) is illegal: {refusal}") from None
    return state


def _expected_result(state: RoundState, forfeited_by: int | None) -> tuple[str, Settlement]:
    """The outcome and settlement of a round whose last deal stopped at ``state``.

    A deal played out settles; a deal thrown in up to the cap makes the round void; a deal
    stopped before its end was forfeited (``forfeited_by``; in the auction that abandons the
    round) or abandoned (its table closed).
    """
    if forfeited_by is not None:
        settlement = forfeit(state, forfeited_by)
        if settlement.landlord_won is None:
            return "abandoned", settlement
    elif state.phase is Phase.THROWN_IN:
        return "void", settle(state)
    elif state.phase is Phase.FINISHED:
        settlement = settle(state)
    else:
        return "abandoned", abandon(state)
    return ("landlord_won" if settlement.landlord_won else "farmers_won"), settlement


_FORFEIT_CAUSES = ("left", "timeout")


def _check_result(state: RoundState, result: dict[str, Any], policy: str | None, problems: list[str]) -> None:
    forfeited_by = result.get("forfeited_by")
    if forfeited_by is not None and not isinstance(forfeited_by, int):
        raise _NotAReplay("field 'forfeited_by' is not a seat")
    # Absent from records written before it existed; then nothing is known of the cause.
    cause = result.get("forfeit_cause")
    if cause is not None and (forfeited_by is None or cause not in _FORFEIT_CAUSES):
        problems.append(f"the forfeit cause {cause!r} does not go with forfeited_by {forfeited_by}")
    elif cause == "timeout" and (policy != "forfeit" or state.phase is not Phase.PLAY):
        problems.append("a forfeit on time needs the forfeit policy and a round in its play")
    wanted_outcome, expected = _expected_result(state, forfeited_by)
    recomputed = {
        "outcome": wanted_outcome,
        "landlord": expected.landlord,
        "bid": state.bid if expected.landlord is not None else 0,
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


_SIGNATURE_PROBLEMS = {
    Authenticity.UNSIGNED: "the record carries no signature, so it cannot be the referee's",
    Authenticity.UNKNOWN_KEY: "signed by key {key_id}, which is none of the keys given",
    Authenticity.INVALID: "the signature by key {key_id} does not match the record: it was altered after signing",
}


def verify(text: str, keys: Iterable[PublicKey] | None = None) -> Verification:
    """Check a replay's JSON (see the module docstring); never raises on bad input.

    ``keys``: the referee's public keys; then a record is verified only if one of them signed
    it exactly as it is. None: the signature is not checked.
    """
    problems: list[str] = []
    deals = actions = 0
    signature = _NOT_CHECKED
    try:
        try:
            document = json.loads(text)
        except ValueError as error:
            raise _NotAReplay(f"not JSON: {error}") from None
        if not isinstance(document, dict) or document.get("schema") != SCHEMA:
            raise _NotAReplay(f"not a {SCHEMA} document")
        signature = check_signature(document, None if keys is None else tuple(keys))
        if signature.authenticity in _SIGNATURE_PROBLEMS:
            problems.append(_SIGNATURE_PROBLEMS[signature.authenticity].format(key_id=signature.key_id))
        variant = VARIANTS.get(_field(document, "variant", str))
        if variant is None:
            raise _NotAReplay("unknown variant")
        house_rules = HouseRules(spring=bool(_field(document, "house_rules", dict).get("spring", False)))
        # A record from before the field: what holds under every policy is what auto-play
        # checks (the clock passes in the auction; it plays only under auto-play).
        policy = document.get("timeout_policy", "auto_play")
        if policy not in _POLICIES:
            raise _NotAReplay(f"unknown timeout policy {policy!r}")
        entries = _field(document, "deals", list)
        if not entries:
            raise _NotAReplay("no deals")
        states = [_replay_deal(entry, variant, house_rules, policy, problems) for entry in entries]
        deals = len(states)
        actions = sum(len(state.history) for state in states)
        dealers = {entry.get("dealer") for entry in entries}
        if len(dealers) != 1:
            problems.append("the deals of one round have different dealers")
        for number, state in enumerate(states[:-1], start=1):
            if state.phase is not Phase.THROWN_IN:
                problems.append(f"deal {number} was not thrown in, yet another deal followed")
        _check_result(states[-1], _field(document, "result", dict), policy, problems)
    except _Stopped as error:
        problems.append(str(error))
    except (_NotAReplay, NotationError, ValueError, KeyError, TypeError, AttributeError) as error:
        return Verification((f"not a replay: {error}",), deals, actions, readable=False)
    return Verification(tuple(problems), deals, actions, signature=signature)
