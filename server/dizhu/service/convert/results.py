"""A round's results as the contract tells them: the deal's reveal, the settlement, the standings."""

from __future__ import annotations

from collections.abc import Sequence

from dizhu.referee import events as ev
from dizhu.referee.table import (
    CloseReason,
    Reveal,
    RoundResult,
    RoundResultKind,
)
from dizhu.service.convert.cards import cards_to_proto
from dizhu.v1 import table_pb2

__all__ = ["CLOSE_REASONS", "OUTCOMES", "reveal_to_proto", "settlement_to_proto", "standings_to_proto"]

#: How each kind of round result is told in the contract.
OUTCOMES = {
    RoundResultKind.LANDLORD_WON: table_pb2.ROUND_OUTCOME_LANDLORD_WON,
    RoundResultKind.FARMERS_WON: table_pb2.ROUND_OUTCOME_FARMERS_WON,
    RoundResultKind.VOID: table_pb2.ROUND_OUTCOME_VOID,
    RoundResultKind.ABANDONED: table_pb2.ROUND_OUTCOME_ABANDONED,
}
#: Why a table closed, as the contract tells it.
CLOSE_REASONS = {
    CloseReason.CLOSED_BY_CREATOR: table_pb2.CLOSE_REASON_CLOSED_BY_CREATOR,
    CloseReason.ROUND_LIMIT: table_pb2.CLOSE_REASON_ROUND_LIMIT,
    CloseReason.ABANDONED: table_pb2.CLOSE_REASON_ABANDONED,
}


def reveal_to_proto(reveal: Reveal) -> table_pb2.DealReveal:
    return table_pb2.DealReveal(
        round=reveal.round,
        deal_number=reveal.deal_number,
        seed=reveal.seed or b"",
        hands=[table_pb2.DealtHand(seat=seat, cards=cards_to_proto(hand)) for seat, hand in enumerate(reveal.hands)],
        kitty=cards_to_proto(reveal.kitty),
    )


def settlement_to_proto(result: RoundResult) -> table_pb2.RoundSettlement:
    settlement = result.settlement
    message = table_pb2.RoundSettlement(
        round=result.round,
        outcome=OUTCOMES[result.kind],
        bid=result.bid,
        doublings=settlement.doublings,
        spring=settlement.spring,
        stake=settlement.stake,
        balance_changes=list(settlement.deltas),
    )
    if settlement.landlord is not None:
        message.landlord_seat = settlement.landlord
    if result.winner is not None:
        message.winner_seat = result.winner
    if result.forfeited_by is not None:
        message.forfeited_seat = result.forfeited_by
    return message


def standings_to_proto(standings: Sequence[ev.Standing]) -> list[table_pb2.Standing]:
    return [table_pb2.Standing(place=s.place, seat=s.seat, player_name=s.name, balance=s.balance) for s in standings]
