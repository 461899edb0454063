"""The stdio protocol ``dizhu.stdio/v1``: one JSON request per decision, one JSON reply.

The runner writes one line of JSON per decision on the bot's standard input and reads one
line of JSON from its standard output (docs/tournaments.md has the full description)::

    {"protocol": "dizhu.stdio/v1", "id": 7, "type": "play", "game": "g00012", "time_left_ms": 4870,
     "view": {...}, "legal": ["3c", "3c 3d", ...], "can_pass": true}
    {"id": 7, "cards": "3c 3d"}

A bid request has ``"type": "bid"`` and is answered with ``{"id": 7, "bid": 2}`` (0 passes).
A play is answered with the cards in notation (``""`` passes). This module only builds
requests and judges replies; :mod:`dizhu.tournament.players` runs the processes.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Final

from dizhu.client import to_beat
from dizhu.client.cards import NotationError, format_cards, parse_cards, pick
from dizhu.v1 import cards_pb2, rules_service_pb2, table_pb2

__all__ = ["PROTOCOL", "Reply", "judge_reply", "request"]

PROTOCOL: Final = "dizhu.stdio/v1"
_VARIANT_NAMES: Final = {cards_pb2.VARIANT_THREE_PLAYER: "3p", cards_pb2.VARIANT_FOUR_PLAYER: "4p"}


def _optional(view: table_pb2.TableView, field: str) -> int | None:
    return int(getattr(view, field)) if view.HasField(field) else None


def view_json(view: table_pb2.TableView) -> dict[str, Any]:
    """The seat's view in the protocol's plain form (cards in notation, seats by number)."""
    beat = to_beat(view)
    return {
        "variant": _VARIANT_NAMES.get(view.settings.variant, "3p"),
        "round": view.round,
        "seat": _optional(view, "your_seat"),
        "hand": format_cards(view.your_hand),
        "players": [seat.player_name for seat in view.seats],
        "cards_left": [seat.cards_left for seat in view.seats],
        "balances": [seat.balance for seat in view.seats],
        "dealer": _optional(view, "dealer_seat"),
        "bids": [[bid.seat, bid.amount] for bid in view.bids],
        "highest_bid": view.highest_bid,
        "legal_bids": list(view.legal_bids),
        "landlord": _optional(view, "landlord_seat"),
        "kitty": format_cards(view.kitty),
        "stake": view.stake,
        "trick": [{"seat": play.seat, "cards": format_cards(play.cards)} for play in view.trick.plays],
        "to_beat": None if beat is None else format_cards(beat),
        "to_beat_seat": None if beat is None else view.to_beat.seat,
    }


def request(
    request_id: int,
    game: str,
    view: table_pb2.TableView,
    time_left_ms: int | None,
    legal: rules_service_pb2.ListLegalMovesResponse | None = None,
) -> dict[str, Any]:
    """The request of one decision: a bid (``legal`` None) or a play."""
    message: dict[str, Any] = {
        "protocol": PROTOCOL,
        "id": request_id,
        "type": "bid" if legal is None else "play",
        "game": game,
        "time_left_ms": time_left_ms,
        "view": view_json(view),
    }
    if legal is not None:
        message["legal"] = [format_cards(move.cards) for move in legal.moves]
        message["can_pass"] = legal.can_pass
    return message


@dataclasses.dataclass(frozen=True, slots=True)
class Reply:
    """A judged reply: ``fault`` is None (a decision to send), ``"garbage"`` or ``"illegal"``."""

    fault: str | None
    bid: int = 0
    cards: tuple[cards_pb2.Card, ...] = ()
    detail: str = ""


def parse_line(line: bytes) -> dict[str, Any] | None:
    """A line as a JSON object, or None."""
    try:
        value = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


def judge_reply(message: dict[str, Any], kind: str, view: table_pb2.TableView) -> Reply:
    """What the bot asked for. A malformed reply is ``garbage``; cards that name nothing it holds, ``illegal``.

    Cards the hand holds are sent to the referee as written, even if they are no legal play:
    the referee judges them (a refusal is then counted as ``illegal`` by the caller).
    """
    if kind == "bid":
        amount = message.get("bid")
        if not isinstance(amount, int) or isinstance(amount, bool):
            return Reply("garbage", detail="a bid reply needs an integer 'bid'")
        if not 0 <= amount <= 3:
            return Reply("illegal", detail=f"bid {amount} is not 0..3")
        return Reply(None, bid=amount)
    text = message.get("cards")
    if not isinstance(text, str):
        return Reply("garbage", detail="a play reply needs a string 'cards'")
    try:
        cards = pick(list(view.your_hand), text) if text.strip() else []
    except NotationError:
        decks = 2 if view.settings.variant == cards_pb2.VARIANT_FOUR_PLAYER else 1
        try:
            cards = parse_cards(text, decks=decks)  # cards the hand lacks: the referee says so
        except NotationError as error:
            return Reply("illegal", detail=str(error))
    return Reply(None, cards=tuple(cards))
