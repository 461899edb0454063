import datetime

from dizhu.v1 import cards_pb2 as _cards_pb2
from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TimeoutPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TIMEOUT_POLICY_UNSPECIFIED: _ClassVar[TimeoutPolicy]
    TIMEOUT_POLICY_AUTO_PLAY: _ClassVar[TimeoutPolicy]
    TIMEOUT_POLICY_FORFEIT: _ClassVar[TimeoutPolicy]

class NextRound(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    NEXT_ROUND_UNSPECIFIED: _ClassVar[NextRound]
    NEXT_ROUND_AUTOMATIC: _ClassVar[NextRound]
    NEXT_ROUND_WHEN_ALL_SETTLED: _ClassVar[NextRound]

class Phase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PHASE_UNSPECIFIED: _ClassVar[Phase]
    PHASE_WAITING_FOR_PLAYERS: _ClassVar[Phase]
    PHASE_AUCTION: _ClassVar[Phase]
    PHASE_PLAY: _ClassVar[Phase]
    PHASE_ROUND_OVER: _ClassVar[Phase]
    PHASE_CLOSED: _ClassVar[Phase]

class CloseReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CLOSE_REASON_UNSPECIFIED: _ClassVar[CloseReason]
    CLOSE_REASON_CLOSED_BY_CREATOR: _ClassVar[CloseReason]
    CLOSE_REASON_ROUND_LIMIT: _ClassVar[CloseReason]
    CLOSE_REASON_ABANDONED: _ClassVar[CloseReason]

class RoundOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ROUND_OUTCOME_UNSPECIFIED: _ClassVar[RoundOutcome]
    ROUND_OUTCOME_LANDLORD_WON: _ClassVar[RoundOutcome]
    ROUND_OUTCOME_FARMERS_WON: _ClassVar[RoundOutcome]
    ROUND_OUTCOME_VOID: _ClassVar[RoundOutcome]
    ROUND_OUTCOME_ABANDONED: _ClassVar[RoundOutcome]

class DoublingCause(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DOUBLING_CAUSE_UNSPECIFIED: _ClassVar[DoublingCause]
    DOUBLING_CAUSE_BOMB: _ClassVar[DoublingCause]
    DOUBLING_CAUSE_ROCKET: _ClassVar[DoublingCause]
TIMEOUT_POLICY_UNSPECIFIED: TimeoutPolicy
TIMEOUT_POLICY_AUTO_PLAY: TimeoutPolicy
TIMEOUT_POLICY_FORFEIT: TimeoutPolicy
NEXT_ROUND_UNSPECIFIED: NextRound
NEXT_ROUND_AUTOMATIC: NextRound
NEXT_ROUND_WHEN_ALL_SETTLED: NextRound
PHASE_UNSPECIFIED: Phase
PHASE_WAITING_FOR_PLAYERS: Phase
PHASE_AUCTION: Phase
PHASE_PLAY: Phase
PHASE_ROUND_OVER: Phase
PHASE_CLOSED: Phase
CLOSE_REASON_UNSPECIFIED: CloseReason
CLOSE_REASON_CLOSED_BY_CREATOR: CloseReason
CLOSE_REASON_ROUND_LIMIT: CloseReason
CLOSE_REASON_ABANDONED: CloseReason
ROUND_OUTCOME_UNSPECIFIED: RoundOutcome
ROUND_OUTCOME_LANDLORD_WON: RoundOutcome
ROUND_OUTCOME_FARMERS_WON: RoundOutcome
ROUND_OUTCOME_VOID: RoundOutcome
ROUND_OUTCOME_ABANDONED: RoundOutcome
DOUBLING_CAUSE_UNSPECIFIED: DoublingCause
DOUBLING_CAUSE_BOMB: DoublingCause
DOUBLING_CAUSE_ROCKET: DoublingCause

class HouseRules(_message.Message):
    __slots__ = ("spring",)
    SPRING_FIELD_NUMBER: _ClassVar[int]
    spring: bool
    def __init__(self, spring: _Optional[bool] = ...) -> None: ...

class ClockSettings(_message.Message):
    __slots__ = ("decision_time", "first_decision_time", "time_bank", "timeout_policy")
    DECISION_TIME_FIELD_NUMBER: _ClassVar[int]
    FIRST_DECISION_TIME_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_POLICY_FIELD_NUMBER: _ClassVar[int]
    decision_time: _duration_pb2.Duration
    first_decision_time: _duration_pb2.Duration
    time_bank: _duration_pb2.Duration
    timeout_policy: TimeoutPolicy
    def __init__(self, decision_time: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., first_decision_time: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., time_bank: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., timeout_policy: _Optional[_Union[TimeoutPolicy, str]] = ...) -> None: ...

class TableSettings(_message.Message):
    __slots__ = ("variant", "house_rules", "clock", "round_limit", "max_redeals", "next_round", "first_dealer")
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    HOUSE_RULES_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    ROUND_LIMIT_FIELD_NUMBER: _ClassVar[int]
    MAX_REDEALS_FIELD_NUMBER: _ClassVar[int]
    NEXT_ROUND_FIELD_NUMBER: _ClassVar[int]
    FIRST_DEALER_FIELD_NUMBER: _ClassVar[int]
    variant: _cards_pb2.Variant
    house_rules: HouseRules
    clock: ClockSettings
    round_limit: int
    max_redeals: int
    next_round: NextRound
    first_dealer: int
    def __init__(self, variant: _Optional[_Union[_cards_pb2.Variant, str]] = ..., house_rules: _Optional[_Union[HouseRules, _Mapping]] = ..., clock: _Optional[_Union[ClockSettings, _Mapping]] = ..., round_limit: _Optional[int] = ..., max_redeals: _Optional[int] = ..., next_round: _Optional[_Union[NextRound, str]] = ..., first_dealer: _Optional[int] = ...) -> None: ...

class SeatView(_message.Message):
    __slots__ = ("seat", "occupied", "player_name", "connected", "cards_left", "balance", "time_bank_left", "timeouts")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    OCCUPIED_FIELD_NUMBER: _ClassVar[int]
    PLAYER_NAME_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_FIELD_NUMBER: _ClassVar[int]
    CARDS_LEFT_FIELD_NUMBER: _ClassVar[int]
    BALANCE_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_LEFT_FIELD_NUMBER: _ClassVar[int]
    TIMEOUTS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    occupied: bool
    player_name: str
    connected: bool
    cards_left: int
    balance: int
    time_bank_left: _duration_pb2.Duration
    timeouts: int
    def __init__(self, seat: _Optional[int] = ..., occupied: _Optional[bool] = ..., player_name: _Optional[str] = ..., connected: _Optional[bool] = ..., cards_left: _Optional[int] = ..., balance: _Optional[int] = ..., time_bank_left: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., timeouts: _Optional[int] = ...) -> None: ...

class AuctionBid(_message.Message):
    __slots__ = ("seat", "amount")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    AMOUNT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    amount: int
    def __init__(self, seat: _Optional[int] = ..., amount: _Optional[int] = ...) -> None: ...

class TrickPlay(_message.Message):
    __slots__ = ("seat", "cards", "combination")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    COMBINATION_FIELD_NUMBER: _ClassVar[int]
    seat: int
    cards: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    combination: _cards_pb2.Combination
    def __init__(self, seat: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., combination: _Optional[_Union[_cards_pb2.Combination, _Mapping]] = ...) -> None: ...

class Trick(_message.Message):
    __slots__ = ("leader_seat", "plays")
    LEADER_SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYS_FIELD_NUMBER: _ClassVar[int]
    leader_seat: int
    plays: _containers.RepeatedCompositeFieldContainer[TrickPlay]
    def __init__(self, leader_seat: _Optional[int] = ..., plays: _Optional[_Iterable[_Union[TrickPlay, _Mapping]]] = ...) -> None: ...

class RoundSettlement(_message.Message):
    __slots__ = ("round", "outcome", "landlord_seat", "winner_seat", "forfeited_seat", "bid", "doublings", "spring", "stake", "balance_changes")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    LANDLORD_SEAT_FIELD_NUMBER: _ClassVar[int]
    WINNER_SEAT_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_SEAT_FIELD_NUMBER: _ClassVar[int]
    BID_FIELD_NUMBER: _ClassVar[int]
    DOUBLINGS_FIELD_NUMBER: _ClassVar[int]
    SPRING_FIELD_NUMBER: _ClassVar[int]
    STAKE_FIELD_NUMBER: _ClassVar[int]
    BALANCE_CHANGES_FIELD_NUMBER: _ClassVar[int]
    round: int
    outcome: RoundOutcome
    landlord_seat: int
    winner_seat: int
    forfeited_seat: int
    bid: int
    doublings: int
    spring: bool
    stake: int
    balance_changes: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, round: _Optional[int] = ..., outcome: _Optional[_Union[RoundOutcome, str]] = ..., landlord_seat: _Optional[int] = ..., winner_seat: _Optional[int] = ..., forfeited_seat: _Optional[int] = ..., bid: _Optional[int] = ..., doublings: _Optional[int] = ..., spring: _Optional[bool] = ..., stake: _Optional[int] = ..., balance_changes: _Optional[_Iterable[int]] = ...) -> None: ...

class DealtHand(_message.Message):
    __slots__ = ("seat", "cards")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    cards: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    def __init__(self, seat: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ...) -> None: ...

class DealReveal(_message.Message):
    __slots__ = ("round", "deal_number", "seed", "hands", "kitty")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    KITTY_FIELD_NUMBER: _ClassVar[int]
    round: int
    deal_number: int
    seed: bytes
    hands: _containers.RepeatedCompositeFieldContainer[DealtHand]
    kitty: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    def __init__(self, round: _Optional[int] = ..., deal_number: _Optional[int] = ..., seed: _Optional[bytes] = ..., hands: _Optional[_Iterable[_Union[DealtHand, _Mapping]]] = ..., kitty: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ...) -> None: ...

class Standing(_message.Message):
    __slots__ = ("place", "seat", "player_name", "balance")
    PLACE_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYER_NAME_FIELD_NUMBER: _ClassVar[int]
    BALANCE_FIELD_NUMBER: _ClassVar[int]
    place: int
    seat: int
    player_name: str
    balance: int
    def __init__(self, place: _Optional[int] = ..., seat: _Optional[int] = ..., player_name: _Optional[str] = ..., balance: _Optional[int] = ...) -> None: ...

class TableView(_message.Message):
    __slots__ = ("table_id", "settings", "version", "phase", "close_reason", "seats", "round", "deal_number", "redeals", "dealer_seat", "turn_seat", "turn_deadline", "face_up_card", "face_up_seat", "seed_commitment", "bids", "highest_bid", "landlord_seat", "kitty", "trick", "tricks_completed", "doublings", "stake", "your_seat", "your_hand", "last_settlement", "last_reveal", "history", "to_beat", "doubling_plays", "legal_bids")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    CLOSE_REASON_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    REDEALS_FIELD_NUMBER: _ClassVar[int]
    DEALER_SEAT_FIELD_NUMBER: _ClassVar[int]
    TURN_SEAT_FIELD_NUMBER: _ClassVar[int]
    TURN_DEADLINE_FIELD_NUMBER: _ClassVar[int]
    FACE_UP_CARD_FIELD_NUMBER: _ClassVar[int]
    FACE_UP_SEAT_FIELD_NUMBER: _ClassVar[int]
    SEED_COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    BIDS_FIELD_NUMBER: _ClassVar[int]
    HIGHEST_BID_FIELD_NUMBER: _ClassVar[int]
    LANDLORD_SEAT_FIELD_NUMBER: _ClassVar[int]
    KITTY_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    TRICKS_COMPLETED_FIELD_NUMBER: _ClassVar[int]
    DOUBLINGS_FIELD_NUMBER: _ClassVar[int]
    STAKE_FIELD_NUMBER: _ClassVar[int]
    YOUR_SEAT_FIELD_NUMBER: _ClassVar[int]
    YOUR_HAND_FIELD_NUMBER: _ClassVar[int]
    LAST_SETTLEMENT_FIELD_NUMBER: _ClassVar[int]
    LAST_REVEAL_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    TO_BEAT_FIELD_NUMBER: _ClassVar[int]
    DOUBLING_PLAYS_FIELD_NUMBER: _ClassVar[int]
    LEGAL_BIDS_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    settings: TableSettings
    version: int
    phase: Phase
    close_reason: CloseReason
    seats: _containers.RepeatedCompositeFieldContainer[SeatView]
    round: int
    deal_number: int
    redeals: int
    dealer_seat: int
    turn_seat: int
    turn_deadline: _timestamp_pb2.Timestamp
    face_up_card: _cards_pb2.Card
    face_up_seat: int
    seed_commitment: bytes
    bids: _containers.RepeatedCompositeFieldContainer[AuctionBid]
    highest_bid: int
    landlord_seat: int
    kitty: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    trick: Trick
    tricks_completed: int
    doublings: int
    stake: int
    your_seat: int
    your_hand: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    last_settlement: RoundSettlement
    last_reveal: DealReveal
    history: _containers.RepeatedCompositeFieldContainer[RoundAction]
    to_beat: TrickPlay
    doubling_plays: _containers.RepeatedCompositeFieldContainer[Doubling]
    legal_bids: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, table_id: _Optional[str] = ..., settings: _Optional[_Union[TableSettings, _Mapping]] = ..., version: _Optional[int] = ..., phase: _Optional[_Union[Phase, str]] = ..., close_reason: _Optional[_Union[CloseReason, str]] = ..., seats: _Optional[_Iterable[_Union[SeatView, _Mapping]]] = ..., round: _Optional[int] = ..., deal_number: _Optional[int] = ..., redeals: _Optional[int] = ..., dealer_seat: _Optional[int] = ..., turn_seat: _Optional[int] = ..., turn_deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., face_up_card: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ..., face_up_seat: _Optional[int] = ..., seed_commitment: _Optional[bytes] = ..., bids: _Optional[_Iterable[_Union[AuctionBid, _Mapping]]] = ..., highest_bid: _Optional[int] = ..., landlord_seat: _Optional[int] = ..., kitty: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., trick: _Optional[_Union[Trick, _Mapping]] = ..., tricks_completed: _Optional[int] = ..., doublings: _Optional[int] = ..., stake: _Optional[int] = ..., your_seat: _Optional[int] = ..., your_hand: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., last_settlement: _Optional[_Union[RoundSettlement, _Mapping]] = ..., last_reveal: _Optional[_Union[DealReveal, _Mapping]] = ..., history: _Optional[_Iterable[_Union[RoundAction, _Mapping]]] = ..., to_beat: _Optional[_Union[TrickPlay, _Mapping]] = ..., doubling_plays: _Optional[_Iterable[_Union[Doubling, _Mapping]]] = ..., legal_bids: _Optional[_Iterable[int]] = ...) -> None: ...

class Doubling(_message.Message):
    __slots__ = ("cause", "seat", "cards", "trick")
    CAUSE_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    cause: DoublingCause
    seat: int
    cards: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    trick: int
    def __init__(self, cause: _Optional[_Union[DoublingCause, str]] = ..., seat: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., trick: _Optional[int] = ...) -> None: ...

class RoundAction(_message.Message):
    __slots__ = ("deal_number", "seat", "bid", "cards", "timed_out")
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    BID_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    TIMED_OUT_FIELD_NUMBER: _ClassVar[int]
    deal_number: int
    seat: int
    bid: int
    cards: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    timed_out: bool
    def __init__(self, deal_number: _Optional[int] = ..., seat: _Optional[int] = ..., bid: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., timed_out: _Optional[bool] = ...) -> None: ...
