"""Observation encodings, versioned and specified in docs/env.md.

Every encoding is a function of a ``Seen`` (what seats see, one seat per row) into int8
rows of a fixed size per variant, computed for all rows at once:

* ``"douzero"`` (v0): DouZero's features, bit for bit in 3p (the 54-dim card vectors, the
  373/484-dim state-action features, the 5x162 history: ``douzero_features``), the same
  scheme for 4p (108-dim card vectors, 5x432 history) and for the auction;
* ``"compact"`` (v0): rank counts, small and role-independent.

A card vector (``card_matrix``) writes, for each rank, as many ones as there are cards of that
rank: 4 x decks entries for each of 3..2, then decks entries for each joker (54 in 3p, 108
in 4p). In 3p this is DouZero's ``_cards2array`` exactly.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from dizhu.env.info import AUCTION, NONE, RANKS, Seen
from dizhu.rules import MAX_BID, Variant

__all__ = [
    "ENCODINGS",
    "CompactEncoding",
    "DouZeroEncoding",
    "Encoding",
    "Field",
    "GlobalState",
    "Layout",
    "card_matrix",
    "douzero_features",
    "encoding",
    "global_state",
]

Int8Array = npt.NDArray[np.int8]
AnyArray = npt.NDArray[Any]
_NORMAL_RANKS = 13
#: The most plays that can double the stake in a round (13 bombs and the rocket, both variants):
#: DouZero's 15-entry bomb count.
_BOMB_SLOTS = 15


@functools.cache
def _positions(decks: int) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.int8]]:
    """For each entry of a card vector: the rank it counts, and the count below which it is 0."""
    width = 4 * decks
    ranks: list[int] = []
    thresholds: list[int] = []
    for rank in range(RANKS):
        copies = width if rank < _NORMAL_RANKS else decks
        ranks += [rank] * copies
        thresholds += list(range(copies))
    return np.array(ranks, dtype=np.intp), np.array(thresholds, dtype=np.int8)


def card_matrix(counts: npt.ArrayLike, decks: int) -> Int8Array:
    """The card vectors of card sets given as counts by rank (``(..., 15)`` -> ``(..., 54 x decks)``)."""
    ranks, thresholds = _positions(decks)
    array = np.asarray(counts, dtype=np.int8)
    return cast(Int8Array, (array[..., ranks] > thresholds).view(np.int8))


def _one_hot(index: AnyArray, size: int) -> Int8Array:
    """One row per entry of ``index``; DouZero's ``one_hot[n - 1]`` wraps for 0 cards left, kept."""
    hot = np.zeros((len(index), size), dtype=np.int8)
    hot[np.arange(len(index)), index % size] = 1
    return hot


def _take(per_seat: AnyArray, seats: AnyArray) -> AnyArray:
    """``per_seat[row, seats[row]]`` for each row: ``(rows, players, ...)`` -> ``(rows, ...)``."""
    return per_seat[np.arange(len(seats)), seats]


def _own_hands(seen: Seen) -> Int8Array:
    own: Int8Array = _take(seen.hands, seen.seat)
    return own


def _unseen(seen: Seen) -> Int8Array:
    """Counts by rank of the cards the viewer has not seen (held by the other seats, as a whole)."""
    variant = seen.variant
    copies = np.array([variant.copies(rank) for rank in range(RANKS)], dtype=np.int8)
    return cast(Int8Array, copies - _own_hands(seen) - seen.played.sum(axis=1, dtype=np.int8))


def _roles(seen: Seen) -> npt.NDArray[np.integer]:
    """Each row's role: 0 for the landlord, then 1, 2, ... in turn order after it."""
    return (seen.seat - seen.landlord) % seen.variant.players


def _state_features(seen: Seen, role: int) -> Int8Array:
    """DouZero's ``x_no_action`` of rows whose viewer has ``role`` (play phase), either variant."""
    variant = seen.variant
    players, decks = variant.players, variant.decks
    rows = len(seen.seat)

    def seat_of(r: int) -> npt.NDArray[np.integer]:
        return (seen.landlord + r) % players

    cards = [_own_hands(seen), _unseen(seen)]  # the card vectors, in order
    hot: list[tuple[npt.NDArray[np.integer], int]] = []  # then the one-hot blocks: (index, size)
    if role == 0:
        farmers = [seat_of(r) for r in range(players - 1, 0, -1)]  # landlord_up first, as DouZero
        cards.append(seen.to_beat)
        cards += [_take(seen.played, farmer) for farmer in farmers]
        hot += [(_take(seen.hand_sizes, farmer) - 1, variant.hand_size) for farmer in farmers]
    else:
        landlord = seat_of(0)
        mates = [seat_of(r) for r in range(1, players) if r != role]
        cards.append(_take(seen.played, landlord))
        cards += [_take(seen.played, mate) for mate in mates]
        cards.append(seen.to_beat)
        cards.append(_take(seen.last_moves, landlord))
        cards += [_take(seen.last_moves, mate) for mate in mates]
        hot.append((_take(seen.hand_sizes, landlord) - 1, variant.landlord_hand_size))
        hot += [(_take(seen.hand_sizes, mate) - 1, variant.hand_size) for mate in mates]
    hot.append((seen.doublings, _BOMB_SLOTS))
    vectors = card_matrix(np.stack(cards, axis=1), decks).reshape(rows, -1)
    return np.concatenate([vectors, *(_one_hot(index, size) for index, size in hot)], axis=1)


