"""Rules engines as the conformance kit sees them: one small adapter interface (docs/conformance.md).

A rules vector is a *query* of one family and the answer an exact engine gives. An engine is
anything that answers queries: :class:`RulesEngine` is the whole interface, one method taking
the family's name and the query (JSON data, as in the kit's files) and returning the answer
(JSON data, shaped as the vector's ``expect``). It is the same for every engine:

* ``python``: the rules core of this package (:class:`CoreEngine` over ``dizhu.rules``);
* ``native``: the same core with the native backend of ``dizhu.engine`` selected, when it is built;
* ``MODULE:ATTRIBUTE``: a third-party engine in Python, an object (or a class or function
  making one) with an ``answer(family, query)`` method;
* ``cmd:COMMAND``: a third-party engine in any language, run as a child process speaking one
  JSON object per line on standard input and output (:class:`StdioEngine`).

An engine that does not play a family (another rule set, no auction, ...) raises
:class:`Unsupported` (over stdio: answers ``{"unsupported": "why"}``); the runner reports such
cases apart from failures.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import shlex
import subprocess
from collections.abc import Mapping, Sequence
from typing import IO, Any, Protocol, cast, runtime_checkable

from dizhu.rules import (
    VARIANTS,
    Bid,
    Deal,
    HouseRules,
    IllegalAction,
    Phase,
    Variant,
    apply,
    beats,
    classify,
    deal,
    doubles_stake,
    explain,
    format_ranks,
    legal_moves,
    make_deck,
    new_match,
    parse_ranks,
    record_round,
    settle,
    start_round,
    try_classify,
)

__all__ = [
    "FAMILIES",
    "CoreEngine",
    "EngineError",
    "NativeEngineMissing",
    "RulesEngine",
    "StdioEngine",
    "Unsupported",
    "load_engine",
]

#: The vector families, one file of ``conformance/rules/`` each, in the order they run.
FAMILIES = ("deals", "classify", "beats", "legal_moves", "perft", "auction", "redeals", "settlement")

Answer = dict[str, Any]


class Unsupported(Exception):
    """Raised by an engine for a query of a family (or a variant) it does not play; the message says why."""


class EngineError(Exception):
    """Raised when an engine cannot be loaded or answers something that is no answer."""


class NativeEngineMissing(EngineError):
    """Raised by ``load_engine("native")`` when the native engine is not built."""


@runtime_checkable
class RulesEngine(Protocol):
    """What the rules runner asks of an engine: answers to queries, family by family."""

    #: A short name for reports: ``python``, ``native``, ``rlcard``, ...
    name: str

    def answer(self, family: str, query: Mapping[str, Any]) -> Answer:
        """The answer to ``query`` of ``family`` (one of ``FAMILIES``), shaped as the vectors' ``expect``.

        Raises ``Unsupported`` for a family or variant the engine does not play.
        """
        ...


def _variant(query: Mapping[str, Any]) -> Variant:
    return VARIANTS[query["variant"]]


class CoreEngine:
    """The rules core of ``dizhu.rules`` as an engine: the reference every vector was generated from.

    ``backend`` (``"python"`` or ``"native"``): the engine of ``dizhu.engine`` that ``dizhu.rules``
    computes with while this engine answers; None leaves it as it is.
    """

    def __init__(self, name: str = "python", backend: str | None = None) -> None:
        self.name = name
        self._backend = backend

    def answer(self, family: str, query: Mapping[str, Any]) -> Answer:
        handler = getattr(self, f"_{family}", None)
        if handler is None:
            raise Unsupported(f"no such family: {family}")
        if self._backend is None:
            return cast("Answer", handler(_variant(query), query))
        with _engine_facade().using(self._backend):
            return cast("Answer", handler(_variant(query), query))

    def _deals(self, variant: Variant, query: Mapping[str, Any]) -> Answer:
        dealt = deal(bytes.fromhex(query["seed"]), variant, query["dealer"])
        assert dealt.commitment is not None
        return {
            "hands": [sorted(card.id for card in hand) for hand in dealt.hands],
            "kitty": [card.id for card in dealt.kitty],
            "face_up": dealt.face_up.id,
            "face_up_seat": dealt.face_up_seat,
            "commitment": dealt.commitment.hex(),
        }

    def _classify(self, variant: Variant, query: Mapping[str, Any]) -> Answer:
        ranks = parse_ranks(query["cards"])
        reading = try_classify(ranks, variant)
        if reading is None:
            return {"valid": False, "why": explain(ranks, variant)}
        return {
            "valid": True,
            "kind": reading.kind.name.lower(),
            "main_rank": reading.main_rank.symbol,
            "size": reading.size,
        }

    def _beats(self, variant: Variant, query: Mapping[str, Any]) -> Answer:
        a = classify(parse_ranks(query["a"]), variant)
        b = classify(parse_ranks(query["b"]), variant)
        return {"a_beats_b": beats(a, b), "b_beats_a": beats(b, a)}

    def _legal_moves(self, variant: Variant, query: Mapping[str, Any]) -> Answer:
        to_beat = None if query["to_beat"] is None else classify(parse_ranks(query["to_beat"]), variant)
        moves = legal_moves(parse_ranks(query["hand"]), to_beat, variant)
        return {"moves": [format_ranks(move.ranks) for move in moves], "can_pass": to_beat is not None}

    def _perft(self, variant: Variant, query: Mapping[str, Any]) -> Answer:
        raise Unsupported("counted by the runner from legal_moves")

    def _auction(self, variant: Variant, query: Mapping[str, Any]) -> Answer:
        state = start_round(_deal_with_first_bidder(variant, query["first_bidder"]))
        steps: list[str] = []
        for seat, amount in query["bids"]:
            try:
                state = apply(state, Bid(seat, amount)).state
            except IllegalAction as refused:
                steps.append(refused.reason.value)
            else:
                steps.append("ACCEPTED")
        if state.phase is Phase.THROWN_IN:
            outcome: Answer = {"thrown_in": True}
        elif state.phase is Phase.PLAY:
            outcome = {"landlord": state.landlord, "bid": state.bid}
        else:
            outcome = {"turn": state.turn, "highest_bid": state.bid}
        return {"steps": steps, "outcome": outcome}

    def _redeals(self, variant: Variant, query: Mapping[str, Any]) -> Answer:
        match = new_match(variant, 0, redeal_cap=query["redeal_cap"])
        thrown = start_round(_deal_with_first_bidder(variant, 0))
        for seat in range(variant.players):
            thrown = apply(thrown, Bid(seat, 0)).state
        outcomes: list[str] = []
        for _ in range(query["throw_ins"]):
            recorded = record_round(match, thrown)
            match = recorded.match
            outcomes.append("redeal" if recorded.redeal else "void")
            if not recorded.redeal:
                break
        return {"outcomes": outcomes, "rounds_played": match.rounds_played}

    def _settlement(self, variant: Variant, query: Mapping[str, Any]) -> Answer:
        landlord, winner = query["landlord"], query["winner"]
        plays_made = [0] * variant.players
        doublings = 0
        for seat, cards in query["plays"]:
            plays_made[seat] += 1
            doublings += doubles_stake(classify(parse_ranks(cards), variant), variant)
        state = start_round(_deal_with_first_bidder(variant, landlord), HouseRules(spring=query["spring_rule"]))
        finished = state._replace(
            phase=Phase.FINISHED,
            turn=winner,
            bid=query["bid"],
            bidder=landlord,
            landlord=landlord,
            doublings=doublings,
            plays_made=tuple(plays_made),
        )
        settled = settle(finished)
        return {
            "stake": settled.stake,
            "deltas": list(settled.deltas),
            "doublings": settled.doublings,
            "spring": settled.spring,
            "landlord_won": settled.landlord_won,
        }


def _deal_with_first_bidder(variant: Variant, first_bidder: int) -> Deal:
    """Any deal whose face-up card went to ``first_bidder``: the auction does not look at the cards."""
    deck = make_deck(variant.decks)
    size = variant.hand_size
    hands = [deck[seat * size : (seat + 1) * size] for seat in range(variant.players)]
    kitty = deck[variant.players * size :]
    return Deal.arranged(variant, hands, kitty, dealer=(first_bidder - 1) % variant.players)


class StdioEngine:
    """An engine in another process: one JSON line ``{"family": ..., "query": ...}`` in, one answer line out.

    The answer is the ``expect`` object, ``{"unsupported": "why"}`` for a query the engine does
    not play, or ``{"error": "why"}``.
    """

    def __init__(self, command: Sequence[str], name: str | None = None) -> None:
        self.name = name or command[0]
        try:
            self._process = subprocess.Popen(  # noqa: S603 - the user's own engine, as named on the command line
                list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
            )
        except OSError as error:
            raise EngineError(f"cannot start {shlex.join(command)}: {error.strerror or error}") from None

    def answer(self, family: str, query: Mapping[str, Any]) -> Answer:
        stdin, stdout = cast("IO[str]", self._process.stdin), cast("IO[str]", self._process.stdout)
        try:
            stdin.write(json.dumps({"family": family, "query": query}) + "\n")
            stdin.flush()
            line = stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            raise EngineError(f"{self.name} {self._how_it_ended()} without answering")
        try:
            answer = json.loads(line)
        except json.JSONDecodeError:
            raise EngineError(f"{self.name} answered no JSON: {line[:200]!r}") from None
        if not isinstance(answer, dict):
            raise EngineError(f"{self.name} answered no JSON object: {line[:200]!r}")
        if "unsupported" in answer:
            raise Unsupported(str(answer["unsupported"]))
        if "error" in answer:
            raise EngineError(f"{self.name}: {answer['error']}")
        return answer

    def _how_it_ended(self) -> str:
        """Its exit status, once its output closed: waited for a moment, since a child closes its
        output just before it exits (asked at once, it would often still be running)."""
        try:
            return f"exited (status {self._process.wait(timeout=5)})"
        except subprocess.TimeoutExpired:
            return "closed its output"

    def close(self) -> None:
        """End the child process (its standard input closes first, so it may finish by itself)."""
        if self._process.stdin is not None:
            # An engine that exited before reading what was last written leaves nothing to flush to.
            with contextlib.suppress(BrokenPipeError):
                self._process.stdin.close()
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()


def _engine_facade() -> Any:
    """``dizhu.engine``, which says and chooses the engine ``dizhu.rules`` computes with; None without it."""
    try:
        return importlib.import_module("dizhu.engine")
    except ImportError:
        return None


def _python_engine() -> CoreEngine:
    """The pure-Python rules core, whichever engine ``dizhu.rules`` would use by default."""
    return CoreEngine("python", backend="python" if _engine_facade() is not None else None)


def _native_engine() -> CoreEngine:
    """The rules core on the native engine of ``dizhu.engine``; ``NativeEngineMissing`` if it is not built."""
    facade = _engine_facade()
    if facade is None:
        raise NativeEngineMissing("the native engine is not built: this installation has no dizhu.engine")
    if "native" not in facade.available():
        raise NativeEngineMissing(f"the native engine is not built: {facade.native_error()}")
    return CoreEngine("native", backend="native")


def load_engine(spec: str) -> RulesEngine:
    """The engine ``spec`` names: ``python``, ``native``, ``cmd:COMMAND`` or ``MODULE:ATTRIBUTE``."""
    if spec == "python":
        return _python_engine()
    if spec == "native":
        return _native_engine()
    if spec.startswith("cmd:"):
        command = shlex.split(spec[4:])
        if not command:
            raise EngineError("cmd: needs a command")
        return StdioEngine(command)
    module_name, _, attribute = spec.partition(":")
    if not attribute:
        raise EngineError(f"{spec!r}: an engine is python, native, cmd:COMMAND or MODULE:ATTRIBUTE")
    try:
        found: Any = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise EngineError(f"cannot load {spec}: {error}") from None
    engine = found() if isinstance(found, type) or not hasattr(found, "answer") else found
    if not isinstance(engine, RulesEngine):
        raise EngineError(f"{spec} has no name and answer(family, query)")
    return engine
