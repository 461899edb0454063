"""A table event as one viewer may see it (``WatchTable``'s stream)."""

from __future__ import annotations

from dizhu.referee import events as ev
from dizhu.referee.table import (
    RoundResultKind,
)
from dizhu.service.convert.cards import DOUBLING_CAUSES, card_to_proto, cards_to_proto, combination_to_proto
from dizhu.service.convert.results import CLOSE_REASONS, reveal_to_proto, settlement_to_proto, standings_to_proto
from dizhu.v1 import events_pb2

__all__ = ["event_to_proto"]


def event_to_proto(event: ev.TableEvent, viewer: int | None) -> events_pb2.TableEvent:
    """One event as ``viewer`` (a seat, or None for a spectator) may see it."""
    message = events_pb2.TableEvent()
    if isinstance(event, ev.SeatJoined):
        message.seat_joined.CopyFrom(events_pb2.SeatJoined(seat=event.seat, player_name=event.name))
    elif isinstance(event, ev.SeatLeft):
        message.seat_left.CopyFrom(events_pb2.SeatLeft(seat=event.seat, player_name=event.name))
    elif isinstance(event, ev.DealStarted):
        started = events_pb2.DealStarted(
            round=event.round,
            deal_number=event.deal_number,
            dealer_seat=event.dealer,
            face_up_card=card_to_proto(event.face_up),
            face_up_seat=event.face_up_seat,
            seed_commitment=event.commitment or b"",
        )
        if viewer is not None:
            started.your_hand.extend(cards_to_proto(event.hands[viewer]))
        message.deal_started.CopyFrom(started)
    elif isinstance(event, ev.BidMade):
        made = events_pb2.BidMade(
            seat=event.seat, amount=event.amount, timed_out=event.timed_out, auction_closed=event.auction_closed
        )
        if event.next_seat is not None:
            made.next_seat = event.next_seat
        message.bid_made.CopyFrom(made)
    elif isinstance(event, ev.DealThrownIn):
        message.deal_thrown_in.CopyFrom(
            events_pb2.DealThrownIn(reveal=reveal_to_proto(event.reveal), round_void=event.round_void)
        )
    elif isinstance(event, ev.LandlordChosen):
        message.landlord_chosen.CopyFrom(
            events_pb2.LandlordChosen(landlord_seat=event.seat, bid=event.bid, kitty=cards_to_proto(event.kitty))
        )
    elif isinstance(event, ev.CardsPlayed):
        played = events_pb2.CardsPlayed(
            seat=event.seat,
            cards=cards_to_proto(event.cards),
            cards_left=event.cards_left,
            timed_out=event.timed_out,
            stake=event.stake,
            trick_closed=event.trick_closed,
        )
        if event.next_seat is not None:
            played.next_seat = event.next_seat
        if event.combination is not None:
            played.combination.CopyFrom(combination_to_proto(event.combination))
            if event.doubled:
                played.doubling = DOUBLING_CAUSES[event.combination.kind]
        message.cards_played.CopyFrom(played)
    elif isinstance(event, ev.RoundEnded):
        ended = events_pb2.RoundEnded(settlement=settlement_to_proto(event.result), balances=list(event.balances))
        if event.result.kind is not RoundResultKind.VOID:  # a void round's deal was revealed when thrown in
            ended.reveal.CopyFrom(reveal_to_proto(event.result.reveal))
        message.round_ended.CopyFrom(ended)
    elif isinstance(event, ev.SeatSettled):
        message.seat_settled.CopyFrom(events_pb2.SeatSettled(seat=event.seat, round=event.round))
    elif isinstance(event, ev.TurnDeadline):
        deadline = events_pb2.TurnDeadline(seat=event.seat)
        deadline.deadline.FromMilliseconds(event.deadline_ms)
        deadline.time_bank_left.FromMilliseconds(event.bank_ms)
        message.turn_deadline.CopyFrom(deadline)
    elif isinstance(event, ev.TableClosed):
        message.table_closed.CopyFrom(
            events_pb2.TableClosed(reason=CLOSE_REASONS[event.reason], standings=standings_to_proto(event.standings))
        )
    return message
