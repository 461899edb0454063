import datetime

from dizhu.v1 import cards_pb2 as _cards_pb2
from dizhu.v1 import events_pb2 as _events_pb2
from dizhu.v1 import replay_pb2 as _replay_pb2
from dizhu.v1 import table_pb2 as _table_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SeatToken(_message.Message):
    __slots__ = ("seat", "player_name", "token")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYER_NAME_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    seat: int
    player_name: str
    token: str
    def __init__(self, seat: _Optional[int] = ..., player_name: _Optional[str] = ..., token: _Optional[str] = ...) -> None: ...

class CreateTableRequest(_message.Message):
    __slots__ = ("request_id", "settings", "seeds", "player_names")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    SEEDS_FIELD_NUMBER: _ClassVar[int]
    PLAYER_NAMES_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    settings: _table_pb2.TableSettings
    seeds: _containers.RepeatedScalarFieldContainer[bytes]
    player_names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, request_id: _Optional[str] = ..., settings: _Optional[_Union[_table_pb2.TableSettings, _Mapping]] = ..., seeds: _Optional[_Iterable[bytes]] = ..., player_names: _Optional[_Iterable[str]] = ...) -> None: ...

class CreateTableResponse(_message.Message):
    __slots__ = ("table_id", "creator_token", "seat_tokens", "table")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    CREATOR_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    creator_token: str
    seat_tokens: _containers.RepeatedCompositeFieldContainer[SeatToken]
    table: _table_pb2.TableView
    def __init__(self, table_id: _Optional[str] = ..., creator_token: _Optional[str] = ..., seat_tokens: _Optional[_Iterable[_Union[SeatToken, _Mapping]]] = ..., table: _Optional[_Union[_table_pb2.TableView, _Mapping]] = ...) -> None: ...

class JoinTableRequest(_message.Message):
    __slots__ = ("table_id", "request_id", "expected_version", "player_name", "seat")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    PLAYER_NAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    request_id: str
    expected_version: int
    player_name: str
    seat: int
    def __init__(self, table_id: _Optional[str] = ..., request_id: _Optional[str] = ..., expected_version: _Optional[int] = ..., player_name: _Optional[str] = ..., seat: _Optional[int] = ...) -> None: ...

class JoinTableResponse(_message.Message):
    __slots__ = ("seat", "seat_token", "table")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    seat_token: str
    table: _table_pb2.TableView
    def __init__(self, seat: _Optional[int] = ..., seat_token: _Optional[str] = ..., table: _Optional[_Union[_table_pb2.TableView, _Mapping]] = ...) -> None: ...

class GetTableRequest(_message.Message):
    __slots__ = ("table_id",)
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    def __init__(self, table_id: _Optional[str] = ...) -> None: ...

class GetTableResponse(_message.Message):
    __slots__ = ("table",)
    TABLE_FIELD_NUMBER: _ClassVar[int]
    table: _table_pb2.TableView
    def __init__(self, table: _Optional[_Union[_table_pb2.TableView, _Mapping]] = ...) -> None: ...

class LeaveTableRequest(_message.Message):
    __slots__ = ("table_id", "request_id", "expected_version")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    request_id: str
    expected_version: int
    def __init__(self, table_id: _Optional[str] = ..., request_id: _Optional[str] = ..., expected_version: _Optional[int] = ...) -> None: ...

class LeaveTableResponse(_message.Message):
    __slots__ = ("table",)
    TABLE_FIELD_NUMBER: _ClassVar[int]
    table: _table_pb2.TableView
    def __init__(self, table: _Optional[_Union[_table_pb2.TableView, _Mapping]] = ...) -> None: ...

class CloseTableRequest(_message.Message):
    __slots__ = ("table_id", "request_id", "expected_version")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    request_id: str
    expected_version: int
    def __init__(self, table_id: _Optional[str] = ..., request_id: _Optional[str] = ..., expected_version: _Optional[int] = ...) -> None: ...

class CloseTableResponse(_message.Message):
    __slots__ = ("standings", "table")
    STANDINGS_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    standings: _containers.RepeatedCompositeFieldContainer[_table_pb2.Standing]
    table: _table_pb2.TableView
    def __init__(self, standings: _Optional[_Iterable[_Union[_table_pb2.Standing, _Mapping]]] = ..., table: _Optional[_Union[_table_pb2.TableView, _Mapping]] = ...) -> None: ...

class BidRequest(_message.Message):
    __slots__ = ("table_id", "request_id", "expected_version", "amount")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    AMOUNT_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    request_id: str
    expected_version: int
    amount: int
    def __init__(self, table_id: _Optional[str] = ..., request_id: _Optional[str] = ..., expected_version: _Optional[int] = ..., amount: _Optional[int] = ...) -> None: ...

class BidResponse(_message.Message):
    __slots__ = ("table",)
    TABLE_FIELD_NUMBER: _ClassVar[int]
    table: _table_pb2.TableView
    def __init__(self, table: _Optional[_Union[_table_pb2.TableView, _Mapping]] = ...) -> None: ...

class PlayRequest(_message.Message):
    __slots__ = ("table_id", "request_id", "expected_version", "cards")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    request_id: str
    expected_version: int
    cards: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    def __init__(self, table_id: _Optional[str] = ..., request_id: _Optional[str] = ..., expected_version: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ...) -> None: ...

