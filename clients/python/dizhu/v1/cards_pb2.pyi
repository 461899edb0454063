from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Variant(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    VARIANT_UNSPECIFIED: _ClassVar[Variant]
    VARIANT_THREE_PLAYER: _ClassVar[Variant]
    VARIANT_FOUR_PLAYER: _ClassVar[Variant]

class Rank(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RANK_UNSPECIFIED: _ClassVar[Rank]
    RANK_THREE: _ClassVar[Rank]
    RANK_FOUR: _ClassVar[Rank]
    RANK_FIVE: _ClassVar[Rank]
    RANK_SIX: _ClassVar[Rank]
    RANK_SEVEN: _ClassVar[Rank]
    RANK_EIGHT: _ClassVar[Rank]
    RANK_NINE: _ClassVar[Rank]
    RANK_TEN: _ClassVar[Rank]
    RANK_JACK: _ClassVar[Rank]
    RANK_QUEEN: _ClassVar[Rank]
    RANK_KING: _ClassVar[Rank]
    RANK_ACE: _ClassVar[Rank]
    RANK_TWO: _ClassVar[Rank]
    RANK_BLACK_JOKER: _ClassVar[Rank]
    RANK_RED_JOKER: _ClassVar[Rank]

class Suit(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SUIT_UNSPECIFIED: _ClassVar[Suit]
    SUIT_CLUBS: _ClassVar[Suit]
    SUIT_DIAMONDS: _ClassVar[Suit]
    SUIT_HEARTS: _ClassVar[Suit]
    SUIT_SPADES: _ClassVar[Suit]
    SUIT_JOKER: _ClassVar[Suit]

class CombinationKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    COMBINATION_KIND_UNSPECIFIED: _ClassVar[CombinationKind]
    COMBINATION_KIND_SINGLE: _ClassVar[CombinationKind]
    COMBINATION_KIND_PAIR: _ClassVar[CombinationKind]
    COMBINATION_KIND_TRIO: _ClassVar[CombinationKind]
    COMBINATION_KIND_TRIO_WITH_SINGLE: _ClassVar[CombinationKind]
    COMBINATION_KIND_TRIO_WITH_PAIR: _ClassVar[CombinationKind]
    COMBINATION_KIND_STRAIGHT: _ClassVar[CombinationKind]
    COMBINATION_KIND_PAIR_SEQUENCE: _ClassVar[CombinationKind]
    COMBINATION_KIND_TRIO_SEQUENCE: _ClassVar[CombinationKind]
    COMBINATION_KIND_AIRPLANE_WITH_SINGLES: _ClassVar[CombinationKind]
    COMBINATION_KIND_AIRPLANE_WITH_PAIRS: _ClassVar[CombinationKind]
    COMBINATION_KIND_BOMB: _ClassVar[CombinationKind]
    COMBINATION_KIND_ROCKET: _ClassVar[CombinationKind]
    COMBINATION_KIND_QUAD_WITH_TWO_SINGLES: _ClassVar[CombinationKind]
    COMBINATION_KIND_QUAD_WITH_TWO_PAIRS: _ClassVar[CombinationKind]
VARIANT_UNSPECIFIED: Variant
VARIANT_THREE_PLAYER: Variant
VARIANT_FOUR_PLAYER: Variant
RANK_UNSPECIFIED: Rank
RANK_THREE: Rank
RANK_FOUR: Rank
RANK_FIVE: Rank
RANK_SIX: Rank
RANK_SEVEN: Rank
RANK_EIGHT: Rank
RANK_NINE: Rank
RANK_TEN: Rank
RANK_JACK: Rank
RANK_QUEEN: Rank
RANK_KING: Rank
RANK_ACE: Rank
RANK_TWO: Rank
RANK_BLACK_JOKER: Rank
RANK_RED_JOKER: Rank
SUIT_UNSPECIFIED: Suit
SUIT_CLUBS: Suit
SUIT_DIAMONDS: Suit
SUIT_HEARTS: Suit
SUIT_SPADES: Suit
SUIT_JOKER: Suit
COMBINATION_KIND_UNSPECIFIED: CombinationKind
COMBINATION_KIND_SINGLE: CombinationKind
COMBINATION_KIND_PAIR: CombinationKind
COMBINATION_KIND_TRIO: CombinationKind
COMBINATION_KIND_TRIO_WITH_SINGLE: CombinationKind
COMBINATION_KIND_TRIO_WITH_PAIR: CombinationKind
COMBINATION_KIND_STRAIGHT: CombinationKind
COMBINATION_KIND_PAIR_SEQUENCE: CombinationKind
COMBINATION_KIND_TRIO_SEQUENCE: CombinationKind
COMBINATION_KIND_AIRPLANE_WITH_SINGLES: CombinationKind
COMBINATION_KIND_AIRPLANE_WITH_PAIRS: CombinationKind
COMBINATION_KIND_BOMB: CombinationKind
COMBINATION_KIND_ROCKET: CombinationKind
COMBINATION_KIND_QUAD_WITH_TWO_SINGLES: CombinationKind
COMBINATION_KIND_QUAD_WITH_TWO_PAIRS: CombinationKind

class Card(_message.Message):
    __slots__ = ("rank", "suit", "copy")
    RANK_FIELD_NUMBER: _ClassVar[int]
    SUIT_FIELD_NUMBER: _ClassVar[int]
    COPY_FIELD_NUMBER: _ClassVar[int]
    rank: Rank
    suit: Suit
    copy: int
    def __init__(self, rank: _Optional[_Union[Rank, str]] = ..., suit: _Optional[_Union[Suit, str]] = ..., copy: _Optional[int] = ...) -> None: ...

class CardSet(_message.Message):
    __slots__ = ("cards", "ranks")
    CARDS_FIELD_NUMBER: _ClassVar[int]
    RANKS_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedCompositeFieldContainer[Card]
    ranks: _containers.RepeatedScalarFieldContainer[Rank]
    def __init__(self, cards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., ranks: _Optional[_Iterable[_Union[Rank, str]]] = ...) -> None: ...

class Combination(_message.Message):
    __slots__ = ("kind", "main_rank", "size", "ranks")
    KIND_FIELD_NUMBER: _ClassVar[int]
    MAIN_RANK_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    RANKS_FIELD_NUMBER: _ClassVar[int]
    kind: CombinationKind
    main_rank: Rank
    size: int
    ranks: _containers.RepeatedScalarFieldContainer[Rank]
    def __init__(self, kind: _Optional[_Union[CombinationKind, str]] = ..., main_rank: _Optional[_Union[Rank, str]] = ..., size: _Optional[int] = ..., ranks: _Optional[_Iterable[_Union[Rank, str]]] = ...) -> None: ...
