"""The differential harness: seeded random positions given to both engines, every answer compared.

A *position* is one question asked of both engines: the reading of a card set, whether one play
beats another, the ordered list of legal moves of a hand on a play (or leading), one action of a
round (accepted with its events and the next state, or refused with its reason), the settlement
of a finished round, or the deal of a seed. ``run(seed, positions)`` asks them in batches (the
engine is switched once per batch, not per question) and returns every mismatch.

The Python side is the pure rules core (``engine.using("python")``); the native side is reached
the way the referee reaches it: through ``dizhu.rules`` with the native engine selected, and
``dizhu._engine`` directly for the round state machine and ``beats``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dizhu import engine
from dizhu.rules import (
    FOUR_PLAYER,
    RANKS,
    THREE_PLAYER,
    Bid,
    BidMade,
    Card,
    CardsPlayed,
    Combination,
    HouseRules,
    IllegalAction,
    LandlordChosen,
    Play,
    RoundFinished,
    RoundState,
    ThrownIn,
    TrickClosed,
    Variant,
    apply,
    deal,
    legal_moves,
    make_deck,
    start_round,
    try_classify,
)
from dizhu.rules.combinations import explain
from dizhu.rules.engines import native_module, native_rules

#: Mismatches the project knows of and accepts; it is empty, and a test keeps it so.
KNOWN_DIVERGENCES_FILE = Path(__file__).resolve().parents[1] / "engine" / "known_divergences.json"


def known_divergences() -> list[Any]:
    divergences: list[Any] = json.loads(KNOWN_DIVERGENCES_FILE.read_text())
    return divergences


@dataclass
class Report:
    """How many positions of each sort were compared, and every mismatch (at most 20 kept)."""

    positions: dict[str, int] = field(default_factory=dict)
    mismatches: list[str] = field(default_factory=list)

    def count(self, sort: str, compared: int) -> None:
        self.positions[sort] = self.positions.get(sort, 0) + compared

    def compare(self, sort: str, question: object, python: object, native: object) -> None:
        if python != native and len(self.mismatches) < 20:
            self.mismatches.append(f"{sort} {question!r}: python {python!r}, native {native!r}")

    @property
    def total(self) -> int:
        return sum(self.positions.values())


def _both(ask: Callable[[], Any]) -> tuple[Any, Any]:
    """``ask()`` answered by the pure core, then by the native engine."""
    with engine.using("python"):
        python = ask()
    with engine.using("native"):
        native = ask()
    return python, native


def _random_ranks(rng: random.Random, variant: Variant) -> tuple[int, ...]:
    """A rank multiset that is often a play: few ranks, counts up to (a little over) the deck's."""
    ranks: list[int] = []
    for rank in rng.sample(range(len(RANKS)), rng.choice((1, 1, 2, 2, 3, 4, 5, 6, 8))):
        ranks += [rank] * rng.randint(1, variant.copies(rank) + (rng.random() < 0.05))
    if rng.random() < 0.3:  # a straight-like run
        low = rng.randrange(12)
        width = rng.choice((1, 2, 3))
        ranks = [rank for rank in range(low, min(low + rng.randint(2, 12), 15)) for _ in range(width)]
        ranks += rng.sample(range(15), rng.randint(0, 3))
    return tuple(sorted(ranks))


def _readings(cases: Sequence[tuple[int, ...]], variant: Variant) -> list[object]:
    """Each rank set's reading, or why it has none, as ``dizhu.rules`` answers."""
    return [try_classify([RANKS[rank] for rank in ranks], variant) or explain(ranks, variant) for ranks in cases]


def _compare_classification(rng: random.Random, variant: Variant, count: int, report: Report) -> None:
    cases = [_random_ranks(rng, variant) for _ in range(count)]
    python, native = _both(lambda: _readings(cases, variant))
    for case, mine, theirs in zip(cases, python, native, strict=True):
        report.compare("classify", (variant.name, case), mine, theirs)
    report.count("classification", count)


