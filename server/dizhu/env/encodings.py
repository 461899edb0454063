"""Observation encodings, versioned and specified in docs/env.md.

Every encoding is a pure function of a ``SeatInfo`` (what one seat sees), written into an
int8 vector of a fixed size per variant:

* ``"douzero"`` (v0): DouZero's features, bit for bit in 3p (the 54-dim card vectors, the
  373/484-dim state-action features, the 5x162 history: ``douzero_features``), the same
  scheme for 4p (108-dim card vectors, 5x432 history) and for the auction;
* ``"compact"`` (v0): rank counts, small and role-independent.

A card vector (``card_vector``) writes, for each rank, as many ones as the seat counts cards
of that rank: 4 x decks rows for 3..2, then decks rows for each joker (54 entries in 3p,
108 in 4p). In 3p this is DouZero's ``_cards2array`` exactly.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import cast

import numpy as np
import numpy.typing as npt

from dizhu.env.info import NO_CALL, SeatInfo
from dizhu.rules import MAX_BID, Variant

__all__ = [
    "ENCODINGS",
    "Encoding",
    "card_matrix",
    "card_vector",
    "douzero_features",
    "encoding",
]

Int8Array = npt.NDArray[np.int8]
_NORMAL_RANKS = 13
_RANKS = 15
#: The most plays that can double the stake in a round (13 bombs and the rocket, both variants):
#: DouZero's 15-entry bomb count.
_BOMB_SLOTS = 15


@functools.cache
def _positions(decks: int) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.int8]]:
    """For each entry of a card vector: the rank it counts and how many cards of it switch it on, minus one."""
    width = 4 * decks
    ranks: list[int] = []
    thresholds: list[int] = []
    for rank in range(_RANKS):
        copies = width if rank < _NORMAL_RANKS else decks
        ranks += [rank] * copies
        thresholds += list(range(copies))
    return np.array(ranks, dtype=np.intp), np.array(thresholds, dtype=np.int8)


def card_matrix(rows: Sequence[Sequence[int]], decks: int) -> Int8Array:
    """The card vectors of several card sets given as counts by rank, one row each."""
    ranks, thresholds = _positions(decks)
    counts = np.asarray(rows, dtype=np.int8).reshape(len(rows), _RANKS)
    return cast(Int8Array, (counts[:, ranks] > thresholds).view(np.int8))


def card_vector(counts: Sequence[int], decks: int) -> Int8Array:
    """The card vector of cards given as counts by rank (see the module docstring)."""
    vector: Int8Array = card_matrix([counts], decks)[0]
    return vector


def _rank_counts(ranks: Sequence[int]) -> list[int]:
    counts = [0] * _RANKS
    for rank in ranks:
        counts[rank] += 1
    return counts


def _one_hot(index: int, size: int) -> Int8Array:
    vector = np.zeros(size, dtype=np.int8)
    vector[index % size] = 1  # DouZero's ``one_hot[n - 1]`` wraps for 0 cards left: kept
    return vector


class _Played:
    """What the play phase so far tells: cards played and the last move, by seat."""

    def __init__(self, info: SeatInfo) -> None:
        players = info.variant.players
        self.counts = [[0] * _RANKS for _ in range(players)]
        self.last_move: list[tuple[int, ...]] = [()] * players
        for seat, ranks in info.plays:
            counts = self.counts[seat]
            for rank in ranks:
                counts[rank] += 1
            self.last_move[seat] = ranks


def _history(info: SeatInfo, decks: int) -> Int8Array:
    """The last 5 x players moves of the play phase, oldest first, zero-padded in front."""
    players = info.variant.players
    length = 5 * players
    width = 54 * decks
    recent = info.plays[-length:]
    counts = [[0] * _RANKS] * (length - len(recent)) + [_rank_counts(ranks) for _, ranks in recent]
    return card_matrix(counts, decks).reshape(5, players * width)


def _role(info: SeatInfo) -> int:
    assert info.landlord is not None
    return (info.seat - info.landlord) % info.variant.players


def _others(info: SeatInfo, played: _Played) -> list[int]:
    """Counts by rank of the cards the seat has not seen: held by the other seats, as a whole."""
    variant = info.variant
    unseen = [variant.copies(rank) - info.hand[rank] for rank in range(_RANKS)]
    for counts in played.counts:
        for rank in range(_RANKS):
            unseen[rank] -= counts[rank]
    return unseen


def _state_features(info: SeatInfo) -> Int8Array:
    """DouZero's ``x_no_action`` for the seat (play phase), for either variant."""
    variant = info.variant
    decks = variant.decks
    players = variant.players
    assert info.landlord is not None
    played = _Played(info)
    role = _role(info)
    seat_of = [(info.landlord + r) % players for r in range(players)]
    cards = [info.hand, _others(info, played)]  # the card vectors, in order
    hot: list[tuple[int, int]] = []  # then the one-hot blocks: (index, size)
    if role == 0:
        farmers = [seat_of[r] for r in range(players - 1, 0, -1)]  # landlord_up first, as DouZero
        cards.append(_rank_counts(info.to_beat))
        cards += [played.counts[farmer] for farmer in farmers]
        hot += [(info.hand_sizes[farmer] - 1, variant.hand_size) for farmer in farmers]
    else:
        landlord = seat_of[0]
        mates = [seat_of[r] for r in range(1, players) if r != role]
        cards.append(played.counts[landlord])
        cards += [played.counts[mate] for mate in mates]
        cards.append(_rank_counts(info.to_beat))
        cards.append(_rank_counts(played.last_move[landlord]))
        cards += [_rank_counts(played.last_move[mate]) for mate in mates]
        hot.append((info.hand_sizes[landlord] - 1, variant.landlord_hand_size))
        hot += [(info.hand_sizes[mate] - 1, variant.hand_size) for mate in mates]
    hot.append((info.doublings, _BOMB_SLOTS))
    ones = np.zeros(sum(size for _, size in hot), dtype=np.int8)
    at = 0
    for index, size in hot:
        ones[at + index % size] = 1  # DouZero's ``one_hot[n - 1]`` wraps for 0 cards left: kept
        at += size
    return np.concatenate((card_matrix(cards, decks).ravel(), ones))


