"""The runner's perft walk (from legal_moves answers) counts what the rules core's state machine allows."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dizhu.conformance import CoreEngine, count_lines
from dizhu.rules import (
    VARIANTS,
    Phase,
    Play,
    RoundState,
    apply,
    classify,
    format_ranks,
    legal_plays,
    make_deck,
    parse_ranks,
    pick_cards,
    start_round,
)
from dizhu.rules import deal as seeded_deal
from tests.support.conformance_kit import KIT


def _lines(state: RoundState, depth: int, counts: list[int], ply: int = 0) -> None:
    """Count lines by applying every legal action to the state, as the referee would."""
    if state.is_over or ply == depth:
        return
    seat = state.turn
    actions = [pick_cards(state.hands[seat], play) for play in legal_plays(state)]
    if state.last_play is not None:
        actions.append(())
    counts[ply] += len(actions)
    for cards in actions:
        _lines(apply(state, Play(seat, cards)).state, depth, counts, ply + 1)


@settings(max_examples=40, deadline=None)
@given(
    variant_name=st.sampled_from(["3p", "4p"]),
    seed=st.binary(min_size=32, max_size=32),
    size=st.integers(min_value=1, max_value=7),
    depth=st.integers(min_value=1, max_value=4),
    follow=st.booleans(),
)
def test_count_lines_agrees_with_the_state_machine(
    variant_name: str, seed: bytes, size: int, depth: int, follow: bool
) -> None:
    """From a lead, or (``follow``) from the trick seat 0 opened with its lowest card, closing included."""
    variant = VARIANTS[variant_name]
    dealt = seeded_deal(seed, variant, 0)
    hands = tuple(hand[: size + 1] for hand in dealt.hands)
    state = start_round(dealt)._replace(phase=Phase.PLAY, landlord=0, bid=1, bidder=0, turn=0, hands=hands)
    if follow:
        state = apply(state, Play(0, hands[0][:1])).state
    counted = [0] * depth
    _lines(state, depth, counted)
    position = {
        "hands": [format_ranks(card.rank for card in hand) for hand in state.hands],
        "turn": state.turn,
        "to_beat": None if state.last_play is None else format_ranks(state.last_play.ranks),
        "last_player": state.last_player,
        "passes": state.passes,
    }
    assert count_lines(CoreEngine(), variant_name, position, depth) == counted


def _state_of(variant_name: str, position: dict[str, Any]) -> RoundState:
    """The rules core's state of a kit perft position: its hands as cards, the trick and its passes."""
    variant = VARIANTS[variant_name]
    unused = list(make_deck(variant.decks))
    hands = []
    for text in position["hands"]:
        hand = []
        for rank in parse_ranks(text):
            card = next(card for card in unused if card.rank == rank)
            unused.remove(card)
            hand.append(card)
        hands.append(tuple(hand))
    to_beat = position["to_beat"]
    return start_round(seeded_deal(bytes(32), variant, 0))._replace(
        phase=Phase.PLAY,
        landlord=0,
        bid=1,
        bidder=0,
        hands=tuple(hands),
        turn=position["turn"],
        last_play=None if to_beat is None else classify(parse_ranks(to_beat), variant),
        last_player=position["last_player"],
        passes=position["passes"],
    )


def test_the_kits_perft_positions_that_seats_passed_in_count_what_the_state_machine_allows() -> None:
    """Counted by applying every action to the rules core's state: the passes already made close the trick."""
    cases = [case for case in KIT.load("rules/perft.json")["cases"] if case["query"]["position"]["passes"]]
    assert cases
    for case in cases:
        query = case["query"]
        counted = [0] * query["depth"]
        _lines(_state_of(query["variant"], query["position"]), query["depth"], counted)
        assert counted == case["expect"]["counts"], case["id"]
