import datetime

from dizhu.v1 import cards_pb2 as _cards_pb2
from dizhu.v1 import table_pb2 as _table_pb2
from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TableEvent(_message.Message):
    __slots__ = ("sequence", "version", "time", "snapshot", "seat_joined", "seat_left", "deal_started", "bid_made", "deal_thrown_in", "landlord_chosen", "cards_played", "round_ended", "seat_settled", "turn_deadline", "table_closed", "heartbeat", "seat_presence", "write_id")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    SEAT_JOINED_FIELD_NUMBER: _ClassVar[int]
    SEAT_LEFT_FIELD_NUMBER: _ClassVar[int]
    DEAL_STARTED_FIELD_NUMBER: _ClassVar[int]
    BID_MADE_FIELD_NUMBER: _ClassVar[int]
    DEAL_THROWN_IN_FIELD_NUMBER: _ClassVar[int]
    LANDLORD_CHOSEN_FIELD_NUMBER: _ClassVar[int]
    CARDS_PLAYED_FIELD_NUMBER: _ClassVar[int]
    ROUND_ENDED_FIELD_NUMBER: _ClassVar[int]
    SEAT_SETTLED_FIELD_NUMBER: _ClassVar[int]
    TURN_DEADLINE_FIELD_NUMBER: _ClassVar[int]
    TABLE_CLOSED_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_PRESENCE_FIELD_NUMBER: _ClassVar[int]
    WRITE_ID_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    version: int
    time: _timestamp_pb2.Timestamp
    snapshot: _table_pb2.TableView
    seat_joined: SeatJoined
    seat_left: SeatLeft
    deal_started: DealStarted
    bid_made: BidMade
    deal_thrown_in: DealThrownIn
    landlord_chosen: LandlordChosen
    cards_played: CardsPlayed
    round_ended: RoundEnded
    seat_settled: SeatSettled
    turn_deadline: TurnDeadline
    table_closed: TableClosed
    heartbeat: Heartbeat
    seat_presence: SeatPresence
    write_id: int
    def __init__(self, sequence: _Optional[int] = ..., version: _Optional[int] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., snapshot: _Optional[_Union[_table_pb2.TableView, _Mapping]] = ..., seat_joined: _Optional[_Union[SeatJoined, _Mapping]] = ..., seat_left: _Optional[_Union[SeatLeft, _Mapping]] = ..., deal_started: _Optional[_Union[DealStarted, _Mapping]] = ..., bid_made: _Optional[_Union[BidMade, _Mapping]] = ..., deal_thrown_in: _Optional[_Union[DealThrownIn, _Mapping]] = ..., landlord_chosen: _Optional[_Union[LandlordChosen, _Mapping]] = ..., cards_played: _Optional[_Union[CardsPlayed, _Mapping]] = ..., round_ended: _Optional[_Union[RoundEnded, _Mapping]] = ..., seat_settled: _Optional[_Union[SeatSettled, _Mapping]] = ..., turn_deadline: _Optional[_Union[TurnDeadline, _Mapping]] = ..., table_closed: _Optional[_Union[TableClosed, _Mapping]] = ..., heartbeat: _Optional[_Union[Heartbeat, _Mapping]] = ..., seat_presence: _Optional[_Union[SeatPresence, _Mapping]] = ..., write_id: _Optional[int] = ...) -> None: ...

class SeatJoined(_message.Message):
    __slots__ = ("seat", "player_name")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYER_NAME_FIELD_NUMBER: _ClassVar[int]
    seat: int
    player_name: str
    def __init__(self, seat: _Optional[int] = ..., player_name: _Optional[str] = ...) -> None: ...

class SeatLeft(_message.Message):
    __slots__ = ("seat", "player_name")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYER_NAME_FIELD_NUMBER: _ClassVar[int]
    seat: int
    player_name: str
    def __init__(self, seat: _Optional[int] = ..., player_name: _Optional[str] = ...) -> None: ...

class DealStarted(_message.Message):
    __slots__ = ("round", "deal_number", "dealer_seat", "face_up_card", "face_up_seat", "seed_commitment", "your_hand")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DEALER_SEAT_FIELD_NUMBER: _ClassVar[int]
    FACE_UP_CARD_FIELD_NUMBER: _ClassVar[int]
    FACE_UP_SEAT_FIELD_NUMBER: _ClassVar[int]
    SEED_COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    YOUR_HAND_FIELD_NUMBER: _ClassVar[int]
    round: int
    deal_number: int
    dealer_seat: int
    face_up_card: _cards_pb2.Card
    face_up_seat: int
    seed_commitment: bytes
    your_hand: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    def __init__(self, round: _Optional[int] = ..., deal_number: _Optional[int] = ..., dealer_seat: _Optional[int] = ..., face_up_card: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ..., face_up_seat: _Optional[int] = ..., seed_commitment: _Optional[bytes] = ..., your_hand: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ...) -> None: ...

