"""The seeded deal and the seed commitment (docs/rules.md sections 3 and 8).

The algorithm, stable across releases (``docs/deal.md`` restates it with test vectors):

1. **Stream.** Block ``i`` (i = 0, 1, 2, ...) is ``SHA-256("dizhu/deal/v1" || seed || u32be(i))``;
   each block gives eight 32-bit big-endian words, read in order.
2. **Uniform draw** ``below(n)``: take the next word ``w``; if ``w >= 2**32 - (2**32 mod n)``
   discard it and take another; return ``w mod n``.
3. **Shuffle.** Start from the canonical card ids ``0 .. 54*decks - 1`` in order and run
   Fisher-Yates from the top: for ``i`` from ``len - 1`` down to ``1``, swap positions ``i`` and
   ``below(i + 1)``.
4. **Face-up card.** ``f = below(players * hand_size)``: the card at position ``f`` of the
   shuffled deck (always a dealt card, never the kitty: Decision of section 3).
5. **Draw.** Position ``p < players * hand_size`` goes to seat ``(dealer + 1 + p) mod players``;
   the remaining positions are the kitty, in order. The face-up card's seat bids first.

The commitment published before the auction is ``SHA-256(seed)``; the seed is revealed
when the round is over.
"""

from __future__ import annotations

import dataclasses
import hashlib
import secrets
import struct
from collections.abc import Iterator, Sequence
from itertools import chain, count

from dizhu.rules.cards import CARDS_PER_DECK, Card, card_by_id, cards_by_id, sorted_cards
from dizhu.rules.engines import NativeRules, native_rules
from dizhu.rules.variants import Variant

__all__ = ["SEED_SIZE", "Deal", "commitment", "deal", "deal_with", "derive_seed", "new_seed", "shuffled_ids"]

SEED_SIZE = 32
_STREAM_LABEL = b"dizhu/deal/v1"
_DERIVE_LABEL = b"dizhu/derive/v1"


@dataclasses.dataclass(frozen=True, slots=True)
class Deal:
    """The outcome of a deal: every hand, the kitty, the face-up card and who drew it."""

    variant: Variant
    dealer: int
    #: The hands, indexed by seat, each sorted by rank.
    hands: tuple[tuple[Card, ...], ...]
    kitty: tuple[Card, ...]
    face_up: Card
    #: The seat that drew the face-up card: it bids first.
    face_up_seat: int
    #: The round seed, or None for a deal arranged by hand (tests, teaching).
    seed: bytes | None = None

    @property
    def commitment(self) -> bytes | None:
        """SHA-256 of the seed, published before the auction (None for arranged deals)."""
        return None if self.seed is None else commitment(self.seed)

    @classmethod
    def arranged(
        cls,
        variant: Variant,
        hands: Sequence[Sequence[Card]],
        kitty: Sequence[Card],
        *,
        dealer: int = 0,
        face_up_seat: int | None = None,
    ) -> Deal:
        """A deal of given hands, not drawn from a seed (for tests and examples).

        The face-up card is the first card of ``face_up_seat`` (default: the seat after
        the dealer). Raises ``ValueError`` unless the cards are exactly one variant's deck.
        """
        seat = (dealer + 1) % variant.players if face_up_seat is None else face_up_seat
        sorted_hands = tuple(tuple(sorted(hand)) for hand in hands)
        every_card = [card for hand in sorted_hands for card in hand] + list(kitty)
        if len(sorted_hands) != variant.players or any(len(h) != variant.hand_size for h in sorted_hands):
            raise ValueError(f"{variant.name} deals {variant.players} hands of {variant.hand_size} cards")
        if len(kitty) != variant.kitty_size or sorted(every_card) != sorted(cards_by_id(range(variant.deck_size))):
            raise ValueError(f"hands and kitty must be exactly the {variant.name} deck")
        return cls(variant, dealer, sorted_hands, tuple(kitty), sorted_hands[seat][0], seat)


def commitment(seed: bytes) -> bytes:
    """The published commitment to a seed: its SHA-256 digest."""
    return hashlib.sha256(seed).digest()


def new_seed() -> bytes:
    """A fresh random round seed from the operating system's CSPRNG."""
    return secrets.token_bytes(SEED_SIZE)


def derive_seed(seed: bytes, label: str, index: int) -> bytes:
    """A seed derived from another, e.g. for the n-th redeal of a round with a given seed.

    ``SHA-256("dizhu/derive/v1" || u8(len(label)) || label || seed || u32be(index))``.
    """
    encoded = label.encode()
    return hashlib.sha256(_DERIVE_LABEL + bytes([len(encoded)]) + encoded + seed + index.to_bytes(4, "big")).digest()


def _limit(n: int) -> int:
    """Words at or above this are discarded when drawing below ``n`` (step 2)."""
    return 2**32 - (2**32 % n)


#: ``_LIMITS[n]`` for every n a deal draws with (up to two decks).
_LIMITS = (0, *(_limit(n) for n in range(1, 2 * CARDS_PER_DECK + 1)))
#: A block of the stream: eight 32-bit big-endian words.
_WORDS = struct.Struct(">8I")


class _Stream:
    """The deterministic stream of uniform draws of step 1 and 2."""

    def __init__(self, seed: bytes) -> None:
        prefix = _STREAM_LABEL + seed
        blocks = (hashlib.sha256(prefix + counter.to_bytes(4, "big")).digest() for counter in count())
        #: The words of every block in order, unpacked eight at a time.
        self._words: Iterator[int] = chain.from_iterable(map(_WORDS.unpack, blocks))

    def below(self, n: int) -> int:
        limit = _LIMITS[n] if n < len(_LIMITS) else _limit(n)
        words = self._words
        word = next(words)
        while word >= limit:
            word = next(words)
        return word % n


def shuffled_ids(seed: bytes, deck_size: int) -> tuple[list[int], _Stream]:
    """Step 3: the shuffled card ids, and the stream positioned after the shuffle."""
    stream = _Stream(seed)
    below = stream.below
    order = list(range(deck_size))
    for i in range(deck_size - 1, 0, -1):
        j = below(i + 1)
        order[i], order[j] = order[j], order[i]
    return order, stream


def deal(seed: bytes, variant: Variant, dealer: int) -> Deal:
    """Deal a round of ``variant`` from a 32-byte ``seed``, ``dealer`` dealing."""
    return deal_with(native_rules(variant), seed, variant, dealer)


def deal_with(native: NativeRules | None, seed: bytes, variant: Variant, dealer: int) -> Deal:
    """``deal``, shuffled by the native engine's rules ``native`` or, when None, here."""
    if len(seed) != SEED_SIZE:
        raise ValueError(f"a round seed is {SEED_SIZE} bytes, not {len(seed)}")
    if not 0 <= dealer < variant.players:
        raise ValueError(f"{variant.name} has no seat {dealer}")
    players = variant.players
    dealt = players * variant.hand_size
    if native is not None:
        order, face_up_position = native.shuffle(seed)
    else:
        order, stream = shuffled_ids(seed, variant.deck_size)
        face_up_position = stream.below(dealt)
    # Position p goes to seat (dealer + 1 + p) mod players: seat s takes every players-th
    # position from (s - dealer - 1) mod players.
    hands = tuple(sorted_cards(order[(seat - dealer - 1) % players : dealt : players]) for seat in range(players))
    return Deal(
        variant=variant,
        dealer=dealer,
        hands=hands,
        kitty=cards_by_id(order[dealt:]),
        face_up=card_by_id(order[face_up_position]),
        face_up_seat=(dealer + 1 + face_up_position) % players,
        seed=seed,
    )
