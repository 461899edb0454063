"""Builders for rules-core tests: arranged deals, scripted auctions and plays.

Hands are spelled in rank notation (``"3 3 3 4"``); the builders pick distinct physical cards
from one deck set, lowest card id first, so two seats that both hold a "3" hold different threes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest

from dizhu.rules import (
    Bid,
    Card,
    Deal,
    HouseRules,
    IllegalAction,
    Phase,
    Play,
    Refusal,
    RoundState,
    Transition,
    Variant,
    apply,
    make_deck,
    parse_ranks,
    start_round,
    to_bytes,
)


def take(pool: list[Card], ranks: str) -> tuple[Card, ...]:
    """Remove from ``pool`` (kept in card-id order) the lowest cards with these ranks."""
    taken: list[Card] = []
    for rank in parse_ranks(ranks):
        card = next((card for card in pool if card.rank == rank), None)
        if card is None:
            raise ValueError(f"no card of rank {rank.symbol} left for {ranks!r}")
        pool.remove(card)
        taken.append(card)
    return tuple(taken)


def arranged_deal(
    variant: Variant,
    hands: Sequence[str] = (),
    kitty: str = "",
    *,
    dealer: int | None = None,
    face_up_seat: int = 0,
) -> Deal:
    """A deal where seat ``i`` holds at least the ranks ``hands[i]`` and the kitty at least ``kitty``.

    The cards nobody asked for fill the hands (seat 0 first) and then the kitty, lowest id first.
    By default the dealer is the seat before ``face_up_seat``, which therefore draws first and bids first.
    """
    pool = list(make_deck(variant.decks))
    chosen = [list(take(pool, spec)) for spec in hands]
    chosen += [[] for _ in range(variant.players - len(chosen))]
    kitty_cards = list(take(pool, kitty))
    for hand in chosen:
        while len(hand) < variant.hand_size:
            hand.append(pool.pop(0))
    kitty_cards += pool
    if dealer is None:
        dealer = (face_up_seat - 1) % variant.players
    return Deal.arranged(variant, chosen, kitty_cards, dealer=dealer, face_up_seat=face_up_seat)


def arranged_round(
    variant: Variant,
    hands: Sequence[str] = (),
    kitty: str = "",
    *,
    dealer: int | None = None,
    face_up_seat: int = 0,
    house_rules: HouseRules | None = None,
) -> RoundState:
    """``start_round`` on an ``arranged_deal``: the state before the first bid."""
    deal = arranged_deal(variant, hands, kitty, dealer=dealer, face_up_seat=face_up_seat)
    return start_round(deal, house_rules)


def cards_of(state: RoundState, seat: int, ranks: str) -> tuple[Card, ...]:
    """Concrete cards of ``seat``'s hand with these ranks (lowest suit first)."""
    pool = list(state.hands[seat])
    return take(pool, ranks)


def play(state: RoundState, seat: int, ranks: str = "") -> Transition:
    """``seat`` plays cards of these ranks from its hand (an empty string passes)."""
    return apply(state, Play(seat, cards_of(state, seat, ranks)))


def bid(state: RoundState, *amounts: int) -> RoundState:
    """The seats to act bid ``amounts`` in turn (0 passes); the state after the last one."""
    for amount in amounts:
        state = apply(state, Bid(state.turn, amount)).state
    return state


def make_landlord(state: RoundState, landlord: int, amount: int = 1) -> RoundState:
    """Run the auction so that ``landlord`` wins it at ``amount``: the others pass."""
    while state.turn != landlord:
        state = apply(state, Bid(state.turn, 0)).state
    state = apply(state, Bid(landlord, amount)).state
    while state.phase is Phase.AUCTION:
        state = apply(state, Bid(state.turn, 0)).state
    assert state.landlord == landlord
    return state


def advance(state: RoundState, seat: int, ranks: str) -> Transition:
    """Every seat before ``seat`` passes, then ``seat`` plays ``ranks``; the last transition."""
    while state.turn != seat:
        state = play(state, state.turn).state
    return play(state, seat, ranks)


def script(state: RoundState, steps: Sequence[tuple[int, str]]) -> RoundState:
    """``advance`` through ``(seat, ranks)`` steps: the seats in between pass."""
    for seat, ranks in steps:
        state = advance(state, seat, ranks).state
    return state


def cards_in(value: Any, memo: dict[int, tuple[Any, frozenset[Card]]] | None = None) -> frozenset[Card]:
    """Every ``Card`` anywhere inside ``value``: dataclass fields, tuples, lists, sets, dicts.

    ``memo`` (keyed by object id, holding the object so the id stays valid) lets repeated walks
    over views that share objects, such as the history, skip what they already walked.
    """
    if memo is None:
        memo = {}
    key = id(value)
    if key in memo:
        return memo[key][1]
    found: frozenset[Card]
    if isinstance(value, Card):
        found = frozenset((value,))
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        found = frozenset().union(*(cards_in(getattr(value, f.name), memo) for f in dataclasses.fields(value)))
    elif isinstance(value, tuple | list | set | frozenset):
        found = frozenset().union(*(cards_in(item, memo) for item in value))
    elif isinstance(value, dict):
        found = frozenset().union(*(cards_in(item, memo) for pair in value.items() for item in pair))
    else:
        found = frozenset()
    memo[key] = (value, found)
    return found


