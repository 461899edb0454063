"""``PolicyBot``: an environment policy playing at a real referee, unchanged, as a ``dizhu.client.Bot``.

The bot builds the seat's ``SeatInfo`` from the referee's ``TableView`` (the seat's view:
its hand, the auction, the trick, the history of the deal), encodes it with the
environment's encoding, builds the action mask from the action table and the legal moves
the referee's ``RulesService`` lists, and asks the policy -- ``policy(observation,
action_mask) -> action``, the signature of ``DouDizhuEnv``'s policies. An illegal answer is
replaced as in the environments: the pass when allowed, else the lowest legal action.

A trained policy enters a tournament with ``dizhu tournament`` as any bot file does, e.g.
``examples/train_linear.py:TrainedBot`` (docs/env.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dizhu.client import Bot
from dizhu.client.bot import to_beat
from dizhu.env.actions import PASS, action_table
from dizhu.env.encodings import encoding
from dizhu.env.info import NO_CALL, SeatInfo
from dizhu.env.single import Policy
from dizhu.rules import RANKS, VARIANTS, classify
from dizhu.v1 import cards_pb2, rules_service_pb2, table_pb2

__all__ = ["PolicyBot", "seat_info"]

_VARIANTS = {cards_pb2.VARIANT_THREE_PLAYER: VARIANTS["3p"], cards_pb2.VARIANT_FOUR_PLAYER: VARIANTS["4p"]}


def _rank(card: cards_pb2.Card) -> int:
    return int(card.rank) - 1  # the contract numbers ranks from 1 (RANK_THREE)


def _counts(cards: Sequence[cards_pb2.Card]) -> list[int]:
    counts = [0] * 15
    for card in cards:
        counts[_rank(card)] += 1
    return counts


def seat_info(view: table_pb2.TableView) -> SeatInfo:
    """The ``SeatInfo`` of the viewing seat in a referee's ``TableView`` (during a deal)."""
    variant = _VARIANTS[view.settings.variant]
    seat = view.your_seat
    calls = [NO_CALL] * variant.players
    bidder = None
    for bid in view.bids:
        calls[bid.seat] = bid.amount
        if bid.amount:
            bidder = bid.seat
    plays = [
        (action.seat, tuple(sorted(_rank(card) for card in action.cards)))
        for action in view.history
        if action.deal_number == view.deal_number and not action.HasField("bid")
    ]
    in_play = view.phase == table_pb2.PHASE_PLAY
    beat = to_beat(view) if in_play else None
    beat_ranks = tuple(sorted(_rank(card) for card in beat)) if beat else ()
    last_player = None
    if beat:
        last_player = next(entry.seat for entry in reversed(view.trick.plays) if entry.cards)
    landlord = view.landlord_seat if view.HasField("landlord_seat") else None
    return SeatInfo(
        variant=variant,
        seat=seat,
        phase="auction" if view.phase == table_pb2.PHASE_AUCTION else "play" if in_play else "over",
        hand=_counts(view.your_hand),
        hand_sizes=tuple(entry.cards_left for entry in view.seats),
        dealer=view.dealer_seat,
        face_up_rank=_rank(view.face_up_card),
        face_up_seat=view.face_up_seat,
        bid=view.highest_bid,
        bidder=bidder,
        landlord=landlord,
        calls=calls,
        kitty=_counts(view.kitty) if landlord is not None else None,
        plays=plays,
        to_beat=beat_ranks,
        to_beat_kind=int(classify([RANKS[rank] for rank in beat_ranks], variant).kind) if beat_ranks else 0,
        last_player=last_player,
        doublings=view.doublings,
    )


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
        info = seat_info(view)
        table = action_table(info.variant)
        observation = encoding(self.encoding, info.variant).encode(info)
        mask = table.mask(legal)
        if self.record is not None:
            self.record.append((observation, mask))
        chosen = int(self.policy(observation, mask))
        return chosen if chosen in legal else legal[0]

    def choose_bid(self, view: table_pb2.TableView) -> int:
        return self._decide(view, [PASS, *range(view.highest_bid + 1, 4)])

    def choose_play(
        self, view: table_pb2.TableView, legal: list[rules_service_pb2.LegalMove], can_pass: bool
    ) -> Sequence[cards_pb2.Card]:
        table = action_table(_VARIANTS[view.settings.variant])
        by_index = {table.index_of_ranks(tuple(sorted(_rank(card) for card in move.cards))): move for move in legal}
        indices = sorted(by_index)
        chosen = self._decide(view, [PASS, *indices] if can_pass else indices)
        return [] if chosen == PASS else list(by_index[chosen].cards)
