"""The two variants as data, and the optional house rules (docs/rules.md sections 1, 6, 9, 10).

Nothing else in the rules core may assume a number of players: every count (hand and
kitty sizes, passes that close a trick, bomb sizes, which plays double the stake, which
combination types exist) is read from a ``Variant``.
"""

from __future__ import annotations

import dataclasses
import enum

from dizhu.rules.cards import Rank

__all__ = [
    "FOUR_PLAYER",
    "THREE_PLAYER",
    "VARIANTS",
    "CombinationKind",
    "HouseRules",
    "Variant",
]


class CombinationKind(enum.IntEnum):
    """The combination types of section 6, numbered as in its table."""

    #: One card.
    SINGLE = 1
    #: Two cards of one rank (4p: also two black or two red jokers).
    PAIR = 2
    #: Three cards of one rank.
    TRIO = 3
    #: A trio plus one card of another rank (3p only).
    TRIO_WITH_SINGLE = 4
    #: A trio plus a pair of another rank.
    TRIO_WITH_PAIR = 5
    #: Five or more consecutive ranks (3..A), one card each.
    STRAIGHT = 6
    #: Three or more consecutive pairs.
    PAIR_SEQUENCE = 7
    #: Two or more consecutive trios (an "airplane").
    TRIO_SEQUENCE = 8
    #: k consecutive trios plus k single kickers of k other ranks (3p only).
    AIRPLANE_WITH_SINGLES = 9
    #: k consecutive trios plus k pairs of k other ranks.
    AIRPLANE_WITH_PAIRS = 10
    #: All cards of one rank, four or more (4p: up to eight).
    BOMB = 11
    #: Both jokers (3p) or all four jokers (4p); beats everything.
    ROCKET = 12
    #: Four of one rank plus two single kickers of two other ranks (3p only).
    QUAD_WITH_TWO_SINGLES = 13
    #: Four of one rank plus two pairs of two other ranks (3p only).
    QUAD_WITH_TWO_PAIRS = 14

    @property
    def label(self) -> str:
        """A lower-case human name, e.g. ``"airplane with singles"``."""
        return self.name.lower().replace("_", " ")


@dataclasses.dataclass(frozen=True, slots=True)
class HouseRules:
    """Optional rules the text does not have (section 10); every switch is off by default."""

    #: Spring: the stake doubles once more when the losing side (nearly) never played.
    spring: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class Variant:
    """Everything that differs between the 3- and 4-player games."""

    #: A stable name: ``"3p"`` or ``"4p"``.
    name: str
    players: int
    #: How many 54-card decks (with both jokers) are shuffled together.
    decks: int
    hand_size: int
    kitty_size: int
    #: Combination types that exist in this variant (section 6).
    kinds: frozenset[CombinationKind]
    #: Largest bomb: every card of one rank (4 in 3p, 8 in 4p).
    max_bomb_size: int
    #: Smallest bomb that doubles the stake (section 9).
    min_doubling_bomb_size: int
    #: Default cap on consecutive redeals when everybody passes (section 4).
    default_redeal_cap: int = 10

    @property
    def passes_to_close(self) -> int:
        """Consecutive passes that close a trick or an auction: every other player's."""
        return self.players - 1

    @property
    def rocket_size(self) -> int:
        """Cards in the rocket: every joker in the deck."""
        return 2 * self.decks

    @property
    def deck_size(self) -> int:
        return 54 * self.decks

    @property
    def landlord_hand_size(self) -> int:
        return self.hand_size + self.kitty_size

    def copies(self, rank: int) -> int:
        """How many cards of ``rank`` the deck holds: one per deck of each joker, four of the rest."""
        return self.decks if rank >= Rank.BLACK_JOKER else 4 * self.decks

    def __str__(self) -> str:
        return self.name


_ALL_KINDS = frozenset(CombinationKind)

THREE_PLAYER = Variant(
    name="3p",
    players=3,
    decks=1,
    hand_size=17,
    kitty_size=3,
    kinds=_ALL_KINDS,
    max_bomb_size=4,
    min_doubling_bomb_size=4,
)

FOUR_PLAYER = Variant(
    name="4p",
    players=4,
    decks=2,
    hand_size=25,
    kitty_size=8,
    kinds=_ALL_KINDS
    - {
        CombinationKind.TRIO_WITH_SINGLE,
        CombinationKind.AIRPLANE_WITH_SINGLES,
        CombinationKind.QUAD_WITH_TWO_SINGLES,
        CombinationKind.QUAD_WITH_TWO_PAIRS,
    },
    max_bomb_size=8,
    min_doubling_bomb_size=6,
)

#: Variants by name.
VARIANTS: dict[str, Variant] = {v.name: v for v in (THREE_PLAYER, FOUR_PLAYER)}
