"""Deals consistent with what a seat knows: the other seats' hands drawn from the unseen cards.

Each other seat gets as many cards as it holds; the landlord first gets the kitty cards it must
still hold (``Knowledge.landlord_keeps``); the rest are shuffled among them. During the auction
there is no landlord yet: the kitty is one more hidden hand (``kitty_size`` cards).
"""

from __future__ import annotations

import random

from dizhu.expert.knowledge import Knowledge

__all__ = ["sample_hands"]


def sample_hands(knowledge: Knowledge, rng: random.Random, *, with_kitty: bool = False) -> list[list[int]]:
    """Rank counts of every seat's hand (this seat's as it is), plus the kitty's last when ``with_kitty``.

    Raises ``ValueError`` when the unseen cards are fewer than the other seats hold (a view that
    contradicts itself); when they are more (a view without the history of plays), the extra
    cards are left out, as if played.
    """
    players = knowledge.variant.players
    keeps = knowledge.landlord_keeps
    pool = [rank for rank, n in enumerate(knowledge.unseen) for _ in range(n - keeps[rank])]
    rng.shuffle(pool)
    hands = [[0] * len(knowledge.hand) for _ in range(players + int(with_kitty))]
    hands[knowledge.seat] = list(knowledge.hand)
    wanted = [0 if seat == knowledge.seat else knowledge.sizes[seat] for seat in range(players)]
    if with_kitty:
        wanted.append(knowledge.variant.kitty_size)
    if knowledge.landlord is not None and knowledge.landlord != knowledge.seat:
        hands[knowledge.landlord] = list(keeps)
        wanted[knowledge.landlord] -= sum(keeps)
    if sum(wanted) > len(pool) or min(wanted) < 0:
        raise ValueError("the view's counts contradict each other: fewer unseen cards than hidden ones")
    taken = 0
    for seat, count in enumerate(wanted):
        hand = hands[seat]
        for rank in pool[taken : taken + count]:
            hand[rank] += 1
        taken += count
    return hands
