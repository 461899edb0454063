from google.protobuf import descriptor_pb2 as _descriptor_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ErrorReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_REASON_UNSPECIFIED: _ClassVar[ErrorReason]
    ERROR_REASON_NOT_YOUR_TURN: _ClassVar[ErrorReason]
    ERROR_REASON_ILLEGAL_COMBINATION: _ClassVar[ErrorReason]
    ERROR_REASON_DOES_NOT_BEAT: _ClassVar[ErrorReason]
    ERROR_REASON_CARDS_NOT_IN_HAND: _ClassVar[ErrorReason]
    ERROR_REASON_MUST_LEAD: _ClassVar[ErrorReason]
    ERROR_REASON_BID_TOO_LOW: _ClassVar[ErrorReason]
    ERROR_REASON_WRONG_PHASE: _ClassVar[ErrorReason]
    ERROR_REASON_STALE_STATE: _ClassVar[ErrorReason]
    ERROR_REASON_TABLE_NOT_FOUND: _ClassVar[ErrorReason]
    ERROR_REASON_TABLE_FULL: _ClassVar[ErrorReason]
    ERROR_REASON_UNAUTHENTICATED: _ClassVar[ErrorReason]
    ERROR_REASON_PERMISSION_DENIED: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_ARGUMENT: _ClassVar[ErrorReason]
    ERROR_REASON_TABLE_CLOSED: _ClassVar[ErrorReason]
    ERROR_REASON_SEAT_TAKEN: _ClassVar[ErrorReason]
    ERROR_REASON_REQUEST_ID_REUSED: _ClassVar[ErrorReason]
    ERROR_REASON_SEQUENCE_OUT_OF_RANGE: _ClassVar[ErrorReason]
    ERROR_REASON_UNAVAILABLE: _ClassVar[ErrorReason]
    ERROR_REASON_INTERNAL: _ClassVar[ErrorReason]
    ERROR_REASON_RATE_LIMITED: _ClassVar[ErrorReason]
    ERROR_REASON_QUOTA_EXCEEDED: _ClassVar[ErrorReason]
    ERROR_REASON_STORE_FULL: _ClassVar[ErrorReason]

class ErrorCategory(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_CATEGORY_UNSPECIFIED: _ClassVar[ErrorCategory]
    ERROR_CATEGORY_RETRYABLE: _ClassVar[ErrorCategory]
    ERROR_CATEGORY_MOVED_ON: _ClassVar[ErrorCategory]
    ERROR_CATEGORY_MOVE_REFUSED: _ClassVar[ErrorCategory]
    ERROR_CATEGORY_REFUSED: _ClassVar[ErrorCategory]
ERROR_REASON_UNSPECIFIED: ErrorReason
ERROR_REASON_NOT_YOUR_TURN: ErrorReason
ERROR_REASON_ILLEGAL_COMBINATION: ErrorReason
ERROR_REASON_DOES_NOT_BEAT: ErrorReason
ERROR_REASON_CARDS_NOT_IN_HAND: ErrorReason
ERROR_REASON_MUST_LEAD: ErrorReason
ERROR_REASON_BID_TOO_LOW: ErrorReason
ERROR_REASON_WRONG_PHASE: ErrorReason
ERROR_REASON_STALE_STATE: ErrorReason
ERROR_REASON_TABLE_NOT_FOUND: ErrorReason
ERROR_REASON_TABLE_FULL: ErrorReason
ERROR_REASON_UNAUTHENTICATED: ErrorReason
ERROR_REASON_PERMISSION_DENIED: ErrorReason
ERROR_REASON_INVALID_ARGUMENT: ErrorReason
ERROR_REASON_TABLE_CLOSED: ErrorReason
ERROR_REASON_SEAT_TAKEN: ErrorReason
ERROR_REASON_REQUEST_ID_REUSED: ErrorReason
ERROR_REASON_SEQUENCE_OUT_OF_RANGE: ErrorReason
ERROR_REASON_UNAVAILABLE: ErrorReason
ERROR_REASON_INTERNAL: ErrorReason
ERROR_REASON_RATE_LIMITED: ErrorReason
ERROR_REASON_QUOTA_EXCEEDED: ErrorReason
ERROR_REASON_STORE_FULL: ErrorReason
ERROR_CATEGORY_UNSPECIFIED: ErrorCategory
ERROR_CATEGORY_RETRYABLE: ErrorCategory
ERROR_CATEGORY_MOVED_ON: ErrorCategory
ERROR_CATEGORY_MOVE_REFUSED: ErrorCategory
ERROR_CATEGORY_REFUSED: ErrorCategory
FACTS_FIELD_NUMBER: _ClassVar[int]
facts: _descriptor.FieldDescriptor

class ErrorFacts(_message.Message):
    __slots__ = ("code", "category", "metadata_keys", "retry_info", "bad_request_field", "summary")
    CODE_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    METADATA_KEYS_FIELD_NUMBER: _ClassVar[int]
    RETRY_INFO_FIELD_NUMBER: _ClassVar[int]
    BAD_REQUEST_FIELD_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    code: str
    category: ErrorCategory
    metadata_keys: _containers.RepeatedScalarFieldContainer[str]
    retry_info: bool
    bad_request_field: str
    summary: str
    def __init__(self, code: _Optional[str] = ..., category: _Optional[_Union[ErrorCategory, str]] = ..., metadata_keys: _Optional[_Iterable[str]] = ..., retry_info: _Optional[bool] = ..., bad_request_field: _Optional[str] = ..., summary: _Optional[str] = ...) -> None: ...