def _compare_beats(plays: Sequence[Combination], rng: random.Random, count: int, report: Report) -> None:
    module = native_module()
    assert module is not None
    from dizhu.rules import beats

    for _ in range(count):
        a, b = rng.choice(plays), rng.choice(plays)
        native = module.beats(a, b)
        report.compare("beats", (str(a), str(b)), beats(a, b), native)
    report.count("beats", count)


def _compare_legal_moves(rng: random.Random, variant: Variant, count: int, report: Report) -> list[Combination]:
    """Legal moves of random hands, leading and following a random play; the plays seen are returned."""
    deck = list(make_deck(variant.decks))
    cases: list[tuple[list[Card], Combination | None]] = []
    with engine.using("python"):
        while len(cases) < count:
            size = rng.randint(1, variant.landlord_hand_size)
            hand = rng.sample(deck, size)
            if rng.random() < 0.3:
                cases.append((hand, None))
                continue
            other = rng.sample(deck, rng.randint(1, variant.landlord_hand_size))
            leads = legal_moves(other, None, variant)
            cases.append((hand, rng.choice(leads)))
    python, native = _both(lambda: [legal_moves(hand, to_beat, variant) for hand, to_beat in cases])
    plays: list[Combination] = []
    for (hand, to_beat), mine, theirs in zip(cases, python, native, strict=True):
        if mine != theirs:
            report.compare("legal_moves", (variant.name, [str(card) for card in hand], str(to_beat)), mine, theirs)
        plays += mine[:3]
    report.count("legal moves", count)
    return plays


def _python_events(events: Sequence[object]) -> list[tuple[str, int, int]]:
    """Python events as the native engine's ``(name, seat, value)`` tuples."""
    named: list[tuple[str, int, int]] = []
    for event in events:
        match event:
            case BidMade(seat, amount):
                named.append(("bid_made", seat, amount))
            case ThrownIn():
                named.append(("thrown_in", -1, 0))
            case LandlordChosen(seat, bid, _):
                named.append(("landlord_chosen", seat, bid))
            case CardsPlayed(seat, _, combination, doubled):
                named.append(("cards_played", seat, 0 if combination is None else 1 + doubled))
            case TrickClosed(leader):
                named.append(("trick_closed", leader, 0))
            case RoundFinished(seat, landlord_won):
                named.append(("round_finished", seat, int(landlord_won)))
    return named


def play_key(play: Combination) -> int:
    """A play's rank counts, four bits a rank: the native engine's key."""
    return sum(1 << (4 * rank) for rank in play.ranks)


def python_state(state: RoundState) -> tuple[object, ...]:
    """A Python round state in the shape of ``NativeRound.state()``."""
    last = state.last_play
    return (
        state.phase.value,
        state.turn,
        [[card.id for card in hand] for hand in state.hands],
        state.bid,
        state.bidder,
        state.passes,
        state.landlord,
        None if last is None else (int(last.kind), int(last.main_rank), last.size, play_key(last)),
        state.last_player,
        state.doublings,
        list(state.plays_made),
    )


def native_state(native: Any) -> tuple[object, ...]:
    """``NativeRound.state()`` with the hands as lists of card ids, as ``python_state``."""
    phase, turn, hands, *rest = native.state()
    return (phase, turn, [list(hand) for hand in hands], *rest)


def start_native_round(state: RoundState, spring: bool) -> Any:
    """The native engine's round in the same state as a fresh Python one."""
    rules = native_rules(state.variant)
    assert rules is not None, "the native engine is not selected"
    hands = [[card.id for card in hand] for hand in state.hands]
    return rules.start_round(hands, [card.id for card in state.deal.kitty], state.turn, spring)


