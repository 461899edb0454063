"""Between the contract (``dizhu.v1`` messages) and the referee's domain values.

Inbound conversions validate and raise ``InvalidArgument`` naming the offending field.
Outbound, ``table_view`` is the single place a table becomes what one caller may see: the
round part goes through the rules core's ``view_for``, so a hand never reaches anyone but
its seat before the round is over.
"""

from __future__ import annotations

import collections
import datetime
import functools
import json
from collections.abc import Iterable, Sequence
from typing import cast

from google.protobuf import duration_pb2

from dizhu.referee import events as ev
from dizhu.referee.auth import Principal, Role
from dizhu.referee.errors import InvalidArgument
from dizhu.referee.flow import reveal_of
from dizhu.referee.replay import DealRecord
from dizhu.referee.table import (
    ClockSettings,
    CloseReason,
    NextRound,
    Reveal,
    RoundResult,
    RoundResultKind,
    TableSettings,
    TableState,
    TableStatus,
    TimeoutPolicy,
)
from dizhu.rules import (
    FOUR_PLAYER,
    RANKS,
    THREE_PLAYER,
    VARIANTS,
    Action,
    Bid,
    Card,
    Combination,
    HouseRules,
    Phase,
    Play,
    Rank,
    Suit,
    Variant,
    make_deck,
    parse_cards,
    try_classify,
    view_for,
)
from dizhu.v1 import cards_pb2, events_pb2, replay_pb2, table_pb2

__all__ = [
    "cards_from_proto",
    "cards_to_proto",
    "combination_to_proto",
    "event_to_proto",
    "ranks_from_proto",
    "settings_from_proto",
    "standings_to_proto",
    "table_view",
    "variant_from_proto",
]

_VARIANTS = {cards_pb2.VARIANT_THREE_PLAYER: THREE_PLAYER, cards_pb2.VARIANT_FOUR_PLAYER: FOUR_PLAYER}
_VARIANT_TO_PB = {variant.name: pb for pb, variant in _VARIANTS.items()}
#: Proto enum numbers are the core's values plus one (0 is UNSPECIFIED).
_PB_RANKS = tuple(cast(cards_pb2.Rank, rank + 1) for rank in RANKS)
_PB_SUITS = tuple(cast(cards_pb2.Suit, suit + 1) for suit in Suit)


def variant_from_proto(value: int, field: str = "variant") -> Variant:
    variant = _VARIANTS.get(cast(cards_pb2.Variant, value))
    if variant is None:
        raise InvalidArgument(field, "choose VARIANT_THREE_PLAYER or VARIANT_FOUR_PLAYER")
    return variant


def variant_to_proto(variant: Variant) -> cards_pb2.Variant:
    return _VARIANT_TO_PB[variant.name]


def _rank_from_proto(value: int, field: str) -> Rank:
    if not 1 <= value <= len(RANKS):
        raise InvalidArgument(field, f"{value} is not a rank")
    return RANKS[value - 1]


def cards_from_proto(
    cards: Iterable[cards_pb2.Card], variant: Variant | None, field: str = "cards"
) -> tuple[Card, ...]:
    """Canonical cards of ``variant`` (of any variant when None: checks that need no table);
    anything else is INVALID_ARGUMENT naming the card."""
    decks = max(v.decks for v in VARIANTS.values()) if variant is None else variant.decks
    result = []
    for index, card in enumerate(cards):
        rank = _rank_from_proto(card.rank, f"{field}[{index}].rank")
        if rank.is_joker != (card.suit == cards_pb2.SUIT_JOKER) or not 1 <= card.suit <= len(_PB_SUITS):
            raise InvalidArgument(f"{field}[{index}].suit", "jokers have SUIT_JOKER, every other card a real suit")
        if card.copy >= decks:
            raise InvalidArgument(f"{field}[{index}].copy", f"the table's variant has {decks} deck(s)")
        result.append(Card(rank, Suit(card.suit - 1), card.copy))
    return tuple(result)


def cards_of_variant(cards: tuple[Card, ...], variant: Variant, field: str = "cards") -> tuple[Card, ...]:
    """``cards`` as :func:`cards_from_proto` gave them for any variant, checked against ``variant``
    (its number of decks), as :func:`cards_from_proto` with ``variant`` would."""
    for index, card in enumerate(cards):
        if card.copy >= variant.decks:
            raise InvalidArgument(f"{field}[{index}].copy", f"the table's variant has {variant.decks} deck(s)")
    return cards


