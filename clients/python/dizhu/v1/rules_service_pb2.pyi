from dizhu.v1 import cards_pb2 as _cards_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Classification(_message.Message):
    __slots__ = ("combinations", "reason")
    COMBINATIONS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    combinations: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Combination]
    reason: str
    def __init__(self, combinations: _Optional[_Iterable[_Union[_cards_pb2.Combination, _Mapping]]] = ..., reason: _Optional[str] = ...) -> None: ...

class ClassifyRequest(_message.Message):
    __slots__ = ("variant", "cards")
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    variant: _cards_pb2.Variant
    cards: _cards_pb2.CardSet
    def __init__(self, variant: _Optional[_Union[_cards_pb2.Variant, str]] = ..., cards: _Optional[_Union[_cards_pb2.CardSet, _Mapping]] = ...) -> None: ...

class ClassifyResponse(_message.Message):
    __slots__ = ("classification",)
    CLASSIFICATION_FIELD_NUMBER: _ClassVar[int]
    classification: Classification
    def __init__(self, classification: _Optional[_Union[Classification, _Mapping]] = ...) -> None: ...

class LegalMove(_message.Message):
    __slots__ = ("combination", "cards")
    COMBINATION_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    combination: _cards_pb2.Combination
    cards: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    def __init__(self, combination: _Optional[_Union[_cards_pb2.Combination, _Mapping]] = ..., cards: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ...) -> None: ...

class ListLegalMovesRequest(_message.Message):
    __slots__ = ("variant", "hand", "to_beat")
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    TO_BEAT_FIELD_NUMBER: _ClassVar[int]
    variant: _cards_pb2.Variant
    hand: _cards_pb2.CardSet
    to_beat: _cards_pb2.CardSet
    def __init__(self, variant: _Optional[_Union[_cards_pb2.Variant, str]] = ..., hand: _Optional[_Union[_cards_pb2.CardSet, _Mapping]] = ..., to_beat: _Optional[_Union[_cards_pb2.CardSet, _Mapping]] = ...) -> None: ...

class ListLegalMovesResponse(_message.Message):
    __slots__ = ("moves", "can_pass")
    MOVES_FIELD_NUMBER: _ClassVar[int]
    CAN_PASS_FIELD_NUMBER: _ClassVar[int]
    moves: _containers.RepeatedCompositeFieldContainer[LegalMove]
    can_pass: bool
    def __init__(self, moves: _Optional[_Iterable[_Union[LegalMove, _Mapping]]] = ..., can_pass: _Optional[bool] = ...) -> None: ...

class CompareRequest(_message.Message):
    __slots__ = ("variant", "a", "b")
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    A_FIELD_NUMBER: _ClassVar[int]
    B_FIELD_NUMBER: _ClassVar[int]
    variant: _cards_pb2.Variant
    a: _cards_pb2.CardSet
    b: _cards_pb2.CardSet
    def __init__(self, variant: _Optional[_Union[_cards_pb2.Variant, str]] = ..., a: _Optional[_Union[_cards_pb2.CardSet, _Mapping]] = ..., b: _Optional[_Union[_cards_pb2.CardSet, _Mapping]] = ...) -> None: ...

class CompareResponse(_message.Message):
    __slots__ = ("beats", "a", "b")
    BEATS_FIELD_NUMBER: _ClassVar[int]
    A_FIELD_NUMBER: _ClassVar[int]
    B_FIELD_NUMBER: _ClassVar[int]
    beats: bool
    a: Classification
    b: Classification
    def __init__(self, beats: _Optional[bool] = ..., a: _Optional[_Union[Classification, _Mapping]] = ..., b: _Optional[_Union[Classification, _Mapping]] = ...) -> None: ...
