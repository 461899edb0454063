"""One round as an immutable state machine (docs/rules.md sections 2, 4 and 5).

``start_round(deal)`` gives the state before the first bid; ``apply(state, action)`` checks
the action against the rules and returns a ``Transition``: the next state and the events
the action produced. A refused action raises ``IllegalAction`` and changes nothing.

Decisions honoured here:

* the seat that drew the face-up card bids first (section 3);
* a player who passed may bid again when the turn returns; the auction ends at a bid of 3
  or when, after a bid, every other player passed in a row (section 4);
* all players passing before any bid throws the cards in (the redeal and its cap are the
  table's business, see ``match``);
* the landlord takes the kitty, which becomes public, and leads the first trick;
* a trick closes after ``variant.passes_to_close`` passes in a row (counted, never read
  back from history), and the last player to play leads the next (section 5).
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable
from typing import Any, NamedTuple, NoReturn

from dizhu.rules.actions import (
    MAX_BID,
    Action,
    Bid,
    BidMade,
    CardsPlayed,
    Event,
    IllegalAction,
    LandlordChosen,
    Play,
    Refusal,
    RoundFinished,
    ThrownIn,
    TrickClosed,
)
from dizhu.rules.cards import Card, format_cards
from dizhu.rules.combinations import Combination, beats, read_ranks
from dizhu.rules.deal import Deal
from dizhu.rules.moves import legal_moves
from dizhu.rules.tables import Table
from dizhu.rules.variants import CombinationKind, HouseRules, Variant

__all__ = ["Phase", "RoundState", "Transition", "apply", "doubles_stake", "legal_bids", "legal_plays", "start_round"]


class Phase(enum.Enum):
    """Where a round stands."""

    #: Seats bid in turn for the landlord's role.
    AUCTION = "auction"
    #: The landlord has the kitty; tricks are being played.
    PLAY = "play"
    #: A seat played its last card; the round can be settled.
    FINISHED = "finished"
    #: Everybody passed in the auction; the round settles nothing.
    THROWN_IN = "thrown_in"


# Enum members looked up once: on an Enum class, attribute access costs about as much as
# a function call, and every action checks the phase.
_AUCTION = Phase.AUCTION
_PLAY = Phase.PLAY
_FINISHED = Phase.FINISHED
_THROWN_IN = Phase.THROWN_IN
_ROCKET = CombinationKind.ROCKET
_BOMB = CombinationKind.BOMB


class RoundState(NamedTuple):
    """Everything about a round at one moment. Never mutated: ``apply`` returns a new one.

    A named tuple rather than a frozen dataclass: every action builds a new state, and a
    tuple is several times cheaper to build (the random-rounds benchmark feels it).
    """

    variant: Variant
    deal: Deal
    house_rules: HouseRules
    phase: Phase
    #: The seat to act (in FINISHED: the seat that went out; in THROWN_IN: the last to pass).
    turn: int
    #: Each seat's cards now, sorted by rank.
    hands: tuple[tuple[Card, ...], ...]
    #: The highest bid so far (0 before any bid); once chosen, the landlord's bid.
    bid: int = 0
    #: Who made the highest bid.
    bidder: int | None = None
    #: Consecutive passes since the last bid (auction) or the last play (trick).
    passes: int = 0
    landlord: int | None = None
    #: The last play of the current trick; None when the seat to act leads.
    last_play: Combination | None = None
    last_player: int | None = None
    #: How many plays doubled the stake (section 9).
    doublings: int = 0
    #: How many times each seat played cards (not passes): the spring house rule needs it.
    plays_made: tuple[int, ...] = ()
    #: Every accepted action, in order.
    history: tuple[Action, ...] = ()

    @property
    def is_over(self) -> bool:
        return self.phase is _FINISHED or self.phase is _THROWN_IN

    @property
    def stake(self) -> int:
        """The current stake: the bid doubled once per doubling play (spring not included)."""
        return self.bid << self.doublings

    @property
    def winner(self) -> int | None:
        """The seat that went out first, once the round is finished."""
        return self.turn if self.phase is _FINISHED else None


class Transition(NamedTuple):
    """The result of an accepted action."""

    state: RoundState
    events: tuple[Event, ...]


def doubles_stake(combination: Combination, variant: Variant) -> bool:
    """Whether playing ``combination`` doubles the round's stake (section 9): a rocket, or a bomb
    of at least ``variant.min_doubling_bomb_size`` cards (4 in 3p, 6 in 4p)."""
    kind = combination.kind
    return kind is _ROCKET or (kind is _BOMB and combination.size >= variant.min_doubling_bomb_size)


def start_round(deal: Deal, house_rules: HouseRules | None = None) -> RoundState:
    """The state before the first bid; the seat that drew the face-up card bids first."""
    return RoundState(
        variant=deal.variant,
        deal=deal,
        house_rules=house_rules or HouseRules(),
        phase=Phase.AUCTION,
        turn=deal.face_up_seat,
        hands=deal.hands,
        plays_made=(0,) * deal.variant.players,
    )


def apply(state: RoundState, action: Action) -> Transition:
    """Apply ``action`` to ``state``; raises ``IllegalAction`` if the rules refuse it."""
    seat = action.seat
    if not 0 <= seat < state.variant.players:
        raise IllegalAction(Refusal.INVALID_SEAT, f"{state.variant.name} has no seat {seat}")
    if isinstance(action, Bid):
        if state.phase is not _AUCTION or seat != state.turn:
            _refuse_out_of_turn(state, _AUCTION, "bid", seat)
        return _apply_bid(state, action)
    if state.phase is not _PLAY or seat != state.turn:
        _refuse_out_of_turn(state, _PLAY, "play cards", seat)
    return _apply_play(state, action)


def _refuse_out_of_turn(state: RoundState, phase: Phase, doing: str, seat: int) -> NoReturn:
    """Refuse an action in the wrong phase (checked first) or out of turn."""
    if state.phase is not phase:
        raise IllegalAction(Refusal.WRONG_PHASE, f"cannot {doing} in the {state.phase.value} phase")
    raise IllegalAction(Refusal.NOT_YOUR_TURN, f"it is seat {state.turn}'s turn, not seat {seat}'s")


def _next_seat(state: RoundState, seat: int) -> int:
    return (seat + 1) % state.variant.players


def _apply_bid(state: RoundState, bid: Bid) -> Transition:
    amount = bid.amount
    if not 0 <= amount <= MAX_BID:
        raise IllegalAction(Refusal.INVALID_BID, f"a bid is 1, 2 or 3, or 0 to pass; not {amount}")
    if amount and amount <= state.bid:
        raise IllegalAction(Refusal.BID_TOO_LOW, f"a bid must be higher than {state.bid}")
    history = (*state.history, bid)
    made = BidMade(bid.seat, amount)
    players = state.variant.players
    if amount:
        state = state._replace(bid=amount, bidder=bid.seat, passes=0, history=history)
        if amount == MAX_BID:
            return _choose_landlord(state, made)
        return Transition(state._replace(turn=_next_seat(state, bid.seat)), (made,))
    passes = state.passes + 1
    if state.bidder is None and passes == players:
        thrown = state._replace(phase=Phase.THROWN_IN, passes=passes, history=history)
        return Transition(thrown, (made, ThrownIn()))
    state = state._replace(passes=passes, history=history)
    if state.bidder is not None and passes == state.variant.passes_to_close:
        return _choose_landlord(state, made)
    return Transition(state._replace(turn=_next_seat(state, bid.seat)), (made,))


def _choose_landlord(state: RoundState, made: BidMade) -> Transition:
    landlord = state.bidder
    assert landlord is not None
    kitty = state.deal.kitty
    hands = list(state.hands)
    hands[landlord] = tuple(sorted(hands[landlord] + kitty))
    chosen = state._replace(phase=Phase.PLAY, turn=landlord, landlord=landlord, passes=0, hands=tuple(hands))
    return Transition(chosen, (made, LandlordChosen(landlord, state.bid, kitty)))


#: Builds a state or a transition from all its fields in order, without the named tuple's
#: keyword handling: every action builds both.
_new_state: Callable[[tuple[Any, ...]], RoundState] = functools.partial(tuple.__new__, RoundState)
_new_transition: Callable[[tuple[RoundState, tuple[Event, ...]]], Transition] = functools.partial(
    tuple.__new__, Transition
)
#: The events that carry nothing but a seat, built once per seat (events are immutable).
_PASSED: Table[int, CardsPlayed] = Table(lambda seat: CardsPlayed(seat, (), None))
_TRICK_CLOSED: Table[int, TrickClosed] = Table(TrickClosed)


def _apply_play(state: RoundState, play: Play) -> Transition:
    (variant, deal, house_rules, phase, _, hands, bid, bidder, passes, landlord, last_play, last_player, doublings,
     plays_made, history) = state  # fmt: skip
    seat = play.seat
    cards = play.cards
    history += (play,)
    if not cards:
        if last_play is None:
            raise IllegalAction(Refusal.MUST_LEAD, "the leader of a trick cannot pass")
        passes += 1
        if passes == variant.passes_to_close:
            assert last_player is not None
            closed = _new_state(
                (variant, deal, house_rules, phase, last_player, hands, bid, bidder, 0, landlord, None, None,
                 doublings, plays_made, history)
            )  # fmt: skip
            return _new_transition((closed, (_PASSED[seat], _TRICK_CLOSED[last_player])))
        passed = _new_state(
            (variant, deal, house_rules, phase, (seat + 1) % variant.players, hands, bid, bidder, passes, landlord,
             last_play, last_player, doublings, plays_made, history)
        )  # fmt: skip
        return _new_transition((passed, (_PASSED[seat],)))

    remaining = _remove_from_hand(hands[seat], cards)
    combination = read_ranks(tuple(sorted([card.rank for card in cards])), variant)
    if isinstance(combination, str):
        raise IllegalAction(Refusal.ILLEGAL_COMBINATION, f"[{format_cards(cards)}] is no combination: {combination}")
    if last_play is not None and not beats(combination, last_play):
        raise IllegalAction(Refusal.DOES_NOT_BEAT, f"{combination} does not beat {last_play}")

    doubled = doubles_stake(combination, variant)
    played = CardsPlayed(seat, cards, combination, doubled)
    counted = list(plays_made)
    counted[seat] += 1
    plays_made = tuple(counted)
    held = list(hands)
    held[seat] = remaining
    hands = tuple(held)
    if remaining:
        following = _new_state(
            (variant, deal, house_rules, phase, (seat + 1) % variant.players, hands, bid, bidder, 0, landlord,
             combination, seat, doublings + doubled, plays_made, history)
        )  # fmt: skip
        return _new_transition((following, (played,)))
    finished = _new_state(
        (variant, deal, house_rules, _FINISHED, seat, hands, bid, bidder, 0, landlord, combination, seat,
         doublings + doubled, plays_made, history)
    )  # fmt: skip
    return _new_transition((finished, (played, RoundFinished(seat, seat == landlord))))


def _remove_from_hand(hand: tuple[Card, ...], cards: tuple[Card, ...]) -> tuple[Card, ...]:
    """``hand`` without ``cards``; refused unless the hand holds each of them, each listed once."""
    try:
        positions = sorted(map(hand.index, cards))
    except ValueError:
        positions = []  # a card is not held: say which, after the check for cards listed twice
    remaining: tuple[Card, ...] = ()
    start = 0
    for position in positions:
        if position < start:  # the same position twice
            break
        remaining += hand[start:position]
        start = position + 1
    else:
        if positions:
            return remaining + hand[start:]
    played = set(cards)
    if len(played) != len(cards):
        raise IllegalAction(Refusal.CARDS_NOT_IN_HAND, f"[{format_cards(cards)}] lists a card twice")
    missing = played.difference(hand)
    raise IllegalAction(Refusal.CARDS_NOT_IN_HAND, f"the hand holds no [{format_cards(list(missing))}]")


def legal_bids(state: RoundState) -> list[int]:
    """The amounts the seat to act may bid (0 = pass); empty outside the auction."""
    if state.phase is not _AUCTION:
        return []
    return [0, *range(state.bid + 1, MAX_BID + 1)]


def legal_plays(state: RoundState) -> list[Combination]:
    """The plays the seat to act may make (passing is allowed iff ``state.last_play``)."""
    if state.phase is not _PLAY:
        return []
    return legal_moves(state.hands[state.turn], state.last_play, state.variant)
