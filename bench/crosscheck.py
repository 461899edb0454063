"""Cross-check dizhu's 3-player legal moves against RLCard's, and explain every difference.

For random hands (1 to 20 cards) and a play to beat (none, or a legal play of a disjoint
opponent hand), compare the sets of legal plays as rank multisets. Every play one engine
allows and the other does not must be explained by a line of the rules (``docs/rules.md``);
``python bench/crosscheck.py`` prints the report that ``docs/cross-check.md`` quotes.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import rlcard_legal_moves

from dizhu.rules import THREE_PLAYER, format_ranks, legal_moves, make_deck, parse_ranks

__all__ = ["EXPLANATIONS", "Report", "cross_check", "explain"]

#: Why RLCard allows a play the rules refuse: the rule line, quoted from docs/rules.md.
EXPLANATIONS = {
    "quad_with_a_pair_as_two_singles": (
        "§6 row 13 (quad + two): the kickers are of two different ranks, so four of a rank plus a pair "
        "(e.g. 3 3 3 3 A A) is no combination; RLCard reads it as four with two singles."
    ),
    "airplane_single_wings_of_one_rank": (
        "§6 row 9 (airplane + single wings): the kickers are k different ranks; RLCard lets single "
        "wings repeat a rank (a pair or a trio among the wings, e.g. 5 5 7 7 7 8 8 8)."
    ),
}


def explain(play: str) -> str | None:
    """The key of ``EXPLANATIONS`` that accounts for RLCard allowing ``play``, or None."""
    ranks = parse_ranks(play)
    counts = Counter(ranks)
    shape = sorted(counts.values())
    if len(ranks) == 6 and shape == [2, 4]:
        return "quad_with_a_pair_as_two_singles"
    if len(ranks) % 4 == 0 and len(ranks) >= 8:
        links = len(ranks) // 4
        for top in range(links - 1, 12):
            chain = range(top - links + 1, top + 1)
            if all(counts.get(rank, 0) >= 3 for rank in chain):
                wings = Counter(ranks)
                for rank in chain:
                    wings[rank] -= 3
                wing_ranks = [rank for rank, count in wings.items() for _ in range(count)]
                if len(set(wing_ranks)) < links:
                    return "airplane_single_wings_of_one_rank"
    return None


@dataclass
class Report:
    positions: int = 0
    plays_compared: int = 0
    #: Plays RLCard allows and the rules refuse, by explanation key (None: unexplained).
    rlcard_only: Counter[str | None] = field(default_factory=Counter)
    examples: dict[str | None, str] = field(default_factory=dict)
    #: Plays the rules allow and RLCard refuses.
    ours_only: list[tuple[str, str | None, str]] = field(default_factory=list)


def _random_position(rng: random.Random) -> tuple[str, str | None]:
    deck = list(make_deck(1))
    rng.shuffle(deck)
    size = rng.randint(1, 20)
    hand = deck[:size]
    if rng.random() < 0.5:
        return format_ranks(card.rank for card in hand), None
    opponent = deck[size : size + 20]
    plays = legal_moves(opponent, None, THREE_PLAYER)
    return format_ranks(card.rank for card in hand), format_ranks(rng.choice(plays).ranks)


def cross_check(positions: int, seed: int) -> Report:
    """Compare legal-move sets on ``positions`` random positions."""
    rng = random.Random(seed)
    report = Report()
    for _ in range(positions):
        hand, to_beat = _random_position(rng)
        beat = None if to_beat is None else legal_moves(parse_ranks(to_beat), None, THREE_PLAYER)
        to_beat_play = None if beat is None else next(p for p in beat if format_ranks(p.ranks) == to_beat)
        ours = {format_ranks(play.ranks) for play in legal_moves(parse_ranks(hand), to_beat_play, THREE_PLAYER)}
        theirs = rlcard_legal_moves(hand, to_beat)
        report.positions += 1
        report.plays_compared += len(ours | theirs)
        for play in sorted(theirs - ours):
            key = explain(play)
            report.rlcard_only[key] += 1
            report.examples.setdefault(key, f"hand [{hand}], to beat [{to_beat or '-'}]: {play}")
        report.ours_only.extend((hand, to_beat, play) for play in sorted(ours - theirs))
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--positions", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    report = cross_check(args.positions, args.seed)
    print(f"positions: {report.positions}, distinct plays compared: {report.plays_compared}")
    print(f"plays only dizhu allows: {len(report.ours_only)}")
    for hand, to_beat, play in report.ours_only[:10]:
        print(f"  hand [{hand}] to beat [{to_beat}]: {play}")
    print("plays only RLCard allows, by the rule that refuses them:")
    for key, count in report.rlcard_only.most_common():
        print(f"  {count:6d}  {key}: {EXPLANATIONS.get(key or '', 'UNEXPLAINED')}")
        print(f"          e.g. {report.examples[key]}")


if __name__ == "__main__":
    main()
