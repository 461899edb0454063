"""The Node.js stdio bot (clients/node/stdio-bot.mjs, protocol dizhu.stdio/v1) bids from the view's legal_bids.

Requests written on its standard input as the tournament runner writes them, its answers read
from its standard output: it bids 1 with a strong hand when the view's legal_bids hold 1, and
passes otherwise, whatever ``highest_bid`` says; it still leads the lowest card with the most cards.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

STDIO_BOT = Path(__file__).resolve().parents[2] / "clients" / "node" / "stdio-bot.mjs"
STRONG = "3c 4d 7h 9s Js BJ"
WEAK = "3c 4d 7h 9s Js Kd"


def _view(hand: str, highest_bid: int, legal_bids: list[int]) -> dict[str, Any]:
    return {
        "variant": "3p",
        "round": 1,
        "seat": 1,
        "hand": hand,
        "players": ["a", "node-stdio", "c"],
        "cards_left": [17, 17, 17],
        "balances": [0, 0, 0],
        "dealer": 0,
        "bids": [[0, highest_bid]],
        "highest_bid": highest_bid,
        "legal_bids": legal_bids,
        "landlord": None,
        "kitty": "",
        "stake": 0,
        "trick": [],
        "to_beat": None,
        "to_beat_seat": None,
    }


def _answers(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH: install Node.js (>= 18) to run the Node stdio bot", pytrace=False)
    lines = "".join(
        json.dumps({"protocol": "dizhu.stdio/v1", "game": "g1", "time_left_ms": None, **r}) + "\n" for r in requests
    )
    ran = subprocess.run([node, str(STDIO_BOT)], input=lines, capture_output=True, text=True, timeout=60, check=False)
    assert ran.returncode == 0, ran.stderr
    return [json.loads(line) for line in ran.stdout.splitlines()]


def test_it_bids_one_only_where_the_views_legal_bids_hold_one() -> None:
    cases = [
        (_view(STRONG, 0, [0, 1, 2, 3]), 1),
        (_view(WEAK, 0, [0, 1, 2, 3]), 0),
        (_view(STRONG, 1, [0, 2, 3]), 0),
        # A view whose legal_bids lack 1 where highest_bid alone would allow it: legal_bids decide.
        (_view(STRONG, 0, [0, 2, 3]), 0),
        (_view(STRONG, 0, [0]), 0),
    ]
    answers = _answers([{"id": number, "type": "bid", "view": view} for number, (view, _) in enumerate(cases)])
    assert answers == [{"id": number, "bid": bid} for number, (_, bid) in enumerate(cases)]


def test_it_still_leads_the_lowest_card_with_the_most_cards() -> None:
    view = _view("3c 3d 4d 9s Js BJ", 1, []) | {"landlord": 1}
    legal = ["3c", "3c 3d", "4d", "BJ"]
    (answer,) = _answers([{"id": 9, "type": "play", "view": view, "legal": legal, "can_pass": False}])
    assert answer == {"id": 9, "cards": "3c 3d"}
