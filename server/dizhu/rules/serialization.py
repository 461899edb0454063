"""A round state to and from plain data and bytes, losslessly (the referee keeps it in Redis).

Cards are stored as canonical ids (see ``Card.id``), combinations as
``[kind, main_rank, size, [ranks]]``, actions as ``["b", seat, amount]`` or
``["p", seat, [card ids]]``. ``to_bytes`` is compact JSON; the ``"v"`` field versions the format.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from dizhu.rules.actions import Action, Bid, Play
from dizhu.rules.cards import RANKS, Card, cards_by_id
from dizhu.rules.combinations import Combination
from dizhu.rules.deal import Deal
from dizhu.rules.round import Phase, RoundState
from dizhu.rules.variants import VARIANTS, CombinationKind, HouseRules

__all__ = [
    "FORMAT_VERSION",
    "action_to_plain",
    "from_bytes",
    "from_plain",
    "keep_plain_forms_of",
    "to_bytes",
    "to_plain",
]

FORMAT_VERSION = 1
Plain = dict[str, Any]


def _ids(cards: tuple[Card, ...]) -> list[int]:
    return [card.id for card in cards]


def _combination_to_plain(combination: Combination | None) -> list[Any] | None:
    if combination is None:
        return None
    return [int(combination.kind), int(combination.main_rank), combination.size, [int(r) for r in combination.ranks]]


def _combination_from_plain(data: list[Any] | None) -> Combination | None:
    if data is None:
        return None
    kind, main, size, ranks = data
    return Combination(CombinationKind(kind), RANKS[main], size, tuple(RANKS[r] for r in ranks))


def _action_to_plain(action: Action) -> tuple[Any, ...]:
    if isinstance(action, Bid):
        return ("b", action.seat, action.amount)
    return ("p", action.seat, tuple(card.id for card in action.cards))


#: An action's plain form (a ``history`` entry), remembered: a state is written after every move, with
#: its whole history. Look it up here at each use (:func:`keep_plain_forms_of` replaces it).
action_to_plain = functools.lru_cache(maxsize=1 << 13)(_action_to_plain)


def _action_from_plain(data: list[Any]) -> Action:
    tag, seat, value = data
    if tag == "b":
        return Bid(seat, value)
    if tag == "p":
        return Play(seat, cards_by_id(value))
    raise ValueError(f"unknown action tag {tag!r}")


def _plain_deal(deal: Deal) -> tuple[tuple[str, Any], ...]:
    return (
        ("seed", None if deal.seed is None else deal.seed.hex()),
        ("dealer", deal.dealer),
        ("hands", tuple(tuple(card.id for card in hand) for hand in deal.hands)),
        ("kitty", tuple(card.id for card in deal.kitty)),
        ("face_up", deal.face_up.id),
        ("face_up_seat", deal.face_up_seat),
    )


#: A deal's plain form, remembered: it never changes while its round is played.
_deal_to_plain = functools.lru_cache(maxsize=4096)(_plain_deal)


def keep_plain_forms_of(*, deals: int, actions: int) -> None:
    """Remember the plain forms of at most ``deals`` deals and ``actions`` actions in this process
    (4,096 and 8,192 unless set); what was remembered is forgotten (an ``lru_cache`` has one size)."""
    global action_to_plain, _deal_to_plain  # noqa: PLW0603 -- the process's one cache of each, resized
    action_to_plain = functools.lru_cache(maxsize=actions)(_action_to_plain)
    _deal_to_plain = functools.lru_cache(maxsize=deals)(_plain_deal)


def to_plain(state: RoundState, *, history: bool = True) -> Plain:
    """``state`` as JSON-compatible plain data (sequences may be tuples).

    ``history=False`` leaves the actions out (``"history"`` is empty), for a caller that keeps
    their plain forms (:func:`action_to_plain`) from one state of the round to the next.
    """
    return {
        "v": FORMAT_VERSION,
        "variant": state.variant.name,
        "house_rules": {"spring": state.house_rules.spring},
        "deal": dict(_deal_to_plain(state.deal)),
        "phase": state.phase.value,
        "turn": state.turn,
        "hands": [_ids(hand) for hand in state.hands],
        "bid": state.bid,
        "bidder": state.bidder,
        "passes": state.passes,
        "landlord": state.landlord,
        "last_play": _combination_to_plain(state.last_play),
        "last_player": state.last_player,
        "doublings": state.doublings,
        "plays_made": list(state.plays_made),
        "history": [action_to_plain(action) for action in state.history] if history else [],
    }


def from_plain(data: Plain) -> RoundState:
    """The state ``to_plain`` produced; raises ``ValueError`` (or ``KeyError``) on foreign data."""
    if data.get("v") != FORMAT_VERSION:
        raise ValueError(f"unsupported round state format {data.get('v')!r}")
    variant = VARIANTS[data["variant"]]
    plain_deal = data["deal"]
    deal = Deal(
        variant=variant,
        dealer=plain_deal["dealer"],
        hands=tuple(cards_by_id(hand) for hand in plain_deal["hands"]),
        kitty=cards_by_id(plain_deal["kitty"]),
        face_up=cards_by_id([plain_deal["face_up"]])[0],
        face_up_seat=plain_deal["face_up_seat"],
        seed=None if plain_deal["seed"] is None else bytes.fromhex(plain_deal["seed"]),
    )
    return RoundState(
        variant=variant,
        deal=deal,
        house_rules=HouseRules(**data["house_rules"]),
        phase=Phase(data["phase"]),
        turn=data["turn"],
        hands=tuple(cards_by_id(hand) for hand in data["hands"]),
        bid=data["bid"],
        bidder=data["bidder"],
        passes=data["passes"],
        landlord=data["landlord"],
        last_play=_combination_from_plain(data["last_play"]),
        last_player=data["last_player"],
        doublings=data["doublings"],
        plays_made=tuple(data["plays_made"]),
        history=tuple(_action_from_plain(action) for action in data["history"]),
    )


def to_bytes(state: RoundState) -> bytes:
    """``state`` as compact JSON bytes."""
    return json.dumps(to_plain(state), separators=(",", ":")).encode()


def from_bytes(data: bytes) -> RoundState:
    """The state ``to_bytes`` produced."""
    return from_plain(json.loads(data))