def ranks_from_proto(ranks: Iterable[int], field: str) -> tuple[Rank, ...]:
    return tuple(_rank_from_proto(value, f"{field}[{index}]") for index, value in enumerate(ranks))


def card_to_proto(card: Card) -> cards_pb2.Card:
    return cards_pb2.Card(rank=_PB_RANKS[card.rank], suit=_PB_SUITS[card.suit], copy=card.copy)


#: Every card's canonical id, looked up without a call into Python (hands are sorted by it on every view).
_ID_OF: dict[Card, int] = {card: card.id for card in make_deck(max(variant.decks for variant in VARIANTS.values()))}
_card_id = _ID_OF.__getitem__


def cards_to_proto(cards: Iterable[Card]) -> list[cards_pb2.Card]:
    """Cards in canonical id order (the contract's order for hands, kitties and plays)."""
    return [card_to_proto(card) for card in sorted(cards, key=_card_id)]


_YOUR_HAND = table_pb2.TableView.DESCRIPTOR.fields_by_name["your_hand"].number
_KITTY = table_pb2.TableView.DESCRIPTOR.fields_by_name["kitty"].number


def _card_entries(field: int) -> dict[Card, bytes]:
    """Each card as one entry of a view's repeated card field, encoded with its tag."""
    name = table_pb2.TableView.DESCRIPTOR.fields_by_number[field].name
    entries = {}
    for card in _ID_OF:
        view = table_pb2.TableView()
        getattr(view, name).append(card_to_proto(card))
        entries[card] = view.SerializeToString()
    return entries


_CARD_ENTRIES = {field: _card_entries(field) for field in (_YOUR_HAND, _KITTY)}


def _cards_field(field: int, cards: Iterable[Card]) -> bytes:
    """``cards`` as the encoded entries of a view's card field, in canonical id order (merged into a view:
    a hand built from cards encoded once costs a fraction of building its messages)."""
    return b"".join(map(_CARD_ENTRIES[field].__getitem__, sorted(cards, key=_card_id)))


def combination_to_proto(combination: Combination) -> cards_pb2.Combination:
    return cards_pb2.Combination(
        kind=cast(cards_pb2.CombinationKind, int(combination.kind)),
        main_rank=_PB_RANKS[combination.main_rank],
        size=combination.size,
        ranks=[_PB_RANKS[rank] for rank in combination.ranks],
    )


#: google.protobuf.Duration's own range (duration.proto).
_MAX_DURATION_SECONDS = 315_576_000_000
_NANOS_PER_SECOND = 1_000_000_000
_NANOS_PER_MS = 1_000_000


def _clock_ms(duration: duration_pb2.Duration, field: str) -> int:
    """A clock duration in whole milliseconds.

    INVALID_ARGUMENT if it is no valid Duration (out of range, nanos out of range or of
    another sign than seconds), negative, or finer than a millisecond; its bounds are the
    referee's (``dizhu.referee.limits``).
    """
    seconds, nanos = duration.seconds, duration.nanos
    if (
        abs(seconds) > _MAX_DURATION_SECONDS
        or abs(nanos) >= _NANOS_PER_SECOND
        or (seconds > 0 and nanos < 0)
        or (seconds < 0 and nanos > 0)
    ):
        raise InvalidArgument(field, "not a valid google.protobuf.Duration")
    if seconds < 0 or nanos < 0:
        raise InvalidArgument(field, "durations cannot be negative")
    if nanos % _NANOS_PER_MS:
        raise InvalidArgument(field, "clock durations are whole milliseconds")
    return seconds * 1000 + nanos // _NANOS_PER_MS