def _history(seen: Seen) -> Int8Array:
    """``(rows, 5, players x card vector)``: the last 5 x players moves, oldest first."""
    rows = len(seen.seat)
    return card_matrix(seen.history, seen.variant.decks).reshape(rows, 5, -1)


def douzero_features(seen: Seen, legal: Sequence[Sequence[int]]) -> dict[str, npt.NDArray[np.generic]]:
    """DouZero's ``get_obs`` for the first row's viewer, the seat to act, with its legal plays ``legal``
    (each as counts by rank; zeros for the pass).

    Returns ``x_batch`` (float32, one row per legal play: the state features and the play's
    card vector; 373 columns for the 3p landlord, 484 for a farmer), ``z_batch`` (float32),
    ``x_no_action`` (int8) and ``z`` (int8, 5 x 162 in 3p), as DouZero's own builder does.
    """
    one = seen.rows(0, 1)
    x_no_action = _state_features(one, int(_roles(one)[0]))[0]
    z = _history(one)[0]
    actions = card_matrix(np.asarray(legal, dtype=np.int8).reshape(len(legal), RANKS), seen.variant.decks)
    x_batch = np.hstack((np.repeat(x_no_action[np.newaxis, :], len(legal), axis=0), actions)).astype(np.float32)
    z_batch = np.repeat(z[np.newaxis, :, :], len(legal), axis=0).astype(np.float32)
    return {"x_batch": x_batch, "z_batch": z_batch, "x_no_action": x_no_action, "z": z}


@dataclasses.dataclass(frozen=True, slots=True)
class Field:
    """A named part of an encoded row: ``shape`` entries from ``start`` on, row-major."""

    name: str
    start: int
    shape: tuple[int, ...]

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def stop(self) -> int:
        return self.start + self.size

    @property
    def slice(self) -> slice:
        return slice(self.start, self.stop)


class Layout:
    """The named slices of an encoding, in order, covering every entry once."""

    def __init__(self, parts: Sequence[tuple[str, tuple[int, ...]]]) -> None:
        fields = []
        start = 0
        for name, shape in parts:
            fields.append(Field(name, start, shape))
            start += fields[-1].size
        #: Every field, in order.
        self.fields: tuple[Field, ...] = tuple(fields)
        #: The entries of a row.
        self.size = start
        self._by_name = {field.name: field for field in fields}

    def __getitem__(self, name: str) -> Field:
        return self._by_name[name]

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def view(self, rows: npt.NDArray[Any], name: str) -> npt.NDArray[Any]:
        """Field ``name`` of one row (``(size,)``) or of many (``(..., size)``), shaped as the field."""
        field = self._by_name[name]
        part: npt.NDArray[Any] = rows[..., field.slice]
        return part.reshape(*rows.shape[:-1], *field.shape)


class Encoding:
    """An encoding: its name, version, size per variant, its ``layout`` (named slices) and
    ``encode(seen) -> (rows, size) int8``."""

    name = ""
    version = 0

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self.layout = Layout(self._parts())
        self.size = self.layout.size

    def _parts(self) -> list[tuple[str, tuple[int, ...]]]:
        """The layout's fields, in order: (name, shape)."""
        raise NotImplementedError

    def encode(self, seen: Seen, out: Int8Array | None = None) -> Int8Array:
        """The observations of every row of ``seen`` (written into ``out`` when given)."""
        rows = np.zeros((len(seen.seat), self.size), dtype=np.int8) if out is None else out
        if out is not None:
            rows.fill(0)
        self._write(seen, rows)
        return rows

    def _write(self, seen: Seen, out: Int8Array) -> None:
        raise NotImplementedError

    @property
    def high(self) -> int:
        """The largest value an entry takes."""
        return 1


def _relative(seen: Seen, seats: npt.NDArray[np.integer]) -> npt.NDArray[np.integer]:
    """Seats counted from the viewer on (0: the viewer, 1: the next seat, ...)."""
    return (seats - seen.seat) % seen.variant.players


