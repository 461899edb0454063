"""The one table of card ids, ``tests/data/card_ids.json``: every card of both decks with its id.

Written once from the Python rules core; the rules core, the referee's cards on the wire, the
Python SDK, the Node.js client and the web table's TypeScript are each tested against it, so
that a change in any one of their card-id functions fails a test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final, TypedDict

CARD_IDS: Final = Path(__file__).resolve().parents[1] / "data" / "card_ids.json"


class CardRow(TypedDict):
    """One card: its id, its rank and suit by their names in cards.proto, its copy, its notation."""

    id: int
    rank: str
    suit: str
    copy: int
    notation: str


def card_rows() -> list[CardRow]:
    """Every card of the two decks (the 4p deck), in id order."""
    rows: list[CardRow] = json.loads(CARD_IDS.read_text())["cards"]
    return rows


def deck_rows(variant: str) -> list[CardRow]:
    """The cards of ``variant``'s deck ("3p" or "4p"): those whose copy is below its decks."""
    decks: int = json.loads(CARD_IDS.read_text())["decks"][variant]
    return [row for row in card_rows() if row["copy"] < decks]
