import datetime

from dizhu.v1 import cards_pb2 as _cards_pb2
from dizhu.v1 import table_pb2 as _table_pb2
from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ActionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACTION_KIND_UNSPECIFIED: _ClassVar[ActionKind]
    ACTION_KIND_BID: _ClassVar[ActionKind]
    ACTION_KIND_PLAY: _ClassVar[ActionKind]
ACTION_KIND_UNSPECIFIED: ActionKind
ACTION_KIND_BID: ActionKind
ACTION_KIND_PLAY: ActionKind

class ReplayAction(_message.Message):
    __slots__ = ("seat", "kind", "bid", "cards", "time", "took", "timed_out")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    BID_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    TOOK_FIELD_NUMBER: _ClassVar[int]
    TIMED_OUT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    kind: ActionKind
    bid: int
    cards: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    time: _timestamp_pb2.Timestamp
    took: _duration_pb2.Duration
    timed_out: bool
    def __init__(self, seat: _Optional[int] = ..., kind: _Optional[_Union[ActionKind, str]] = ..., bid: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., took: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., timed_out: _Optional[bool] = ...) -> None: ...

class ReplayDeal(_message.Message):
    __slots__ = ("deal_number", "dealer_seat", "seed", "seed_commitment", "face_up_card", "face_up_seat", "hands", "kitty", "actions")
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DEALER_SEAT_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    SEED_COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    FACE_UP_CARD_FIELD_NUMBER: _ClassVar[int]
    FACE_UP_SEAT_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    KITTY_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    deal_number: int
    dealer_seat: int
    seed: bytes
    seed_commitment: bytes
    face_up_card: _cards_pb2.Card
    face_up_seat: int
    hands: _containers.RepeatedCompositeFieldContainer[_table_pb2.DealtHand]
    kitty: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    actions: _containers.RepeatedCompositeFieldContainer[ReplayAction]
    def __init__(self, deal_number: _Optional[int] = ..., dealer_seat: _Optional[int] = ..., seed: _Optional[bytes] = ..., seed_commitment: _Optional[bytes] = ..., face_up_card: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ..., face_up_seat: _Optional[int] = ..., hands: _Optional[_Iterable[_Union[_table_pb2.DealtHand, _Mapping]]] = ..., kitty: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., actions: _Optional[_Iterable[_Union[ReplayAction, _Mapping]]] = ...) -> None: ...

class Replay(_message.Message):
    __slots__ = ("schema", "table_id", "variant", "house_rules", "round", "deals", "settlement", "balances", "timeout_policy")
    SCHEMA_FIELD_NUMBER: _ClassVar[int]
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    HOUSE_RULES_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    DEALS_FIELD_NUMBER: _ClassVar[int]
    SETTLEMENT_FIELD_NUMBER: _ClassVar[int]
    BALANCES_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_POLICY_FIELD_NUMBER: _ClassVar[int]
    schema: str
    table_id: str
    variant: _cards_pb2.Variant
    house_rules: _table_pb2.HouseRules
    round: int
    deals: _containers.RepeatedCompositeFieldContainer[ReplayDeal]
    settlement: _table_pb2.RoundSettlement
    balances: _containers.RepeatedScalarFieldContainer[int]
    timeout_policy: _table_pb2.TimeoutPolicy
    def __init__(self, schema: _Optional[str] = ..., table_id: _Optional[str] = ..., variant: _Optional[_Union[_cards_pb2.Variant, str]] = ..., house_rules: _Optional[_Union[_table_pb2.HouseRules, _Mapping]] = ..., round: _Optional[int] = ..., deals: _Optional[_Iterable[_Union[ReplayDeal, _Mapping]]] = ..., settlement: _Optional[_Union[_table_pb2.RoundSettlement, _Mapping]] = ..., balances: _Optional[_Iterable[int]] = ..., timeout_policy: _Optional[_Union[_table_pb2.TimeoutPolicy, str]] = ...) -> None: ...

class ReplaySignature(_message.Message):
    __slots__ = ("algorithm", "key_id", "value")
    ALGORITHM_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    algorithm: str
    key_id: str
    value: bytes
    def __init__(self, algorithm: _Optional[str] = ..., key_id: _Optional[str] = ..., value: _Optional[bytes] = ...) -> None: ...