def _by_viewer(seen: Seen, per_seat: AnyArray) -> AnyArray:
    """``(rows, players, ...)`` reordered per row from the viewer on, in turn order."""
    players = seen.variant.players
    order = (seen.seat[:, np.newaxis] + np.arange(players)) % players
    reordered: AnyArray = per_seat[np.arange(len(seen.seat))[:, np.newaxis], order]
    return reordered


def _auction_block(seen: Seen) -> Int8Array:
    """The hand, the face-up card and who drew it, the dealer, the highest bid, every seat's last call."""
    variant = seen.variant
    players = variant.players
    rows = len(seen.seat)
    face_up = np.zeros((rows, RANKS), dtype=np.int8)
    face_up[np.arange(rows), seen.face_up_rank] = 1
    vectors = card_matrix(np.stack((_own_hands(seen), face_up), axis=1), variant.decks).reshape(rows, -1)
    calls = _by_viewer(seen, seen.calls) - NONE  # 0: no call yet; 1: pass; 2..4: bid 1..3
    return np.concatenate(
        (
            vectors,
            _one_hot(_relative(seen, seen.face_up_seat), players),
            _one_hot(_relative(seen, seen.dealer), players),
            _one_hot(seen.bid, MAX_BID + 1),
            _one_hot(calls.ravel(), MAX_BID + 2).reshape(rows, -1),
        ),
        axis=1,
    )


class DouZeroEncoding(Encoding):
    """``[auction?, play?] [role one-hot] [auction block] [x_no_action, zero-padded] [z]`` (docs/env.md)."""

    name = "douzero"

    def _parts(self) -> list[tuple[str, tuple[int, ...]]]:
        variant = self.variant
        players, decks = variant.players, variant.decks
        card = 54 * decks
        self.auction_size = 2 * card + 2 * players + MAX_BID + 1 + players * (MAX_BID + 2)
        landlord = 3 * card + (players - 1) * (card + variant.hand_size) + _BOMB_SLOTS
        farmer = (3 + 2 * (players - 1)) * card + variant.landlord_hand_size + (players - 2) * variant.hand_size
        self.state_size = max(landlord, farmer + _BOMB_SLOTS)
        self.history_size = 5 * players * card
        return [
            ("phase", (2,)),  # auction, play
            ("role", (players,)),  # landlord, the seat after it, ...
            # The auction block: the hand's and the face-up card's card vectors, one-hots of the
            # face-up seat and the dealer (from the viewer on), the highest bid, each seat's call.
            ("auction_hand", (card,)),
            ("auction_face_up", (card,)),
            ("face_up_seat", (players,)),
            ("dealer", (players,)),
            ("bid", (MAX_BID + 1,)),
            ("calls", (players, MAX_BID + 2)),
            ("state", (self.state_size,)),  # DouZero's x_no_action, zero-padded; its parts depend on the role
            ("history", (5, players * card)),  # DouZero's z
        ]

    def _write(self, seen: Seen, out: Int8Array) -> None:
        players = self.variant.players
        in_auction = seen.phase == AUCTION
        out[:, 0] = in_auction
        out[:, 1] = ~in_auction
        start = 2 + players
        out[:, start : start + self.auction_size] = _auction_block(seen)
        start += self.auction_size
        dealt = np.flatnonzero(~in_auction & (seen.landlord != NONE))  # not thrown in
        if not len(dealt):
            return
        chosen = seen if len(dealt) == len(seen.seat) else seen.take(dealt)
        roles = _roles(chosen)
        out[dealt, 2 + roles] = 1
        for role in range(players):
            mine = np.flatnonzero(roles == role)
            if len(mine):
                features = _state_features(chosen.take(mine), role)
                out[dealt[mine], start : start + features.shape[1]] = features
        start += self.state_size
        out[dealt, start : start + self.history_size] = _history(chosen).reshape(len(dealt), -1)


def _trick_and_auction(players: int) -> list[tuple[str, tuple[int, ...]]]:
    """The public fields of the running trick and of the auction, as both the compact observation
    and the global state lay them out."""
    return [
        ("to_beat", (RANKS,)),
        ("to_beat_kind", (15,)),
        ("to_beat_player", (players,)),
        ("bid", (MAX_BID + 1,)),
        ("bidder", (players,)),
        ("calls", (players, MAX_BID + 2)),
        ("doublings", (1,)),
    ]


