"""The single place a table becomes what one caller may see (``TableView``).

The round part goes through the rules core's ``view_for``, so a hand never reaches anyone but
its seat before the round is over.
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Iterable
from typing import cast

from dizhu.referee.auth import Principal, Role
from dizhu.referee.flow import reveal_of
from dizhu.referee.replay import DealRecord
from dizhu.referee.table import (
    Reveal,
    TableState,
    TableStatus,
)
from dizhu.rules import (
    Action,
    Bid,
    Card,
    Combination,
    Phase,
    Play,
    Variant,
    doubles_stake,
    legal_bids,
    try_classify,
    view_for,
)
from dizhu.service.convert.cards import (
    DOUBLING_CAUSES,
    ID_OF,
    card_id,
    card_to_proto,
    cards_to_proto,
    combination_to_proto,
    variant_to_proto,
)
from dizhu.service.convert.results import CLOSE_REASONS, reveal_to_proto, settlement_to_proto
from dizhu.service.convert.settings import shown_settings
from dizhu.v1 import table_pb2, table_service_pb2

__all__ = ["keep_digests_of", "keep_entries_of", "table_view"]

_YOUR_HAND = table_pb2.TableView.DESCRIPTOR.fields_by_name["your_hand"].number
_KITTY = table_pb2.TableView.DESCRIPTOR.fields_by_name["kitty"].number


def _card_entries(field: int) -> dict[Card, bytes]:
    """Each card as one entry of a view's repeated card field, encoded with its tag."""
    name = table_pb2.TableView.DESCRIPTOR.fields_by_number[field].name
    entries = {}
    for card in ID_OF:
        view = table_pb2.TableView()
        getattr(view, name).append(card_to_proto(card))
        entries[card] = view.SerializeToString()
    return entries


_CARD_ENTRIES = {field: _card_entries(field) for field in (_YOUR_HAND, _KITTY)}