def _wrong_action(state: RoundState, rng: random.Random) -> Bid | Play:
    """An action the rules will often refuse: another seat's, a low bid, cards not held, no combination."""
    seat = rng.choice((state.turn, rng.randrange(-1, state.variant.players + 1)))
    if rng.random() < 0.5:
        return Bid(seat, rng.randint(-1, 4))
    hand = state.hands[state.turn]
    cards = tuple(rng.sample(hand, min(len(hand), rng.randint(0, 4))))
    if rng.random() < 0.2:
        cards += (rng.choice(make_deck(state.variant.decks)),)
    return Play(seat, cards)


def apply_to_both(state: RoundState, native: Any, action: Bid | Play) -> tuple[object, object, RoundState]:
    """``action`` applied by both engines: each answer (refusal reason or events) and the next Python state."""
    try:
        transition = apply(state, action)
    except IllegalAction as refused:
        python_answer: object = (str(refused.reason), [])
    else:
        python_answer = (None, _python_events(transition.events))
        state = transition.state
    if isinstance(action, Bid):
        native_answer = native.bid(action.seat, action.amount)
    else:
        native_answer = native.play(action.seat, [card.id for card in action.cards])
    return python_answer, (native_answer[0], list(native_answer[1])), state


def _compare_rounds(rng: random.Random, variant: Variant, rounds: int, report: Report) -> None:
    """Random rounds played by both engines action by action, with a wrong action now and then."""
    from dizhu.rules import settle
    from dizhu.rules.random_play import random_action

    actions = 0
    with engine.using("python"):
        for _ in range(rounds):
            spring = rng.random() < 0.5
            state = start_round(deal(rng.randbytes(32), variant, rng.randrange(variant.players)), HouseRules(spring))
            with engine.using("native"):
                native = start_native_round(state, spring)
            while not state.is_over:
                action = _wrong_action(state, rng) if rng.random() < 0.3 else random_action(state, rng)
                python_answer, native_answer, state = apply_to_both(state, native, action)
                actions += 1
                report.compare("action", (variant.name, str(action)), python_answer, native_answer)
                if python_answer != native_answer:
                    break
                report.compare("state", (variant.name, str(action)), python_state(state), native_state(native))
            else:
                settled = settle(state)
                python_settlement = (
                    settled.stake,
                    list(settled.deltas),
                    settled.landlord,
                    settled.landlord_won,
                    settled.doublings,
                    settled.spring,
                )
                stake, deltas, *rest = native.settle() or (None, [], None)
                report.compare("settlement", variant.name, python_settlement, (stake, list(deltas), *rest))
    report.count("round actions", actions)
    report.count("settlements", rounds)


def _compare_deals(rng: random.Random, variant: Variant, count: int, report: Report) -> None:
    cases = [(rng.randbytes(32), rng.randrange(variant.players)) for _ in range(count)]
    python, native = _both(lambda: [deal(seed, variant, dealer) for seed, dealer in cases])
    for (seed, dealer), mine, theirs in zip(cases, python, native, strict=True):
        report.compare("deal", (variant.name, seed.hex(), dealer), mine, theirs)
    report.count("deals", count)


#: The share of each sort of position in a run (per variant; both variants get half).
_SHARES = {"classification": 0.62, "beats": 0.2, "legal moves": 0.12, "deals": 0.01}
#: Round actions per round, about: a run plays ``positions * 0.05 / 65`` rounds per variant.
_ACTIONS_PER_ROUND = 65


def run(seed: int, positions: int) -> Report:
    """Compare both engines on about ``positions`` seeded random positions, half in each variant."""
    report = Report()
    rng = random.Random(seed)
    per_variant = positions // 2
    for variant in (THREE_PLAYER, FOUR_PLAYER):
        _compare_classification(rng, variant, int(per_variant * _SHARES["classification"]), report)
        plays = _compare_legal_moves(rng, variant, int(per_variant * _SHARES["legal moves"]), report)
        _compare_beats(plays, rng, int(per_variant * _SHARES["beats"]), report)
        _compare_deals(rng, variant, int(per_variant * _SHARES["deals"]), report)
        _compare_rounds(rng, variant, max(1, int(per_variant * 0.05 / _ACTIONS_PER_ROUND)), report)
    return report