def douzero_features(info: SeatInfo, legal: Sequence[Sequence[int]]) -> dict[str, npt.NDArray[np.generic]]:
    """DouZero's ``get_obs`` for the seat to act, with the legal plays ``legal`` (ranks; empty = pass).

    Returns ``x_batch`` (float32, one row per legal play: the state features and the play's
    card vector; 373 columns for the 3p landlord, 484 for a farmer), ``z_batch`` (float32),
    ``x_no_action`` (int8) and ``z`` (int8, 5 x 162 in 3p), as DouZero's own builder does.
    """
    decks = info.variant.decks
    x_no_action = _state_features(info)
    z = _history(info, decks)
    actions = card_matrix([_rank_counts(play) for play in legal], decks)
    x_batch = np.hstack((np.repeat(x_no_action[np.newaxis, :], len(legal), axis=0), actions)).astype(np.float32)
    z_batch = np.repeat(z[np.newaxis, :, :], len(legal), axis=0).astype(np.float32)
    return {"x_batch": x_batch, "z_batch": z_batch, "x_no_action": x_no_action, "z": z}


class Encoding:
    """An encoding: its name, version, size per variant and ``encode(info) -> int8 vector``."""

    name = ""
    version = 0

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self.size = self._size()

    def _size(self) -> int:
        raise NotImplementedError

    def encode(self, info: SeatInfo, out: Int8Array | None = None) -> Int8Array:
        """The observation of ``info`` (written into ``out`` when given)."""
        raise NotImplementedError

    @property
    def high(self) -> int:
        """The largest value an entry takes."""
        return 1


def _auction_block(info: SeatInfo) -> Int8Array:
    """What the auction shows a seat: its hand, the face-up card and who drew it, the calls."""
    variant = info.variant
    players = variant.players
    relative = [(info.seat + r) % players for r in range(players)]
    face_up = [0] * _RANKS
    face_up[info.face_up_rank] = 1
    hand_and_face_up = card_matrix([info.hand, face_up], variant.decks).ravel()
    calls = np.zeros((players, MAX_BID + 2), dtype=np.int8)
    for row, seat in enumerate(relative):
        calls[row, info.calls[seat] + 1] = 1  # column 0: no call yet; 1: pass; 2..4: bid 1..3
    return np.concatenate(
        (
            hand_and_face_up,
            _one_hot((info.face_up_seat - info.seat) % players, players),
            _one_hot((info.dealer - info.seat) % players, players),
            _one_hot(info.bid, MAX_BID + 1),
            calls.ravel(),
        )
    )