class CompactEncoding(Encoding):
    """Rank counts: 15-entry blocks instead of card vectors (docs/env.md)."""

    name = "compact"

    def _parts(self) -> list[tuple[str, tuple[int, ...]]]:
        players = self.variant.players
        # Seats are counted from the viewer on, in turn order.
        return [
            ("phase", (2,)),
            ("role", (players,)),
            ("hand", (RANKS,)),
            ("unseen", (RANKS,)),
            ("played", (players, RANKS)),
            ("cards_left", (players,)),
            *_trick_and_auction(players),
            ("kitty", (RANKS,)),
        ]

    @property
    def high(self) -> int:
        return self.variant.landlord_hand_size

    def _write(self, seen: Seen, out: Int8Array) -> None:
        players = self.variant.players
        at = {field.name: field.start for field in self.layout.fields}
        rows = np.arange(len(seen.seat))
        out[rows, np.where(seen.phase == AUCTION, 0, 1)] = 1
        chosen = seen.landlord != NONE
        out[rows[chosen], at["role"] + _roles(seen)[chosen]] = 1
        blocks = {
            "hand": _own_hands(seen),
            "unseen": _unseen(seen),
            "played": _by_viewer(seen, seen.played).reshape(len(rows), -1),
            "cards_left": _by_viewer(seen, seen.hand_sizes).astype(np.int8),
            "to_beat": seen.to_beat,
            "kitty": seen.kitty,
        }
        for name, block in blocks.items():
            out[:, self.layout[name].slice] = block
        beaten = seen.to_beat_kind != 0
        out[rows[beaten], at["to_beat_kind"] + seen.to_beat_kind[beaten]] = 1
        out[rows[beaten], at["to_beat_player"] + _relative(seen, seen.last_player)[beaten]] = 1
        out[rows, at["bid"] + seen.bid] = 1
        bid = seen.bidder != NONE
        out[rows[bid], at["bidder"] + _relative(seen, seen.bidder)[bid]] = 1
        calls = _by_viewer(seen, seen.calls) - NONE
        out[rows[:, np.newaxis], at["calls"] + 5 * np.arange(players) + calls] = 1
        out[:, at["doublings"]] = np.minimum(seen.doublings, 127)


class GlobalState(Encoding):
    """The whole table, every hand included: a centralised critic's input, never a seat's
    observation (docs/env.md). Seats are absolute (seat 0 first), the same whoever is to act."""

    name = "state"

    def _parts(self) -> list[tuple[str, tuple[int, ...]]]:
        players = self.variant.players
        return [
            ("phase", (3,)),  # auction, play, over
            ("turn", (players,)),  # the seat to act (none once over)
            ("dealer", (players,)),
            ("landlord", (players,)),
            ("hands", (players, RANKS)),
            ("played", (players, RANKS)),
            ("last_moves", (players, RANKS)),
            ("kitty", (RANKS,)),
            *_trick_and_auction(players),
        ]

    @property
    def high(self) -> int:
        return self.variant.landlord_hand_size

    def _write(self, seen: Seen, out: Int8Array) -> None:
        """Every row's table; ``seen.seat`` holds the seat to act, or ``NONE`` once the round is over."""
        at = {field.name: field.start for field in self.layout.fields}
        rows = np.arange(len(seen.seat))
        out[rows, at["phase"] + seen.phase] = 1
        acting = seen.seat != NONE
        out[rows[acting], at["turn"] + seen.seat[acting]] = 1
        out[rows, at["dealer"] + seen.dealer] = 1
        chosen = seen.landlord != NONE
        out[rows[chosen], at["landlord"] + seen.landlord[chosen]] = 1
        for name in ("hands", "played", "last_moves"):
            out[:, self.layout[name].slice] = getattr(seen, name).reshape(len(rows), -1)
        out[:, self.layout["kitty"].slice] = seen.kitty
        out[:, self.layout["to_beat"].slice] = seen.to_beat
        beaten = seen.to_beat_kind != 0
        out[rows[beaten], at["to_beat_kind"] + seen.to_beat_kind[beaten]] = 1
        out[rows[beaten], at["to_beat_player"] + seen.last_player[beaten]] = 1
        out[rows, at["bid"] + seen.bid] = 1
        bid = seen.bidder != NONE
        out[rows[bid], at["bidder"] + seen.bidder[bid]] = 1
        calls = seen.calls - NONE  # 0: no call yet; 1: pass; 2..4: bid 1..3
        out[rows[:, np.newaxis], at["calls"] + 5 * np.arange(self.variant.players) + calls] = 1
        out[:, at["doublings"]] = np.minimum(seen.doublings, 127)


#: The encodings by name.
ENCODINGS: dict[str, type[Encoding]] = {"douzero": DouZeroEncoding, "compact": CompactEncoding}


@functools.cache
def global_state(variant: Variant) -> GlobalState:
    """The global state's encoding of ``variant`` (full information: for centralised critics only)."""
    return GlobalState(variant)


@functools.cache
def encoding(name: str, variant: Variant) -> Encoding:
    """The encoding called ``name`` for ``variant``."""
    try:
        return ENCODINGS[name](variant)
    except KeyError:
        raise ValueError(f"unknown encoding {name!r}: expected one of {', '.join(ENCODINGS)}") from None
