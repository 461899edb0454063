"""The published action tables: one ``Discrete(N)`` action per bid, pass and distinct play.

A table is versioned data shipped with the package (``data/actions-<variant>-v<N>.txt``,
one action per line, the line number being the action's index) and documented in
docs/env.md. Version 0 of both variants:

* ``0`` -- pass: a pass in the auction (bid 0) or in a trick;
* ``1``, ``2``, ``3`` -- bid 1, 2 or 3;
* ``4`` onwards -- every distinct play of the variant (docs/combinations.md: 12,654 in 3p,
  7,951 in 4p), each kicker choice its own action, written in rank notation (``3 3 3 4``),
  ordered by combination type (its number in docs/rules.md section 6), size, main rank and
  ranks.

A play is an action at the level of ranks: which physical cards make it up is decided by
the rules core (``pick_cards``: the lowest suits), as the referee's bundled bots do.
``python -m dizhu.env.actions`` writes the tables from the rules core; the tests check that
the shipped files are exactly what it writes.
"""

from __future__ import annotations

import functools
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import numpy.typing as npt

from dizhu.env.engine import Rules
from dizhu.rules import (
    MAX_BID,
    VARIANTS,
    Action,
    Bid,
    Combination,
    Phase,
    Play,
    Rank,
    RoundState,
    Variant,
    classify,
    legal_moves,
    make_deck,
)
from dizhu.rules.cards import format_ranks

__all__ = ["ACTION_TABLE_VERSION", "FIRST_PLAY", "PASS", "ActionTable", "action_table", "write_tables"]

#: The version of the action tables shipped; a change of any table bumps it (and the environments' ``_vN``).
ACTION_TABLE_VERSION = 0
#: The pass: bid 0 in the auction, a pass in a trick.
PASS = 0
#: The index of the first play; 1..3 are the bids.
FIRST_PLAY = MAX_BID + 1


#: Rank symbols as the tables write them (``format_ranks``), to ranks.
_SYMBOLS = {rank.symbol: rank for rank in Rank}


def _file_name(variant: Variant, version: int) -> str:
    return f"actions-{variant.name}-v{version}.txt"


def enumerate_plays(variant: Variant) -> list[Combination]:
    """Every distinct play a hand of ``variant`` can make, in table order."""
    moves = legal_moves(make_deck(variant.decks), None, variant)
    plays = [move for move in moves if move.size <= variant.landlord_hand_size]
    return sorted(plays, key=lambda play: (play.kind, play.size, play.main_rank, play.ranks))


def _table_text(variant: Variant) -> str:
    lines = [
        f"# dizhu action table: variant {variant.name}, version {ACTION_TABLE_VERSION} (docs/env.md).",
        "# One action per line; the n-th line after these comments is action n.",
        "pass",
        *(f"bid {amount}" for amount in range(1, MAX_BID + 1)),
        *(format_ranks(play.ranks) for play in enumerate_plays(variant)),
    ]
    return "\n".join(lines) + "\n"


def write_tables(folder: Path) -> list[Path]:
    """Write every variant's table into ``folder``; the paths written."""
    written = []
    for variant in VARIANTS.values():
        path = folder / _file_name(variant, ACTION_TABLE_VERSION)
        path.write_text(_table_text(variant), encoding="utf-8")
        written.append(path)
    return written


class ActionTable:
    """A variant's action table: index <-> action, and the legal-action mask of a state."""

    def __init__(self, variant: Variant, lines: list[str], version: int) -> None:
        self.variant = variant
        self.version = version
        #: Every action as written in the table file.
        self.names: tuple[str, ...] = tuple(lines)
        expected = ["pass", *(f"bid {amount}" for amount in range(1, MAX_BID + 1))]
        if lines[:FIRST_PLAY] != expected:
            raise ValueError(f"{_file_name(variant, version)} does not start with {expected}")
        #: The ranks of each play, by action index (empty for the pass and the bids).
        self.plays: tuple[tuple[Rank, ...], ...] = ((),) * FIRST_PLAY + tuple(
            tuple(_SYMBOLS[symbol] for symbol in line.split()) for line in lines[FIRST_PLAY:]
        )
        self._combinations: dict[int, Combination] = {}
        #: Each action's cards as counts by rank, one row per action (zeros for the pass and the bids).
        self.counts: npt.NDArray[np.int8] = np.zeros((len(lines), 15), dtype=np.int8)
        for index, ranks in enumerate(self.plays):
            for rank in ranks:
                self.counts[index, rank] += 1
        self._index: dict[tuple[int, ...], int] = {
            ranks: index for index, ranks in enumerate(self.plays) if index >= FIRST_PLAY
        }
        if len(self._index) != len(self.plays) - FIRST_PLAY:
            raise ValueError(f"{_file_name(variant, version)} lists a play twice")

    @property
    def size(self) -> int:
        """N, the number of actions: the environments' ``Discrete(N)``."""
        return len(self.names)

    def index_of(self, play: Combination | None) -> int:
        """The action index of a play (None: the pass)."""
        return PASS if play is None else self._index[play.ranks]

    def index_of_ranks(self, ranks: tuple[int, ...]) -> int:
        """The action index of the play of ``ranks`` (sorted low to high)."""
        return self._index[ranks]

    def legal_indices(self, state: RoundState, engine: Rules) -> list[int]:
        """The indices of every legal action of the seat to act, ascending; empty once the round is over."""
        if state.phase is Phase.AUCTION:
            return [PASS, *range(state.bid + 1, MAX_BID + 1)]
        if state.phase is not Phase.PLAY:
            return []
        index = self._index
        legal = [index[play.ranks] for play in engine.legal_plays(state)]
        legal.sort()
        if state.last_play is not None:
            legal.insert(0, PASS)
        return legal

    def mask(self, legal: list[int], out: npt.NDArray[np.int8] | None = None) -> npt.NDArray[np.int8]:
        """The int8 mask of ``legal`` indices (written into ``out`` when given)."""
        mask = np.zeros(self.size, dtype=np.int8) if out is None else out
        if out is not None:
            mask.fill(0)
        mask[legal] = 1
        return mask

    def to_action(self, state: RoundState, index: int, engine: Rules) -> Action:
        """The rules core's action for a legal ``index`` by the seat to act."""
        seat = state.turn
        if state.phase is Phase.AUCTION:
            return Bid(seat, index)
        if index == PASS:
            return Play(seat, ())
        return Play(seat, engine.pick_cards(state.hands[seat], self.combination(index)))

    def combination(self, index: int) -> Combination:
        """The play of action ``index`` as the rules core reads it (``index >= FIRST_PLAY``)."""
        found = self._combinations.get(index)
        if found is None:
            found = self._combinations[index] = classify(self.plays[index], self.variant)
        return found


@functools.cache
def action_table(variant: Variant | str, version: int = ACTION_TABLE_VERSION) -> ActionTable:
    """The shipped action table of ``variant`` (``"3p"``, ``"4p"`` or a ``Variant``)."""
    resolved = VARIANTS[variant] if isinstance(variant, str) else variant
    text = resources.files("dizhu.env").joinpath("data", _file_name(resolved, version)).read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    return ActionTable(resolved, lines, version)


if __name__ == "__main__":
    for written in write_tables(Path(__file__).parent / "data"):
        sys.stdout.write(f"wrote {written}\n")
