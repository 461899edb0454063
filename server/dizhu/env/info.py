"""What seats see, as numpy arrays with a batch dimension: the only input of every encoding.

A ``Seen`` holds, for each of its rows, one seat's information at one moment, at the level of
ranks (``Rank`` values: 0 = 3 ... 14 = RJ; counts by rank are 15-entry rows). The environments
keep one up to date move by move (``dizhu.env.game``; the rows of a vector environment are
its tables, so that one call encodes them all); ``from_state`` builds one from the rules
core's view of a seat (``view_for``, docs/rules.md section 11) and ``dizhu.env.bot`` from a
referee's ``TableView``, and the tests check that all three agree.

``hands`` holds every seat's cards; encodings read only the row of the viewing seat
(``seat``). The environments fill in the other rows (they know them), the two other
builders leave them zero, and the leak test fills them with noise and finds the same
observations.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import numpy.typing as npt

from dizhu.rules import Bid, Phase, RoundState, Variant, view_for

__all__ = ["AUCTION", "NONE", "OVER", "PLAY", "SEEN_ARRAYS", "Seen", "from_state", "rank_counts", "record_moves"]

#: ``Seen.phase`` values.
AUCTION, PLAY, OVER = 0, 1, 2
#: No seat (no bidder, no landlord yet, nobody to beat) and no call yet, in the seat fields.
NONE = -1
RANKS = 15

Array = npt.NDArray[np.int8]
Ints = npt.NDArray[np.int16]


def rank_counts(ranks: object) -> list[int]:
    """Counts by rank of an iterable of ranks."""
    counts = [0] * RANKS
    for rank in ranks:  # type: ignore[attr-defined]
        counts[rank] += 1
    return counts


@dataclasses.dataclass(slots=True)
class Seen:
    """One seat's information per row (see the module docstring)."""

    variant: Variant
    #: ``AUCTION``, ``PLAY`` or ``OVER``.
    phase: Array
    #: The viewing seat.
    seat: Ints
    #: ``(rows, players, 15)``: each seat's cards by rank; only the viewer's row is ever read.
    hands: Array
    #: ``(rows, players)``: how many cards each seat holds (public).
    hand_sizes: Ints
    dealer: Ints
    face_up_rank: Ints
    face_up_seat: Ints
    #: The highest bid so far (the landlord's bid once chosen), its bidder, the landlord (``NONE``).
    bid: Ints
    bidder: Ints
    landlord: Ints
    #: ``(rows, players)``: each seat's last call in this deal's auction (``NONE``, 0 = pass, 1..3).
    calls: Ints
    #: ``(rows, 15)``: the kitty once public (zeros before).
    kitty: Array
    #: ``(rows, players, 15)``: the cards each seat played in this deal, and its last move (a pass: zeros).
    played: Array
    last_moves: Array
    #: ``(rows, 5 x players, 15)``: the last moves of the play phase, oldest first, zeros in front.
    history: Array
    #: ``(rows, 15)``: the play to beat (zeros when leading), its type (0: none) and who made it.
    to_beat: Array
    to_beat_kind: Ints
    last_player: Ints
    #: How many plays doubled the stake.
    doublings: Ints

    @classmethod
    def zeros(cls, variant: Variant, rows: int) -> Seen:
        players = variant.players

        def ints(*shape: int) -> Ints:
            return np.zeros((rows, *shape), dtype=np.int16)

        def cards(*shape: int) -> Array:
            return np.zeros((rows, *shape, RANKS), dtype=np.int8)

        return cls(
            variant=variant, phase=np.zeros(rows, dtype=np.int8), seat=ints(), hands=cards(players),
            hand_sizes=ints(players), dealer=ints(), face_up_rank=ints(), face_up_seat=ints(), bid=ints(),
            bidder=ints() + NONE, landlord=ints() + NONE, calls=ints(players) + NONE, kitty=cards(),
            played=cards(players), last_moves=cards(players), history=cards(5 * players), to_beat=cards(),
            to_beat_kind=ints(), last_player=ints() + NONE, doublings=ints(),
        )  # fmt: skip

    def rows(self, start: int, stop: int) -> Seen:
        """Rows ``start:stop`` as views (writing into them writes into this one)."""
        return Seen(self.variant, *(getattr(self, name)[start:stop] for name in SEEN_ARRAYS))

    def take(self, rows: npt.NDArray[np.integer]) -> Seen:
        """The rows ``rows`` (copies)."""
        return Seen(self.variant, *(getattr(self, name)[rows] for name in SEEN_ARRAYS))

    def copy(self) -> Seen:
        return Seen(self.variant, *(getattr(self, name).copy() for name in SEEN_ARRAYS))

    def same_as(self, other: Seen) -> bool:
        """Whether both hold the same information, the cards of seats other than the viewer's aside."""
        viewer = np.arange(len(self.seat)), self.seat
        if not np.array_equal(self.hands[viewer], other.hands[viewer]):
            return False
        return all(np.array_equal(getattr(self, name), getattr(other, name)) for name in SEEN_ARRAYS if name != "hands")


#: The array fields of a ``Seen``, in order.
SEEN_ARRAYS = tuple(field.name for field in dataclasses.fields(Seen) if field.name != "variant")


def record_moves(seen: Seen, moves: list[tuple[int, list[int]]]) -> None:
    """Write the moves of a deal's play, in order (seat, counts by rank), into the first row of ``seen``."""
    for seat, move in moves:
        seen.played[0, seat] += np.array(move, dtype=np.int8)
        seen.last_moves[0, seat] = move
    recent = [move for _, move in moves[-seen.history.shape[1] :]]
    if recent:
        seen.history[0, -len(recent) :] = recent


def from_state(state: RoundState, seat: int) -> Seen:
    """``seat``'s information in ``state``, read from ``view_for(state, seat)`` only (one row)."""
    view = view_for(state, seat)
    variant = view.variant
    seen = Seen.zeros(variant, 1)
    seen.phase[0] = AUCTION if view.phase is Phase.AUCTION else PLAY if view.phase is Phase.PLAY else OVER
    seen.seat[0] = seat
    assert view.hand is not None
    seen.hands[0, seat] = rank_counts(card.rank for card in view.hand)
    seen.hand_sizes[0] = view.hand_sizes
    seen.dealer[0] = view.dealer
    seen.face_up_rank[0] = view.face_up.rank
    seen.face_up_seat[0] = view.face_up_seat
    seen.bid[0] = view.bid
    seen.bidder[0] = NONE if view.bidder is None else view.bidder
    seen.landlord[0] = NONE if view.landlord is None else view.landlord
    if view.kitty is not None and view.landlord is not None:
        seen.kitty[0] = rank_counts(card.rank for card in view.kitty)
    moves = []
    for action in view.history:
        if isinstance(action, Bid):
            seen.calls[0, action.seat] = action.amount
        else:
            moves.append((action.seat, rank_counts(card.rank for card in action.cards)))
    record_moves(seen, moves)
    if view.phase is Phase.PLAY and view.last_play is not None:
        seen.to_beat[0] = rank_counts(view.last_play.ranks)
        seen.to_beat_kind[0] = view.last_play.kind
        assert view.last_player is not None
        seen.last_player[0] = view.last_player
    seen.doublings[0] = view.doublings
    return seen