class BidMade(_message.Message):
    __slots__ = ("seat", "amount", "timed_out", "next_seat", "auction_closed")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    AMOUNT_FIELD_NUMBER: _ClassVar[int]
    TIMED_OUT_FIELD_NUMBER: _ClassVar[int]
    NEXT_SEAT_FIELD_NUMBER: _ClassVar[int]
    AUCTION_CLOSED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    amount: int
    timed_out: bool
    next_seat: int
    auction_closed: bool
    def __init__(self, seat: _Optional[int] = ..., amount: _Optional[int] = ..., timed_out: _Optional[bool] = ..., next_seat: _Optional[int] = ..., auction_closed: _Optional[bool] = ...) -> None: ...

class DealThrownIn(_message.Message):
    __slots__ = ("reveal", "round_void")
    REVEAL_FIELD_NUMBER: _ClassVar[int]
    ROUND_VOID_FIELD_NUMBER: _ClassVar[int]
    reveal: _table_pb2.DealReveal
    round_void: bool
    def __init__(self, reveal: _Optional[_Union[_table_pb2.DealReveal, _Mapping]] = ..., round_void: _Optional[bool] = ...) -> None: ...

class LandlordChosen(_message.Message):
    __slots__ = ("landlord_seat", "bid", "kitty")
    LANDLORD_SEAT_FIELD_NUMBER: _ClassVar[int]
    BID_FIELD_NUMBER: _ClassVar[int]
    KITTY_FIELD_NUMBER: _ClassVar[int]
    landlord_seat: int
    bid: int
    kitty: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    def __init__(self, landlord_seat: _Optional[int] = ..., bid: _Optional[int] = ..., kitty: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ...) -> None: ...

class CardsPlayed(_message.Message):
    __slots__ = ("seat", "cards", "combination", "cards_left", "timed_out", "stake", "trick_closed", "next_seat", "doubling")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    COMBINATION_FIELD_NUMBER: _ClassVar[int]
    CARDS_LEFT_FIELD_NUMBER: _ClassVar[int]
    TIMED_OUT_FIELD_NUMBER: _ClassVar[int]
    STAKE_FIELD_NUMBER: _ClassVar[int]
    TRICK_CLOSED_FIELD_NUMBER: _ClassVar[int]
    NEXT_SEAT_FIELD_NUMBER: _ClassVar[int]
    DOUBLING_FIELD_NUMBER: _ClassVar[int]
    seat: int
    cards: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    combination: _cards_pb2.Combination
    cards_left: int
    timed_out: bool
    stake: int
    trick_closed: bool
    next_seat: int
    doubling: _table_pb2.DoublingCause
    def __init__(self, seat: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., combination: _Optional[_Union[_cards_pb2.Combination, _Mapping]] = ..., cards_left: _Optional[int] = ..., timed_out: _Optional[bool] = ..., stake: _Optional[int] = ..., trick_closed: _Optional[bool] = ..., next_seat: _Optional[int] = ..., doubling: _Optional[_Union[_table_pb2.DoublingCause, str]] = ...) -> None: ...

class RoundEnded(_message.Message):
    __slots__ = ("settlement", "reveal", "balances")
    SETTLEMENT_FIELD_NUMBER: _ClassVar[int]
    REVEAL_FIELD_NUMBER: _ClassVar[int]
    BALANCES_FIELD_NUMBER: _ClassVar[int]
    settlement: _table_pb2.RoundSettlement
    reveal: _table_pb2.DealReveal
    balances: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, settlement: _Optional[_Union[_table_pb2.RoundSettlement, _Mapping]] = ..., reveal: _Optional[_Union[_table_pb2.DealReveal, _Mapping]] = ..., balances: _Optional[_Iterable[int]] = ...) -> None: ...

class SeatSettled(_message.Message):
    __slots__ = ("seat", "round")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    seat: int
    round: int
    def __init__(self, seat: _Optional[int] = ..., round: _Optional[int] = ...) -> None: ...

class TurnDeadline(_message.Message):
    __slots__ = ("seat", "deadline", "time_bank_left")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_LEFT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    deadline: _timestamp_pb2.Timestamp
    time_bank_left: _duration_pb2.Duration
    def __init__(self, seat: _Optional[int] = ..., deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., time_bank_left: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class TableClosed(_message.Message):
    __slots__ = ("reason", "standings")
    REASON_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_FIELD_NUMBER: _ClassVar[int]
    reason: _table_pb2.CloseReason
    standings: _containers.RepeatedCompositeFieldContainer[_table_pb2.Standing]
    def __init__(self, reason: _Optional[_Union[_table_pb2.CloseReason, str]] = ..., standings: _Optional[_Iterable[_Union[_table_pb2.Standing, _Mapping]]] = ...) -> None: ...

class Heartbeat(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SeatPresence(_message.Message):
    __slots__ = ("seat", "connected")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    connected: bool
    def __init__(self, seat: _Optional[int] = ..., connected: _Optional[bool] = ...) -> None: ...
