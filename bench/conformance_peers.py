"""The divergence matrix: the conformance kit's rules vectors run on RLCard, DouZero and OpenSpiel.

Each peer is wrapped in an engine of the kit's adapter interface (``answer(family, query)``,
docs/conformance.md) built on its move generator alone, through ``peers.py``:

* ``legal_moves``: the peer's legal plays for the hand and the play to beat;
* ``classify``: whether the cards are a combination, i.e. a legal lead of a hand holding just
  them (the peers name no combination type the kit can compare: validity only);
* ``beats``: whether ``a`` is a legal answer of a hand holding ``a`` to ``b`` (and the reverse);
* ``perft``: counted by the runner from the peer's ``legal_moves``.

Every peer plays three players only, deals by its own shuffle and settles by its own rules (or
not at all), so 4p vectors and the deals, auction, redeals and settlement families are
unsupported: the matrix states that, it does not test it. A query a peer's API refuses (a play
outside its action space) is unsupported too. Run ``python bench/conformance_peers.py`` (peers
installed: ``rlcard`` in the test extra, ``open-spiel`` in the bench extra, ``pip install
--no-deps douzero``); it prints the matrix of docs/conformance.md and, per peer and family, the
first cases where the peer and the kit differ.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import douzero_legal_moves, normalize, openspiel_legal_moves, rlcard_legal_moves

from dizhu.conformance import FAMILIES, Unsupported, find_kit, run_rules

LegalMoves = Callable[[str, "str | None"], set[str]]


class PeerEngine:
    """A peer's move generator as a conformance engine (see the module's docstring)."""

    def __init__(self, name: str, legal: LegalMoves) -> None:
        self.name = name
        self._legal = legal

    def _moves(self, hand: str, to_beat: str | None) -> set[str]:
        try:
            return {normalize(move) for move in self._legal(hand, to_beat)}
        except (ValueError, KeyError, IndexError) as refused:  # outside the peer's action space or limits
            raise Unsupported(f"{self.name}: {refused}") from None

    def answer(self, family: str, query: Mapping[str, Any]) -> dict[str, Any]:
        try:
            return self._answer(family, query)
        except ValueError as refused:  # cards peers.py cannot hand a one-deck peer (five 3s)
            raise Unsupported(f"{self.name}: {refused}") from None

    def _answer(self, family: str, query: Mapping[str, Any]) -> dict[str, Any]:
        if query["variant"] != "3p":
            raise Unsupported(f"{self.name} plays three players only")
        if family == "legal_moves":
            return {
                "moves": sorted(self._moves(query["hand"], query["to_beat"])),
                "can_pass": query["to_beat"] is not None,
            }
        if family == "classify":
            cards = normalize(query["cards"]) if query["cards"] else ""
            return {"valid": bool(cards) and cards in self._moves(cards, None)}
        if family == "beats":
            a, b = normalize(query["a"]), normalize(query["b"])
            return {"a_beats_b": a in self._moves(a, b), "b_beats_a": b in self._moves(b, a)}
        raise Unsupported(f"{self.name}: no {family} through its move generator")


PEERS: dict[str, LegalMoves] = {
    "rlcard": rlcard_legal_moves,
    "douzero": douzero_legal_moves,
    "openspiel": openspiel_legal_moves,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer", action="append", choices=sorted(PEERS), help="only this peer (repeatable)")
    parser.add_argument("--examples", type=int, default=3, help="differing cases shown per peer and family")
    args = parser.parse_args()
    kit = find_kit()
    rows: list[str] = []
    for name in args.peer or list(PEERS):
        started = time.perf_counter()
        try:
            PEERS[name]("3", None)
        except RuntimeError as missing:  # the peer is not installed: peers.py says how to install it
            print(f"{name}: {missing}", file=sys.stderr)
            continue
        # A peer's move generator gives a set of moves, in no order of dizhu's: compared as sets.
        report = run_rules(kit, PeerEngine(name, PEERS[name]), unordered=True)
        cells = []
        for family in FAMILIES:
            results = [result for result in report.results if result.group == family]
            run = [result for result in results if not result.detail.startswith("unsupported")]
            passed = sum(result.status == "passed" for result in run)
            cells.append(f"{passed}/{len(run)}" if run else "—")
            differing = [result for result in run if result.status != "passed"][: args.examples]
            for result in differing:
                print(f"{name} {family} {result.case_id}: {result.detail}")
        rows.append(f"| {name} | " + " | ".join(cells) + f" | {time.perf_counter() - started:.1f} s |")
    print()
    print("| peer | " + " | ".join(FAMILIES) + " | time |")
    print("|---|" + "---|" * (len(FAMILIES) + 1))
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