class DouZeroEncoding(Encoding):
    """``[auction?, play?] [role one-hot] [auction block] [x_no_action, zero-padded] [z]`` (docs/env.md)."""

    name = "douzero"

    def _size(self) -> int:
        variant = self.variant
        players, decks = variant.players, variant.decks
        card = 54 * decks
        self.auction_size = 2 * card + 2 * players + MAX_BID + 1 + players * (MAX_BID + 2)
        landlord = 3 * card + (players - 1) * (card + variant.hand_size) + _BOMB_SLOTS
        farmer = (3 + 2 * (players - 1)) * card + variant.landlord_hand_size + (players - 2) * variant.hand_size
        self.state_size = max(landlord, farmer + _BOMB_SLOTS)
        self.history_size = 5 * players * card
        return 2 + players + self.auction_size + self.state_size + self.history_size

    def encode(self, info: SeatInfo, out: Int8Array | None = None) -> Int8Array:
        players = self.variant.players
        vector = np.zeros(self.size, dtype=np.int8) if out is None else out
        if out is not None:
            vector.fill(0)
        start = 2 + players
        vector[start : start + self.auction_size] = _auction_block(info)
        start += self.auction_size
        if info.phase == "auction":
            vector[0] = 1
            return vector
        vector[1] = 1
        if info.landlord is None:  # thrown in: nothing beyond the auction
            return vector
        vector[2 + _role(info)] = 1
        state = _state_features(info)
        vector[start : start + len(state)] = state
        start += self.state_size
        vector[start : start + self.history_size] = _history(info, self.variant.decks).ravel()
        return vector


class CompactEncoding(Encoding):
    """Rank counts: ``15``-entry blocks instead of card vectors (docs/env.md)."""

    name = "compact"

    def _size(self) -> int:
        players = self.variant.players
        # phase 2, role N, hand 15, unseen 15, played N x 15, cards left N, to beat 15 + kind 15,
        # its player N, bid 4, bidder N, calls N x 5, doublings 1, kitty 15
        return 2 + players + 15 + 15 + players * 15 + players + 15 + 15 + players + 4 + players + players * 5 + 1 + 15

    @property
    def high(self) -> int:
        return self.variant.landlord_hand_size

    def encode(self, info: SeatInfo, out: Int8Array | None = None) -> Int8Array:
        variant = self.variant
        players = variant.players
        relative = [(info.seat + r) % players for r in range(players)]
        played = _Played(info)
        vector = np.zeros(self.size, dtype=np.int8) if out is None else out
        if out is not None:
            vector.fill(0)
        vector[0 if info.phase == "auction" else 1] = 1
        at = 2
        if info.landlord is not None:
            vector[at + _role(info)] = 1
        at += players
        vector[at : at + 15] = info.hand
        at += 15
        vector[at : at + 15] = _others(info, played)
        at += 15
        for seat in relative:
            vector[at : at + 15] = played.counts[seat]
            at += 15
        vector[at : at + players] = [info.hand_sizes[seat] for seat in relative]
        at += players
        for rank in info.to_beat:
            vector[at + rank] += 1
        at += 15
        vector[at + info.to_beat_kind] = 1 if info.to_beat else 0
        at += 15
        if info.last_player is not None and info.to_beat:
            vector[at + (info.last_player - info.seat) % players] = 1
        at += players
        vector[at + info.bid] = 1
        at += 4
        if info.bidder is not None:
            vector[at + (info.bidder - info.seat) % players] = 1
        at += players
        for row, seat in enumerate(relative):
            vector[at + 5 * row + info.calls[seat] - NO_CALL] = 1
        at += 5 * players
        vector[at] = min(info.doublings, 127)
        at += 1
        if info.kitty is not None:
            vector[at : at + 15] = info.kitty
        return vector


#: The encodings by name.
ENCODINGS: dict[str, type[Encoding]] = {"douzero": DouZeroEncoding, "compact": CompactEncoding}


@functools.cache
def encoding(name: str, variant: Variant) -> Encoding:
    """The encoding called ``name`` for ``variant``."""
    try:
        return ENCODINGS[name](variant)
    except KeyError:
        raise ValueError(f"unknown encoding {name!r}: expected one of {', '.join(ENCODINGS)}") from None