def settings_from_proto(settings: table_pb2.TableSettings) -> TableSettings:
    variant = variant_from_proto(settings.variant, "settings.variant")
    clock = settings.clock
    decision_ms = _clock_ms(clock.decision_time, "settings.clock.decision_time")
    # Unset or zero: the decision time.
    first_ms = _clock_ms(clock.first_decision_time, "settings.clock.first_decision_time") or decision_ms
    bank_ms = _clock_ms(clock.time_bank, "settings.clock.time_bank")
    policy = {
        table_pb2.TIMEOUT_POLICY_UNSPECIFIED: TimeoutPolicy.AUTO_PLAY,
        table_pb2.TIMEOUT_POLICY_AUTO_PLAY: TimeoutPolicy.AUTO_PLAY,
        table_pb2.TIMEOUT_POLICY_FORFEIT: TimeoutPolicy.FORFEIT,
    }.get(clock.timeout_policy)
    if policy is None:
        raise InvalidArgument("settings.clock.timeout_policy", "unknown timeout policy")
    next_round = {
        table_pb2.NEXT_ROUND_UNSPECIFIED: NextRound.AUTOMATIC,
        table_pb2.NEXT_ROUND_AUTOMATIC: NextRound.AUTOMATIC,
        table_pb2.NEXT_ROUND_WHEN_ALL_SETTLED: NextRound.WHEN_ALL_SETTLED,
    }.get(settings.next_round)
    if next_round is None:
        raise InvalidArgument("settings.next_round", "unknown next-round policy")
    return TableSettings(
        variant=variant,
        house_rules=HouseRules(spring=settings.house_rules.spring),
        clock=ClockSettings(decision_ms, first_ms, bank_ms, policy),
        round_limit=settings.round_limit,
        redeal_cap=settings.max_redeals if settings.HasField("max_redeals") else variant.default_redeal_cap,
        next_round=next_round,
        first_dealer=settings.first_dealer if settings.HasField("first_dealer") else None,
    )


def _duration(ms: int) -> datetime.timedelta:
    return datetime.timedelta(milliseconds=ms)


def settings_to_proto(settings: TableSettings) -> table_pb2.TableSettings:
    clock = settings.clock
    message = table_pb2.TableSettings(
        variant=variant_to_proto(settings.variant),
        house_rules=table_pb2.HouseRules(spring=settings.house_rules.spring),
        round_limit=settings.round_limit,
        max_redeals=settings.redeal_cap,
        next_round=(
            table_pb2.NEXT_ROUND_AUTOMATIC
            if settings.next_round is NextRound.AUTOMATIC
            else table_pb2.NEXT_ROUND_WHEN_ALL_SETTLED
        ),
    )
    if clock.decision_ms:
        message.clock.decision_time.FromTimedelta(_duration(clock.decision_ms))
        message.clock.first_decision_time.FromTimedelta(_duration(clock.first_decision_ms))
        message.clock.time_bank.FromTimedelta(_duration(clock.bank_ms))
        message.clock.timeout_policy = (
            table_pb2.TIMEOUT_POLICY_AUTO_PLAY
            if clock.policy is TimeoutPolicy.AUTO_PLAY
            else table_pb2.TIMEOUT_POLICY_FORFEIT
        )
    if settings.first_dealer is not None:
        message.first_dealer = settings.first_dealer
    return message


#: Settings as views show them, by the identity of the settings (a table's states share one
#: object; hashing its fields costs about as much as converting them).
_SHOWN_SETTINGS: dict[int, tuple[TableSettings, table_pb2.TableSettings]] = {}


def _shown_settings(settings: TableSettings) -> table_pb2.TableSettings:
    """A table's settings as every view shows them: built once per settings object (never
    changed after: a view's constructor copies it)."""
    known = _SHOWN_SETTINGS.get(id(settings))
    if known is not None and known[0] is settings:
        return known[1]
    if len(_SHOWN_SETTINGS) >= 1 << 12:
        _SHOWN_SETTINGS.clear()
    message = settings_to_proto(settings)
    _SHOWN_SETTINGS[id(settings)] = (settings, message)
    return message


