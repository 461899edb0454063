"""What a person types at ``dizhu play``, read into a command. Pure: no I/O, no referee.

In the auction: ``0`` or ``p`` passes, ``1``..``3`` bids. In play: cards in the project's
notation (``3 3``, ``T J Q K A``, ``BJ RJ``, suits optional: ``5h``), hand positions as
shown (``#1 #2``, or ``#1-3``), a legal play by its number (``m2``), ``p`` to pass. At any
time: ``h`` for help (and every legal play), ``q`` to leave. After a round: Enter for the
next one.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from dizhu.client.cards import NotationError, pick, sorted_cards
from dizhu.v1 import cards_pb2, rules_service_pb2

__all__ = ["Bid", "Help", "NextRound", "Play", "Quit", "Unclear", "read_command"]


@dataclasses.dataclass(frozen=True)
class Bid:
    """Bid ``amount`` (0 passes)."""

    amount: int


@dataclasses.dataclass(frozen=True)
class Play:
    """Play these cards (none: a pass)."""

    cards: tuple[cards_pb2.Card, ...]


@dataclasses.dataclass(frozen=True)
class Help:
    """Show the help and every legal play."""


@dataclasses.dataclass(frozen=True)
class NextRound:
    """Go on to the next round (Settle)."""


@dataclasses.dataclass(frozen=True)
class Quit:
    """Leave the table and stop."""


@dataclasses.dataclass(frozen=True)
class Unclear:
    """Not a command here; ``why`` says what was expected."""

    why: str


Command = Bid | Play | Help | NextRound | Quit | Unclear
_POSITIONS = re.compile(r"#(\d+)(?:-(\d+))?")


def read_command(
    line: str,
    *,
    phase: str,
    hand: Sequence[cards_pb2.Card] = (),
    legal: Sequence[rules_service_pb2.LegalMove] = (),
) -> Command:
    """What ``line`` asks for in ``phase`` (``"auction"``, ``"play"``, ``"round_over"`` or ``"wait"``).

    ``hand`` is numbered as shown (sorted low to high, from 1); ``legal`` as listed (from 1).
    """
    text = line.strip()
    word = text.lower()
    if word in ("q", "quit", "exit"):
        return Quit()
    if word in ("h", "help", "?"):
        return Help()
    if phase == "round_over":
        return NextRound() if word in ("", "n", "next") else Unclear("press Enter for the next round, or q to leave")
    if phase == "auction":
        if word in ("p", "pass"):
            return Bid(0)
        if word in ("0", "1", "2", "3"):
            return Bid(int(word))
        return Unclear("bid 1, 2 or 3, or 0 (or p) to pass")
    if phase != "play":
        return Unclear("it is not your turn: wait, or h for help, q to leave")
    if word in ("p", "pass"):
        return Play(())
    if word.startswith("m") and word[1:].isdigit():
        number = int(word[1:])
        if not 1 <= number <= len(legal):
            return Unclear(
                f"there are {len(legal)} legal plays: m1 to m{len(legal)}" if legal else "no legal play: pass"
            )
        return Play(tuple(legal[number - 1].cards))
    if text.startswith("#"):
        return _positions(text, sorted_cards(hand))
    if not text:
        return Unclear("type the cards to play (e.g. 3 3), #positions, m<n> for a legal play, or p to pass")
    try:
        return Play(tuple(pick(list(hand), text)))
    except NotationError as error:
        return Unclear(str(error))


def _positions(text: str, shown: Sequence[cards_pb2.Card]) -> Command:
    chosen: list[int] = []
    for token in text.replace(",", " ").split():
        match = _POSITIONS.fullmatch(token)
        if match is None:
            return Unclear(f"{token!r}: write hand positions as #3 or #3-5")
        first = int(match[1])
        last = int(match[2]) if match[2] else first
        chosen += range(first, last + 1)
    if not chosen or min(chosen) < 1 or max(chosen) > len(shown) or len(set(chosen)) != len(chosen):
        return Unclear(f"positions run from #1 to #{len(shown)}, each once")
    return Play(tuple(shown[index - 1] for index in chosen))