def _cards_field(field: int, cards: Iterable[Card]) -> bytes:
    """``cards`` as the encoded entries of a view's card field, in canonical id order (merged into a view:
    a hand built from cards encoded once costs a fraction of building its messages)."""
    return b"".join(map(_CARD_ENTRIES[field].__getitem__, sorted(cards, key=card_id)))


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
        settings=shown_settings(table.settings),
        version=table.version,
        phase=_phase(table),
        round=table.round_number if table.status is not TableStatus.CLOSED else table.match.rounds_played,
        deal_number=table.deal_number if running else 0,
        redeals=table.match.redeals,
        dealer_seat=table.match.dealer,
    )
    if table.close_reason is not None:
        view.close_reason = CLOSE_REASONS[table.close_reason]
    hand_sizes = [0] * table.variant.players
    if running and table.round is not None:
        round_view = view_for(table.round, seat)
        hand_sizes = list(round_view.hand_sizes)
        view.turn_seat = round_view.turn
        view.face_up_card.CopyFrom(card_to_proto(round_view.face_up))
        view.face_up_seat = round_view.face_up_seat
        view.seed_commitment = round_view.commitment or b""
        view.highest_bid = round_view.bid
        view.legal_bids.extend(legal_bids(table.round))
        if round_view.landlord is not None:
            view.landlord_seat = round_view.landlord
        if round_view.kitty is not None and round_view.landlord is not None:
            view.MergeFromString(_cards_field(_KITTY, round_view.kitty))
        digest = _DIGESTS.of(table)
        # The history, the auction's bids, the current trick's plays and its play to beat (none outside
        # the play: the auction has no plays), the doubling plays: each encoded once, merged at once.
        view.MergeFromString(digest.encoded + digest.bids + digest.trick_plays + digest.to_beat + digest.doubling_plays)
        if round_view.phase is Phase.PLAY:
            view.tricks_completed = digest.completed
            view.trick.leader_seat = round_view.turn if digest.leader is None else digest.leader
        if table.turn.deadline_ms:
            view.turn_deadline.FromMilliseconds(table.turn.deadline_ms)
        view.doublings = round_view.doublings
        if round_view.landlord is not None:  # the auction's highest bid is no stake yet (highest_bid says it)
            view.stake = round_view.stake
        if round_view.hand is not None:
            view.MergeFromString(_cards_field(_YOUR_HAND, round_view.hand))
    else:
        _DIGESTS.forget(table.table_id)  # its deal is over: the next view of a running deal starts afresh
    banks = table.turn.banks_ms if table.settings.clock.decision_ms and running and table.turn.banks_ms else None
    balances = table.match.balances
    view.MergeFromString(
        b"".join(
            _seat_entry(
                index,
                s.token_hash is not None,
                s.name,
                hand_sizes[index],
                balances[index],
                table.turn.timeouts[index] if table.turn.timeouts else 0,
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


def _encoded_seat(
    seat: int, occupied: bool, name: str, cards_left: int, balance: int, timeouts: int, bank_ms: int | None
) -> bytes:
    """One encoded ``TableView.seats`` entry, field tag included. ``connected`` stays unset: presence
    is not part of the table's state, the unit of work marks it."""
    seat_view = table_pb2.SeatView(
        seat=seat, occupied=occupied, player_name=name, cards_left=cards_left, balance=balance, timeouts=timeouts
    )
    if bank_ms is not None:
        seat_view.time_bank_left.FromMilliseconds(bank_ms)
    return table_pb2.TableView(seats=[seat_view]).SerializeToString()


#: Remembered: a seat changes far less often than it is shown.
_seat_entry = functools.lru_cache(maxsize=1 << 14)(_encoded_seat)


def _bid_entry(action: Bid) -> bytes:
    """One encoded ``TableView.bids`` entry, field tag included."""
    return table_pb2.TableView(bids=[table_pb2.AuctionBid(seat=action.seat, amount=action.amount)]).SerializeToString()


def _trick_play(action: Play, combination: Combination | None) -> table_pb2.TrickPlay:
    message = table_pb2.TrickPlay(seat=action.seat, cards=cards_to_proto(action.cards))
    if combination is not None:
        message.combination.CopyFrom(combination_to_proto(combination))
    return message


def _trick_entry(play: table_pb2.TrickPlay) -> bytes:
    """One play (or pass) of the current trick as an encoded ``TableView.trick`` with that one entry:
    consecutive ones merge into one trick."""
    return table_pb2.TableView(trick=table_pb2.Trick(plays=[play])).SerializeToString()


def _to_beat_entry(play: table_pb2.TrickPlay) -> bytes:
    """A play with cards as the encoded ``TableView.to_beat``."""
    return table_pb2.TableView(to_beat=play).SerializeToString()


def _doubling_cause(combination: Combination, variant: Variant) -> table_pb2.DoublingCause | None:
    """Why ``combination`` doubles the stake, or None if it does not (docs/rules.md §9)."""
    return DOUBLING_CAUSES[combination.kind] if doubles_stake(combination, variant) else None


def _doubling_entry(action: Play, cause: table_pb2.DoublingCause, trick: int) -> bytes:
    """One encoded ``TableView.doubling_plays`` entry, field tag included."""
    doubling = table_pb2.Doubling(cause=cause, seat=action.seat, cards=cards_to_proto(action.cards), trick=trick)
    return table_pb2.TableView(doubling_plays=[doubling]).SerializeToString()


def _last_reveal(table: TableState, running: bool) -> Reveal | None:
    """The latest finished deal's secrets: a thrown-in deal of the running round, else the last round's."""
    if running and table.earlier_deals:
        thrown_in = table.earlier_deals[-1]
        return reveal_of(table, thrown_in.state, thrown_in.deal_number)
    return None if table.last_result is None else table.last_result.reveal


def _encoded_history_entry(deal_number: int, action: Action, timed_out: bool) -> bytes:
    """One decision as an encoded ``TableView.history`` entry, field tag included."""
    entry = table_pb2.RoundAction(deal_number=deal_number, seat=action.seat, timed_out=timed_out)
    if isinstance(action, Bid):
        entry.bid = action.amount
    else:
        entry.cards.extend(cards_to_proto(action.cards))
    return table_pb2.TableView(history=[entry]).SerializeToString()


#: Every view of a running round carries its whole history, rebuilt on every call: joined from
#: these bytes (each made once, then shared by every view and table) it costs about a tenth of
#: building the same messages afresh (``bench/bench_views.py``).
_history_entry = functools.lru_cache(maxsize=1 << 13)(_encoded_history_entry)


class _RoundDigest:
    """What every view of a running deal derives from its whole history, kept for the next view.

    The encoded ``history`` and ``bids`` entries, the current trick's plays encoded (with
    their combinations), who led it and its play to beat, the plays that doubled the stake, and the
    tricks completed. A deal's history only
    grows, so the next view of the same table (the next move, mostly handled by the same
    process) continues from here instead of going over the whole history again. Kept by
    value: a digest is reused only when the deal's earlier history is equal to the one it
    was made from.
    """

    __slots__ = (
        "bids",
        "completed",
        "deal_number",
        "doubling_plays",
        "earlier",
        "encoded",
        "history",
        "leader",
        "passes",
        "timings",
        "to_beat",
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
        #: The current trick's last play with cards as an encoded ``to_beat`` (empty: the next play leads).
        self.to_beat = b""
        #: The deal's plays that doubled the stake as encoded ``doubling_plays`` entries.
        self.doubling_plays = b""
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
            combination = try_classify(action.cards, table.variant) if action.cards else None
            play = _trick_play(action, combination)
            self.trick_plays += _trick_entry(play)
            if not action.is_pass:
                self.passes = 0
                self.to_beat = _to_beat_entry(play)
                cause = None if combination is None else _doubling_cause(combination, table.variant)
                if cause is not None:
                    self.doubling_plays += _doubling_entry(action, cause, self.completed)
                continue
            self.passes += 1
            if self.passes == to_close:
                self.completed += 1
                self.passes = 0
                self.trick_plays = b""
                self.to_beat = b""
                self.leader = None
        self.history, self.timings = history, table.timings


class _RoundDigests:
    """The latest digest of each table's running deal: forgotten once a view shows the deal over,
    at most ``size`` of them (the least recently used go)."""

    def __init__(self, size: int = 2048) -> None:
        self._size = size
        self._digests: collections.OrderedDict[str, _RoundDigest] = collections.OrderedDict()

    def __len__(self) -> int:
        return len(self._digests)

    def __contains__(self, table_id: object) -> bool:
        return table_id in self._digests

    def forget(self, table_id: str) -> None:
        self._digests.pop(table_id, None)

    def resize(self, size: int) -> None:
        """Keep at most ``size`` digests from now on (the least recently used go)."""
        self._size = size
        while len(self._digests) > size:
            self._digests.popitem(last=False)

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


def keep_digests_of(tables: int) -> None:
    """Keep the round digests of at most ``tables`` tables in this process (2,048 unless set)."""
    _DIGESTS.resize(tables)


def keep_entries_of(*, seats: int, history: int) -> None:
    """Keep at most ``seats`` encoded seats and ``history`` encoded history entries in this process
    (16,384 and 8,192 unless set); those kept are forgotten (an ``lru_cache`` has one size)."""
    global _seat_entry, _history_entry  # noqa: PLW0603 -- the process's one cache of each, resized
    _seat_entry = functools.lru_cache(maxsize=seats)(_encoded_seat)
    _history_entry = functools.lru_cache(maxsize=history)(_encoded_history_entry)


def _fill_history(view: table_pb2.TableView, table: TableState) -> None:
    """Every decision of the running round, its thrown-in deals first, with the clock's marked.

    Only public facts: who bid what and who played which cards, as everyone saw it happen.
    """
    view.MergeFromString(_DIGESTS.of(table).encoded)


def table_summary(table: TableState) -> table_service_pb2.TableSummary:
    """An open table as ListTables shows it: what any spectator sees of it."""
    summary = table_service_pb2.TableSummary(
        table_id=table.table_id,
        variant=variant_to_proto(table.variant),
        phase=_phase(table),
        round=table.round_number,
        round_limit=table.settings.round_limit,
        player_names=[seat.name if seat.occupied else "" for seat in table.seats],
        free_seats=sum(not seat.occupied for seat in table.seats),
    )
    summary.created_at.FromMilliseconds(table.created_ms)
    summary.last_active_at.FromMilliseconds(table.upkeep.active_ms or table.created_ms)
    return summary