class PlayResponse(_message.Message):
    __slots__ = ("combination", "table")
    COMBINATION_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    combination: _cards_pb2.Combination
    table: _table_pb2.TableView
    def __init__(self, combination: _Optional[_Union[_cards_pb2.Combination, _Mapping]] = ..., table: _Optional[_Union[_table_pb2.TableView, _Mapping]] = ...) -> None: ...

class SettleRequest(_message.Message):
    __slots__ = ("table_id", "request_id", "expected_version")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    request_id: str
    expected_version: int
    def __init__(self, table_id: _Optional[str] = ..., request_id: _Optional[str] = ..., expected_version: _Optional[int] = ...) -> None: ...

class SettleResponse(_message.Message):
    __slots__ = ("settlement", "reveal", "standings", "table")
    SETTLEMENT_FIELD_NUMBER: _ClassVar[int]
    REVEAL_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    settlement: _table_pb2.RoundSettlement
    reveal: _table_pb2.DealReveal
    standings: _containers.RepeatedCompositeFieldContainer[_table_pb2.Standing]
    table: _table_pb2.TableView
    def __init__(self, settlement: _Optional[_Union[_table_pb2.RoundSettlement, _Mapping]] = ..., reveal: _Optional[_Union[_table_pb2.DealReveal, _Mapping]] = ..., standings: _Optional[_Iterable[_Union[_table_pb2.Standing, _Mapping]]] = ..., table: _Optional[_Union[_table_pb2.TableView, _Mapping]] = ...) -> None: ...

class WatchTableRequest(_message.Message):
    __slots__ = ("table_id", "after_sequence", "after_write_id")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    AFTER_WRITE_ID_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    after_sequence: int
    after_write_id: int
    def __init__(self, table_id: _Optional[str] = ..., after_sequence: _Optional[int] = ..., after_write_id: _Optional[int] = ...) -> None: ...

class WatchTableResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: _events_pb2.TableEvent
    def __init__(self, event: _Optional[_Union[_events_pb2.TableEvent, _Mapping]] = ...) -> None: ...

class GetReplayRequest(_message.Message):
    __slots__ = ("table_id", "round")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    round: int
    def __init__(self, table_id: _Optional[str] = ..., round: _Optional[int] = ...) -> None: ...

class GetReplayResponse(_message.Message):
    __slots__ = ("replay", "json", "signature")
    REPLAY_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    replay: _replay_pb2.Replay
    json: str
    signature: _replay_pb2.ReplaySignature
    def __init__(self, replay: _Optional[_Union[_replay_pb2.Replay, _Mapping]] = ..., json: _Optional[str] = ..., signature: _Optional[_Union[_replay_pb2.ReplaySignature, _Mapping]] = ...) -> None: ...

class GetRefereeKeysRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RefereeKey(_message.Message):
    __slots__ = ("key_id", "algorithm", "public_key", "pem", "current")
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    ALGORITHM_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_KEY_FIELD_NUMBER: _ClassVar[int]
    PEM_FIELD_NUMBER: _ClassVar[int]
    CURRENT_FIELD_NUMBER: _ClassVar[int]
    key_id: str
    algorithm: str
    public_key: bytes
    pem: str
    current: bool
    def __init__(self, key_id: _Optional[str] = ..., algorithm: _Optional[str] = ..., public_key: _Optional[bytes] = ..., pem: _Optional[str] = ..., current: _Optional[bool] = ...) -> None: ...

class GetRefereeKeysResponse(_message.Message):
    __slots__ = ("keys",)
    KEYS_FIELD_NUMBER: _ClassVar[int]
    keys: _containers.RepeatedCompositeFieldContainer[RefereeKey]
    def __init__(self, keys: _Optional[_Iterable[_Union[RefereeKey, _Mapping]]] = ...) -> None: ...

class ListTablesRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class TableSummary(_message.Message):
    __slots__ = ("table_id", "variant", "phase", "round", "round_limit", "player_names", "free_seats", "created_at", "last_active_at")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    ROUND_LIMIT_FIELD_NUMBER: _ClassVar[int]
    PLAYER_NAMES_FIELD_NUMBER: _ClassVar[int]
    FREE_SEATS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_ACTIVE_AT_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    variant: _cards_pb2.Variant
    phase: _table_pb2.Phase
    round: int
    round_limit: int
    player_names: _containers.RepeatedScalarFieldContainer[str]
    free_seats: int
    created_at: _timestamp_pb2.Timestamp
    last_active_at: _timestamp_pb2.Timestamp
    def __init__(self, table_id: _Optional[str] = ..., variant: _Optional[_Union[_cards_pb2.Variant, str]] = ..., phase: _Optional[_Union[_table_pb2.Phase, str]] = ..., round: _Optional[int] = ..., round_limit: _Optional[int] = ..., player_names: _Optional[_Iterable[str]] = ..., free_seats: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_active_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListTablesResponse(_message.Message):
    __slots__ = ("tables", "next_page_token")
    TABLES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    tables: _containers.RepeatedCompositeFieldContainer[TableSummary]
    next_page_token: str
    def __init__(self, tables: _Optional[_Iterable[_Union[TableSummary, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...