def refusal_message(state: RoundState, action: Bid | Play) -> tuple[Refusal, str]:
    """The reason and message of ``apply``'s refusal of ``action``, after checking that ``state``
    did not change.

    ``state`` is an immutable value, but not necessarily all the way down: its encoding before
    and after tells whether anything inside it was changed in place.
    """
    before = to_bytes(state)
    with pytest.raises(IllegalAction) as refused:
        apply(state, action)
    assert to_bytes(state) == before
    return refused.value.reason, refused.value.message


def refusal(state: RoundState, action: Bid | Play) -> Refusal:
    """The reason ``apply`` refuses ``action`` (see :func:`refusal_message`)."""
    return refusal_message(state, action)[0]


@dataclasses.dataclass(frozen=True)
class Scenario:
    """A whole round scripted per variant: seat 0 is the landlord and leads first."""

    hands: tuple[str, ...]
    kitty: str
    #: ``(seat, ranks)`` plays; the seats in between pass.
    steps: tuple[tuple[int, str], ...]


_STRAIGHT = "3 4 5 6 7 8 9 T J Q K A"
_3P_LANDLORD = (f"3 3 {_STRAIGHT} 2 2 2", "4 4")
_4P_LANDLORD = (f"{_STRAIGHT} {_STRAIGHT} 2", "K K K K")

#: Scenario name -> variant name -> scenario.
SCENARIOS: dict[str, dict[str, Scenario]] = {
    # The landlord plays out without a farmer ever playing a card.
    "landlord sweeps": {
        "3p": Scenario(_3P_LANDLORD, "2 BJ RJ", ((0, "3 3"), (0, _STRAIGHT), (0, "2 2 2 2"), (0, "BJ RJ"))),
        "4p": Scenario(
            _4P_LANDLORD,
            "2 2 2 2 BJ BJ RJ RJ",
            ((0, _STRAIGHT), (0, _STRAIGHT), (0, "2 2 2 2 2"), (0, "BJ BJ RJ RJ")),
        ),
    },
    # The landlord wins, but seat 1 played once.
    "landlord wins": {
        "3p": Scenario(_3P_LANDLORD, "2 BJ RJ", ((0, "3 3"), (1, "4 4"), (0, "2 2 2 2"), (0, _STRAIGHT), (0, "BJ RJ"))),
        "4p": Scenario(
            _4P_LANDLORD,
            "2 2 2 2 BJ BJ RJ RJ",
            ((0, _STRAIGHT), (1, "K K K K"), (0, "2 2 2 2 2"), (0, _STRAIGHT), (0, "BJ BJ RJ RJ")),
        ),
    },
    # Seat 1 goes out; the landlord played only the opening lead.
    "farmers sweep": {
        "3p": Scenario(
            ("3 5", "4 K 5 6 7 8 9 T J Q K A 2 2 2 3 3"),
            "",
            ((0, "3"), (1, "4"), (1, "K"), (1, "5 6 7 8 9 T J Q K A"), (1, "2 2 2 3 3")),
        ),
        "4p": Scenario(
            ("3 5", f"4 K {_STRAIGHT} 2 2 2 3 3 5 6 7 8 9 T"),
            "",
            ((0, "3"), (1, "4"), (1, "K"), (1, _STRAIGHT), (1, "2 2 2 3 3"), (1, "5 6 7 8 9 T")),
        ),
    },
    # Seat 1 goes out; the landlord played twice.
    "farmers win": {
        "3p": Scenario(
            ("3 5", "4 K 5 6 7 8 9 T J Q K A 2 2 2 3 3"),
            "",
            ((0, "3"), (1, "4"), (0, "5"), (1, "K"), (1, "5 6 7 8 9 T J Q K A"), (1, "2 2 2 3 3")),
        ),
        "4p": Scenario(
            ("3 5", f"4 K {_STRAIGHT} 2 2 2 3 3 5 6 7 8 9 T"),
            "",
            ((0, "3"), (1, "4"), (0, "5"), (1, "K"), (1, _STRAIGHT), (1, "2 2 2 3 3"), (1, "5 6 7 8 9 T")),
        ),
    },
}


def scenario_round(
    variant: Variant, name: str, *, amount: int = 1, house_rules: HouseRules | None = None
) -> RoundState:
    """The state at the end of the scripted scenario ``name``, seat 0 landlord at ``amount``."""
    scenario = SCENARIOS[name][variant.name]
    state = arranged_round(variant, scenario.hands, scenario.kitty, house_rules=house_rules)
    return script(make_landlord(state, 0, amount), scenario.steps)
