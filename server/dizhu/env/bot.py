"""``PolicyBot``: an environment policy playing at a real referee, unchanged, as a ``dizhu.client.Bot``.

The bot builds what the seat sees (a ``Seen``) from the referee's ``TableView`` (the seat's view:
its hand, the auction, the trick, the history of the deal), encodes it with the
environment's encoding, builds the action mask from the action table and the legal moves
the referee's ``RulesService`` lists, and asks the policy -- ``policy(observation,
action_mask) -> action``, the signature of ``DouDizhuEnv``'s policies. An illegal answer is
replaced as in the environments: the pass when allowed, else the lowest legal action.

A trained policy enters a tournament with ``dizhu tournament`` as any bot class does, e.g.
``bot = "linear_baseline:TrainedBot"`` for ``examples/linear_baseline.py`` (docs/env.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dizhu.client import Bot
from dizhu.env.actions import PASS, action_table
from dizhu.env.encodings import encoding
from dizhu.env.info import AUCTION, OVER, PLAY, Seen, rank_counts, record_moves
from dizhu.env.single import Policy
from dizhu.rules import VARIANTS
from dizhu.v1 import cards_pb2, rules_service_pb2, table_pb2

__all__ = ["PolicyBot", "seen_in"]

_VARIANTS = {cards_pb2.VARIANT_THREE_PLAYER: VARIANTS["3p"], cards_pb2.VARIANT_FOUR_PLAYER: VARIANTS["4p"]}


def _rank(card: cards_pb2.Card) -> int:
    return int(card.rank) - 1  # the contract numbers ranks from 1 (RANK_THREE)


def _counts(cards: Sequence[cards_pb2.Card]) -> list[int]:
    return rank_counts(_rank(card) for card in cards)


def seen_in(view: table_pb2.TableView) -> Seen:
    """What the viewing seat sees in a referee's ``TableView`` (one row; other hands left zero)."""
    variant = _VARIANTS[view.settings.variant]
    seat = view.your_seat
    seen = Seen.zeros(variant, 1)
    in_play = view.phase == table_pb2.PHASE_PLAY
    seen.phase[0] = AUCTION if view.phase == table_pb2.PHASE_AUCTION else PLAY if in_play else OVER
    seen.seat[0] = seat
    seen.hands[0, seat] = _counts(view.your_hand)
    seen.hand_sizes[0] = [entry.cards_left for entry in view.seats]
    seen.dealer[0] = view.dealer_seat
    seen.face_up_rank[0] = _rank(view.face_up_card)
    seen.face_up_seat[0] = view.face_up_seat
    seen.bid[0] = view.highest_bid
    for bid in view.bids:
        seen.calls[0, bid.seat] = bid.amount
        if bid.amount:
            seen.bidder[0] = bid.seat
    if view.HasField("landlord_seat"):
        seen.landlord[0] = view.landlord_seat
        seen.kitty[0] = _counts(view.kitty)
    record_moves(
        seen,
        [
            (action.seat, _counts(action.cards))
            for action in view.history
            if action.deal_number == view.deal_number and not action.HasField("bid")
        ],
    )
    if in_play and view.HasField("to_beat"):  # unset when the seat leads
        seen.to_beat[0] = _counts(view.to_beat.cards)
        # The contract numbers CombinationKind as the rules core does (docs/rules.md §6).
        seen.to_beat_kind[0] = view.to_beat.combination.kind
        seen.last_player[0] = view.to_beat.seat
    seen.doublings[0] = view.doublings
    return seen


class PolicyBot(Bot):
    """Plays ``policy`` with the observations of ``encoding`` (the one it was trained with)."""

    name = "policy"

    def __init__(self, policy: Policy, *, encoding: str = "douzero", name: str | None = None) -> None:
        self.policy = policy
        self.encoding = encoding
        if name is not None:
            self.name = name
        #: Every decision's observation and mask, in order, when ``record`` is set (tests, debugging).
        self.record: list[tuple[np.ndarray, np.ndarray]] | None = None

    def _decide(self, view: table_pb2.TableView, legal: list[int]) -> int:
        seen = seen_in(view)
        table = action_table(seen.variant)
        observation = encoding(self.encoding, seen.variant).encode(seen)[0]
        mask = table.mask(legal)
        if self.record is not None:
            self.record.append((observation, mask))
        chosen = int(self.policy(observation, mask))
        return chosen if chosen in legal else legal[0]

    def choose_bid(self, view: table_pb2.TableView) -> int:
        return self._decide(view, list(view.legal_bids))  # bid amounts are their action indices (PASS = 0)

    def choose_play(
        self, view: table_pb2.TableView, legal: list[rules_service_pb2.LegalMove], can_pass: bool
    ) -> Sequence[cards_pb2.Card]:
        table = action_table(_VARIANTS[view.settings.variant])
        by_index = {table.index_of_ranks(tuple(sorted(_rank(card) for card in move.cards))): move for move in legal}
        indices = sorted(by_index)
        chosen = self._decide(view, [PASS, *indices] if can_pass else indices)
        return [] if chosen == PASS else list(by_index[chosen].cards)