_OUTCOMES = {
    RoundResultKind.LANDLORD_WON: table_pb2.ROUND_OUTCOME_LANDLORD_WON,
    RoundResultKind.FARMERS_WON: table_pb2.ROUND_OUTCOME_FARMERS_WON,
    RoundResultKind.VOID: table_pb2.ROUND_OUTCOME_VOID,
    RoundResultKind.ABANDONED: table_pb2.ROUND_OUTCOME_ABANDONED,
}
_CLOSE_REASONS = {
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
        outcome=_OUTCOMES[result.kind],
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


def _phase(table: TableState) -> table_pb2.Phase:
    return cast(table_pb2.Phase, table_pb2.Phase.Value(table.phase_name))


def _viewer_seat(principal: Principal) -> int | None:
    return principal.seat if principal.role is Role.SEAT else None


def table_view(table: TableState, principal: Principal) -> table_pb2.TableView:
    """``table`` as ``principal`` may see it."""
    seat = _viewer_seat(principal)
    running = table.status is TableStatus.IN_ROUND and table.round is not None
    view = table_pb2.TableView(
        table_id=table.table_id,
        settings=_shown_settings(table.settings),
        version=table.version,
        phase=_phase(table),
        round=table.round_number if table.status is not TableStatus.CLOSED else table.match.rounds_played,
        deal_number=table.deal_number if running else 0,
        redeals=table.match.redeals,
        dealer_seat=table.match.dealer,
    )
    if table.close_reason is not None:
        view.close_reason = _CLOSE_REASONS[table.close_reason]
    hand_sizes = [0] * table.variant.players
    if running and table.round is not None:
        round_view = view_for(table.round, seat)
        hand_sizes = list(round_view.hand_sizes)
        view.turn_seat = round_view.turn
        view.face_up_card.CopyFrom(card_to_proto(round_view.face_up))
        view.face_up_seat = round_view.face_up_seat
        view.seed_commitment = round_view.commitment or b""
        view.highest_bid = round_view.bid
        if round_view.landlord is not None:
            view.landlord_seat = round_view.landlord
        if round_view.kitty is not None and round_view.landlord is not None:
            view.MergeFromString(_cards_field(_KITTY, round_view.kitty))
        digest = _DIGESTS.of(table)
        # The history, the auction's bids and the current trick's plays, each encoded once.
        view.MergeFromString(digest.encoded + digest.bids + digest.trick_plays)
        if round_view.phase is Phase.PLAY:
            view.tricks_completed = digest.completed
            view.trick.leader_seat = round_view.turn if digest.leader is None else digest.leader
        if table.deadline_ms:
            view.turn_deadline.FromMilliseconds(table.deadline_ms)
        view.doublings = round_view.doublings
        view.stake = round_view.stake
        if round_view.hand is not None:
            view.MergeFromString(_cards_field(_YOUR_HAND, round_view.hand))
    banks = table.banks_ms if table.settings.clock.decision_ms and running and table.banks_ms else None
    balances = table.match.balances
    view.MergeFromString(
        b"".join(
            _seat_entry(
                index,
                s.token_hash is not None,
                s.name,
                hand_sizes[index],
                balances[index],
                table.timeouts[index] if table.timeouts else 0,
                None if banks is None else banks[index],
            )
            for index, s in enumerate(table.seats)
        )
    )
    if seat is not None:
        view.your_seat = seat
    if table.last_result is not None:
        view.last_settlement.CopyFrom(settlement_to_proto(table.last_result))
    reveal = _last_reveal(table, running)
    if reveal is not None:
        view.last_reveal.CopyFrom(reveal_to_proto(reveal))
    return view


@functools.lru_cache(maxsize=1 << 14)
def _seat_entry(
    seat: int, occupied: bool, name: str, cards_left: int, balance: int, timeouts: int, bank_ms: int | None
) -> bytes:
    """One encoded ``TableView.seats`` entry, field tag included (a seat changes far less often than
    it is shown). ``connected`` stays unset: presence is not part of the table's state, the gateway
    marks it."""
    seat_view = table_pb2.SeatView(
        seat=seat, occupied=occupied, player_name=name, cards_left=cards_left, balance=balance, timeouts=timeouts
    )
    if bank_ms is not None:
        seat_view.time_bank_left.FromMilliseconds(bank_ms)
    return table_pb2.TableView(seats=[seat_view]).SerializeToString()


def _bid_entry(action: Bid) -> bytes:
    """One encoded ``TableView.bids`` entry, field tag included."""
    return table_pb2.TableView(bids=[table_pb2.AuctionBid(seat=action.seat, amount=action.amount)]).SerializeToString()


def _trick_entry(action: Play, variant: Variant) -> bytes:
    """One play (or pass) of the current trick as an encoded ``TableView.trick`` with that one entry:
    consecutive ones merge into one trick."""
    message = table_pb2.TrickPlay(seat=action.seat, cards=cards_to_proto(action.cards))
    combination = try_classify(action.cards, variant) if action.cards else None
    if combination is not None:
        message.combination.CopyFrom(combination_to_proto(combination))
    return table_pb2.TableView(trick=table_pb2.Trick(plays=[message])).SerializeToString()


def _last_reveal(table: TableState, running: bool) -> Reveal | None:
    """The latest finished deal's secrets: a thrown-in deal of the running round, else the last round's."""
    if running and table.earlier_deals:
        thrown_in = table.earlier_deals[-1]
        return reveal_of(table, thrown_in.state, thrown_in.deal_number)
    return None if table.last_result is None else table.last_result.reveal


@functools.lru_cache(maxsize=1 << 16)
def _history_entry(deal_number: int, action: Action, timed_out: bool) -> bytes:
    """One decision as an encoded ``TableView.history`` entry, field tag included.

    Every view of a running round carries its whole history, rebuilt on every call: joined
    from these bytes (each made once, then shared by every view and table) it costs about a
    tenth of building the same messages afresh (``bench/bench_views.py``).
    """
    entry = table_pb2.RoundAction(deal_number=deal_number, seat=action.seat, timed_out=timed_out)
    if isinstance(action, Bid):
        entry.bid = action.amount
    else:
        entry.cards.extend(cards_to_proto(action.cards))
    return table_pb2.TableView(history=[entry]).SerializeToString()


class _RoundDigest:
    """What every view of a running deal derives from its whole history, kept for the next view.

    The encoded ``history`` and ``bids`` entries, the current trick's plays encoded (with
    their combinations) and who led it, and the tricks completed. A deal's history only
    grows, so the next view of the same table (the next move, mostly handled by the same
    process) continues from here instead of going over the whole history again. Kept by
    value: a digest is reused only when the deal's earlier history is equal to the one it
    was made from.
    """

    __slots__ = (
        "bids",
        "completed",
        "deal_number",
        "earlier",
        "encoded",
        "history",
        "leader",
        "passes",
        "timings",
        "trick_plays",
    )

    def __init__(self, deal_number: int, earlier: tuple[DealRecord, ...], encoded: bytes) -> None:
        self.deal_number = deal_number
        self.earlier = earlier
        #: The entries of the earlier deals and of ``history``, encoded.
        self.encoded = encoded
        self.history: tuple[Action, ...] = ()
        self.timings: tuple[object, ...] = ()
        #: Tricks completed, and passes in the current trick.
        self.completed = 0
        self.passes = 0
        #: The deal's bids as encoded ``bids`` entries; the current trick's plays as an encoded ``trick``.
        self.bids = b""
        self.trick_plays = b""
        #: Who led the current trick (None before its first play).
        self.leader: int | None = None

    def extends(self, table: TableState) -> bool:
        """Whether ``table``'s running deal continues the one this digest was made from."""
        assert table.round is not None
        history, count = table.round.history, len(self.history)
        return (
            table.deal_number == self.deal_number
            and len(history) >= count
            and history[:count] == self.history
            and table.timings[:count] == self.timings
            and table.earlier_deals == self.earlier
        )

    def advance(self, table: TableState) -> None:
        """Take in the actions of ``table``'s deal that came after the digested ones."""
        assert table.round is not None
        start = len(self.history)
        history, timings = table.round.history, table.timings
        new = zip(history[start:], timings[start:], strict=True)
        self.encoded += b"".join(_history_entry(table.deal_number, action, timing.timed_out) for action, timing in new)
        to_close = table.variant.passes_to_close
        for action in history[start:]:
            if not isinstance(action, Play):
                self.bids += _bid_entry(action)
                continue
            if self.leader is None:
                self.leader = action.seat
            self.trick_plays += _trick_entry(action, table.variant)
            if not action.is_pass:
                self.passes = 0
                continue
            self.passes += 1
            if self.passes == to_close:
                self.completed += 1
                self.passes = 0
                self.trick_plays = b""
                self.leader = None
        self.history, self.timings = history, table.timings


class _RoundDigests:
    """The latest digest of each table's running deal (bounded: the least recently used go)."""

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._digests: collections.OrderedDict[str, _RoundDigest] = collections.OrderedDict()

    def of(self, table: TableState) -> _RoundDigest:
        digest = self._digests.get(table.table_id)
        if digest is None or not digest.extends(table):
            earlier = b"".join(
                _history_entry(record.deal_number, action, timing.timed_out)
                for record in table.earlier_deals
                for action, timing in zip(record.state.history, record.timings, strict=True)
            )
            digest = _RoundDigest(table.deal_number, table.earlier_deals, earlier)
        digest.advance(table)
        self._digests[table.table_id] = digest
        self._digests.move_to_end(table.table_id)
        if len(self._digests) > self._size:
            self._digests.popitem(last=False)
        return digest


_DIGESTS = _RoundDigests()


def _fill_history(view: table_pb2.TableView, table: TableState) -> None:
    """Every decision of the running round, its thrown-in deals first, with the clock's marked.

    Only public facts: who bid what and who played which cards, as everyone saw it happen.
    """
    view.MergeFromString(_DIGESTS.of(table).encoded)


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
        message.bid_made.CopyFrom(events_pb2.BidMade(seat=event.seat, amount=event.amount, timed_out=event.timed_out))
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
        if event.combination is not None:
            played.combination.CopyFrom(combination_to_proto(event.combination))
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
            events_pb2.TableClosed(reason=_CLOSE_REASONS[event.reason], standings=standings_to_proto(event.standings))
        )
    return message


