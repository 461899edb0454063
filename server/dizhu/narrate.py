"""Readable, line-by-line narration of a round, for the demonstration and logs."""

from __future__ import annotations

from dizhu.rules import (
    BidMade,
    CardsPlayed,
    Deal,
    Event,
    LandlordChosen,
    RoundFinished,
    Settlement,
    ThrownIn,
    TrickClosed,
    format_cards,
)


def _seat(seat: int, landlord: int | None) -> str:
    role = "" if landlord is None else (" (landlord)" if seat == landlord else " (farmer)")
    return f"seat {seat}{role}"


def describe_deal(dealt: Deal) -> list[str]:
    """The deal as a newcomer would want to see it, hands included (for a demonstration)."""
    commitment = dealt.commitment
    lines = [
        f"{dealt.variant.players}-player round, seat {dealt.dealer} deals."
        + (f" Seed commitment {commitment.hex()[:16]}..." if commitment else ""),
        f"Seat {dealt.face_up_seat} drew the face-up card {dealt.face_up} and bids first.",
    ]
    lines += [f"  seat {seat} holds {format_cards(hand)}" for seat, hand in enumerate(dealt.hands)]
    return lines


def describe_event(event: Event, landlord: int | None, cards_left: int | None = None) -> str:
    """One event as a line of text; ``landlord`` labels the seats once it is known."""
    if isinstance(event, BidMade):
        return f"  seat {event.seat} " + ("passes" if event.amount == 0 else f"bids {event.amount}")
    if isinstance(event, ThrownIn):
        return "  everybody passed: the cards are thrown in"
    if isinstance(event, LandlordChosen):
        return f"Seat {event.seat} is the landlord at {event.bid} and takes the kitty {format_cards(event.kitty)}."
    if isinstance(event, CardsPlayed):
        who = _seat(event.seat, landlord)
        if event.combination is None:
            return f"    {who} passes"
        left = "" if cards_left is None else f" ({cards_left} left)"
        doubled = "  -- the stake doubles!" if event.doubled else ""
        return f"    {who} plays {event.combination.kind.label}: {format_cards(event.cards)}{left}{doubled}"
    if isinstance(event, TrickClosed):
        return f"  trick to {_seat(event.leader, landlord)}, who leads next"
    if isinstance(event, RoundFinished):
        side = "the landlord wins" if event.landlord_won else "the farmers win"
        return f"{_seat(event.seat, landlord).capitalize()} is out of cards: {side}."
    raise TypeError(f"unknown event {event!r}")


def describe_settlement(settlement: Settlement) -> str:
    """Who pays whom."""
    if settlement.stake == 0:
        return "Nothing is settled."
    extras = [f"{settlement.doublings} doubling(s)"] if settlement.doublings else []
    if settlement.spring:
        extras.append("spring")
    changes = ", ".join(f"seat {seat} {delta:+d}" for seat, delta in enumerate(settlement.deltas))
    suffix = f" ({', '.join(extras)})" if extras else ""
    return f"Stake {settlement.stake}{suffix}: {changes}."
