"""Run the kit's rules vectors against an engine and compare its answers (docs/conformance.md).

Answers are compared as the rules compare things: hands and kitties as sets; plays as
multisets of ranks (``"4 3"`` is ``"3 4"``); a classification without a ``kind``
(an engine that only tells valid from invalid) by validity alone; every other field exactly.

Perft counts are counted here, from the engine's ``legal_moves`` answers, unless the engine
answers ``perft`` queries itself: a line is a sequence of actions of the play phase (a legal
play, or a pass when there is a play to beat); a trick closes after ``players - 1`` passes
in a row and its last player leads; a seat that plays its last card ends the line
(docs/rules.md section 5).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dizhu.conformance.engines import FAMILIES, EngineError, RulesEngine, Unsupported
from dizhu.conformance.kit import Kit, Report
from dizhu.rules import RANKS, VARIANTS

__all__ = ["count_lines", "run_rules"]

_RANK_ORDER = {rank.symbol: rank.value for rank in RANKS}


def _ranks(cards: str) -> str:
    """A play or hand in the kit's notation: its rank symbols, low to high, single-spaced."""
    return " ".join(sorted(cards.split(), key=_RANK_ORDER.__getitem__))


def _compare_sets(expected: Any, answered: Any) -> bool:
    return sorted(expected) == sorted(answered)


def _deals(expected: Mapping[str, Any], answered: Mapping[str, Any]) -> str | None:
    for field in ("face_up", "face_up_seat", "commitment"):
        if answered.get(field) != expected[field]:
            return f"{field}: expected {expected[field]!r}, got {answered.get(field)!r}"
    hands = answered.get("hands") or []
    if len(hands) != len(expected["hands"]) or not all(map(_compare_sets, expected["hands"], hands)):
        return "hands differ"
    if not _compare_sets(expected["kitty"], answered.get("kitty") or []):
        return "kitty differs"
    return None


def _classify(expected: Mapping[str, Any], answered: Mapping[str, Any]) -> str | None:
    if answered.get("valid") != expected["valid"]:
        return f"expected {'a combination' if expected['valid'] else 'no combination'}, got the opposite"
    if expected["valid"] and "kind" in answered:
        got = (answered.get("kind"), answered.get("main_rank"), answered.get("size"))
        wanted = (expected["kind"], expected["main_rank"], expected["size"])
        if got != wanted:
            return f"expected {wanted}, got {got}"
    return None


def _legal_move_set(expected: Mapping[str, Any], answered: Mapping[str, Any]) -> str | None:
    wanted = sorted(map(_ranks, expected["moves"]))
    got = sorted(map(_ranks, answered.get("moves") or []))
    if got != wanted:
        missing = sorted(set(wanted) - set(got))[:5]
        extra = sorted(set(got) - set(wanted))[:5]
        return f"{len(got)} moves, expected {len(wanted)}; missing {missing}, extra {extra}"
    if answered.get("can_pass") != expected["can_pass"]:
        return f"can_pass: expected {expected['can_pass']}"
    return None


def _legal_move_list(expected: Mapping[str, Any], answered: Mapping[str, Any]) -> str | None:
    """The moves as a set first (the clearer failure), then their order."""
    failure = _legal_move_set(expected, answered)
    if failure is not None:
        return failure
    wanted = [_ranks(move) for move in expected["moves"]]
    got = [_ranks(move) for move in answered["moves"]]
    index = next((i for i, (want, have) in enumerate(zip(wanted, got, strict=True)) if want != have), None)
    if index is None:
        return None
    return f"the right moves in another order: move {index} is {got[index]!r}, expected {wanted[index]!r}"


def _exact(expected: Mapping[str, Any], answered: Mapping[str, Any]) -> str | None:
    return None if dict(answered) == dict(expected) else f"expected {dict(expected)}, got {dict(answered)}"


_COMPARE: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any]], str | None]] = {
    "deals": _deals,
    "classify": _classify,
    "beats": _exact,
    "legal_moves": _legal_move_set,
    "perft": _exact,
    "auction": _exact,
    "redeals": _exact,
    "settlement": _exact,
}


def count_lines(engine: RulesEngine, variant_name: str, position: Mapping[str, Any], depth: int) -> list[int]:
    """How many lines of 1, 2, ... ``depth`` actions the play phase allows from ``position``."""
    players = VARIANTS[variant_name].players
    known: dict[tuple[str, str | None], list[str]] = {}

    def moves(hand: tuple[str, ...], to_beat: str | None) -> list[str]:
        key = (" ".join(hand), to_beat)
        found = known.get(key)
        if found is None:
            query = {"variant": variant_name, "hand": key[0], "to_beat": to_beat}
            found = known[key] = [_ranks(move) for move in engine.answer("legal_moves", query)["moves"]]
        return found

    counts = [0] * depth

    def walk(
        hands: list[tuple[str, ...]], turn: int, to_beat: str | None, last: int | None, passes: int, ply: int
    ) -> None:
        hand = hands[turn]
        following = moves(hand, to_beat)
        counts[ply] += len(following) + (to_beat is not None)
        if ply + 1 == depth:
            return
        for play in following:
            left = list(hand)
            for rank in play.split():
                left.remove(rank)
            if left:
                after = list(hands)
                after[turn] = tuple(left)
                walk(after, (turn + 1) % players, play, turn, 0, ply + 1)
        if to_beat is not None:
            assert last is not None
            if passes + 1 == players - 1:
                walk(hands, last, None, None, 0, ply + 1)
            else:
                walk(hands, (turn + 1) % players, to_beat, last, passes + 1, ply + 1)

    start = [tuple(_ranks(hand).split()) for hand in position["hands"]]
    walk(start, position["turn"], position["to_beat"], position["last_player"], position["passes"], 0)
    return counts


def _answer(engine: RulesEngine, family: str, case: Mapping[str, Any]) -> dict[str, Any]:
    query = case["query"]
    if family != "perft":
        return engine.answer(family, query)
    try:
        return engine.answer(family, query)
    except Unsupported:
        return {"counts": count_lines(engine, query["variant"], query["position"], query["depth"])}


def run_rules(
    kit: Kit,
    engine: RulesEngine,
    *,
    families: tuple[str, ...] = FAMILIES,
    implementation: str | None = None,
    unordered: bool = False,
) -> Report:
    """Every vector of ``families`` asked of ``engine``, with the known-failing list of ``implementation``
    (default: the engine's name); ``unordered`` compares legal-move lists as sets even where the kit
    says their order is normative."""
    name = implementation or engine.name
    report = Report("rules", name, kit.version)
    known = kit.known_failing(name)
    for family in families:
        vectors = kit.load(f"rules/{family}.json")
        compare = _COMPARE[family]
        if family == "legal_moves":
            ordered = vectors.get("ordered", False) and not unordered
            compare = _legal_move_list if ordered else _legal_move_set
            report.comparison["legal_moves"] = "ordered" if ordered else "unordered"
        for case in vectors["cases"]:
            try:
                failure = compare(case["expect"], _answer(engine, family, case))
            except Unsupported as why:
                failure = f"unsupported: {why}"
            except EngineError as error:
                failure = f"engine error: {error}"
            except Exception as error:  # a Python engine's own bug is its case's failure, not the run's end
                failure = f"engine raised {type(error).__name__}: {error}"
            report.add(case["id"], family, failure, known)
    return report