_OUTCOME_NAMES = {kind.value: outcome for kind, outcome in _OUTCOMES.items()}
_TIMEOUT_POLICIES = {
    TimeoutPolicy.AUTO_PLAY.value: table_pb2.TIMEOUT_POLICY_AUTO_PLAY,
    TimeoutPolicy.FORFEIT.value: table_pb2.TIMEOUT_POLICY_FORFEIT,
}


def replay_from_json(text: str) -> replay_pb2.Replay:
    """A replay's JSON record (``dizhu.replay/v1``, written by the referee) as a message."""
    document = json.loads(text)
    variant = VARIANTS[document["variant"]]

    def cards(notation: str) -> list[cards_pb2.Card]:
        return cards_to_proto(parse_cards(notation, variant.decks))

    replay = replay_pb2.Replay(
        schema=document["schema"],
        table_id=document["table_id"],
        variant=variant_to_proto(variant),
        house_rules=table_pb2.HouseRules(spring=document["house_rules"]["spring"]),
        round=document["round"],
        balances=document["balances"],
        timeout_policy=_TIMEOUT_POLICIES.get(document.get("timeout_policy"), table_pb2.TIMEOUT_POLICY_UNSPECIFIED),
    )
    for entry in document["deals"]:
        dealt = replay.deals.add(
            deal_number=entry["deal_number"],
            dealer_seat=entry["dealer"],
            seed=bytes.fromhex(entry["seed"] or ""),
            seed_commitment=bytes.fromhex(entry["commitment"] or ""),
            face_up_card=cards(entry["face_up"])[0],
            face_up_seat=entry["face_up_seat"],
            hands=[table_pb2.DealtHand(seat=seat, cards=cards(hand)) for seat, hand in enumerate(entry["hands"])],
            kitty=cards(entry["kitty"]),
        )
        for action in entry["actions"]:
            recorded = dealt.actions.add(seat=action["seat"], timed_out=action["timed_out"])
            if "bid" in action:
                recorded.kind = replay_pb2.ACTION_KIND_BID
                recorded.bid = action["bid"]
            else:
                recorded.kind = replay_pb2.ACTION_KIND_PLAY
                recorded.cards.extend(cards(action["play"]))
            recorded.time.FromDatetime(datetime.datetime.fromisoformat(action["time"].replace("Z", "+00:00")))
            recorded.took.FromMilliseconds(action["took_ms"])
    result = document["result"]
    settlement = replay.settlement
    settlement.round = document["round"]
    settlement.outcome = _OUTCOME_NAMES[result["outcome"]]
    settlement.bid = result["bid"]
    settlement.doublings = result["doublings"]
    settlement.spring = result["spring"]
    settlement.stake = result["stake"]
    settlement.balance_changes.extend(result["changes"])
    for field in ("landlord", "winner", "forfeited_by"):
        if result[field] is not None:
            setattr(
                settlement,
                {"landlord": "landlord_seat", "winner": "winner_seat"}.get(field, "forfeited_seat"),
                result[field],
            )
    return replay
