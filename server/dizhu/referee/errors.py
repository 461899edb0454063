"""Every refusal the referee can give, each with its machine-readable reason and status.

The hierarchy (``reason`` is ``google.rpc.ErrorInfo.reason``; ``code`` the gRPC status name)::

    RefereeError
    ├── InvalidArgument      INVALID_ARGUMENT     malformed input; carries field violations
    ├── IllegalCombination   INVALID_ARGUMENT     the cards form no combination
    ├── RequestIdReused      INVALID_ARGUMENT     a request id already used for another request
    ├── TableNotFound        NOT_FOUND            no such table (or it expired)
    ├── Unauthenticated      UNAUTHENTICATED      no token, a malformed one, or one not of this table
    ├── PermissionDenied     PERMISSION_DENIED    a valid token used for another role
    ├── StaleState           ABORTED              expected_version is not the table's version
    ├── SequenceOutOfRange   OUT_OF_RANGE         a resume point beyond the latest event
    ├── Unavailable          UNAVAILABLE          the store is unreachable or the server is stopping
    ├── (RESOURCE_EXHAUSTED) RateLimited, QuotaExceeded, StoreFull: carry ``retry_after_ms``
    ├── Internal             INTERNAL             anything unexpected; the message stays generic
    └── (FAILED_PRECONDITION) TableClosed, TableFull, SeatTaken, WrongPhase, NotYourTurn,
                              BidTooLow, MustLead, CardsNotInHand, DoesNotBeat

Each class names its reason only: its status code (``code``) and the request field its
``BadRequest`` names (``field``) are read from the reason's ``facts`` option in errors.proto
when the class is defined, so the contract states them once. The referee layer knows nothing
of gRPC: the service maps ``code`` to a status.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import ClassVar

from dizhu.rules import IllegalAction, Refusal
from dizhu.v1 import errors_pb2

__all__ = [
    "BidTooLow",
    "CardsNotInHand",
    "DoesNotBeat",
    "IllegalCombination",
    "Internal",
    "InvalidArgument",
    "MustLead",
    "NotYourTurn",
    "PermissionDenied",
    "QuotaExceeded",
    "RateLimited",
    "RefereeError",
    "RequestIdReused",
    "ResourceExhausted",
    "SeatTaken",
    "SequenceOutOfRange",
    "StaleState",
    "StoreFull",
    "TableClosed",
    "TableFull",
    "TableNotFound",
    "Unauthenticated",
    "Unavailable",
    "WrongPhase",
    "error_facts",
    "from_refusal",
]

_PREFIX = "ERROR_REASON_"


def _read_facts() -> Mapping[str, errors_pb2.ErrorFacts]:
    values = errors_pb2.ErrorReason.DESCRIPTOR.values
    return MappingProxyType(
        {
            # The generated .pyi types an extension as a plain FieldDescriptor.
            value.name.removeprefix(_PREFIX): value.GetOptions().Extensions[errors_pb2.facts]  # type: ignore[index]
            for value in values
            if value.number != errors_pb2.ERROR_REASON_UNSPECIFIED
        }
    )


_FACTS = _read_facts()


def error_facts() -> Mapping[str, errors_pb2.ErrorFacts]:
    """``reason -> ErrorFacts`` of every ``ErrorReason`` (but UNSPECIFIED), as errors.proto states them."""
    return _FACTS


class RefereeError(Exception):
    """A refused request. ``metadata`` holds string facts for ``ErrorInfo.metadata``."""

    reason: ClassVar[str] = "INTERNAL"
    code: ClassVar[str] = "INTERNAL"
    #: The request field at fault, for the ``BadRequest`` every INVALID_ARGUMENT carries.
    field: ClassVar[str | None] = None

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        if "reason" in cls.__dict__:
            # A reason errors.proto does not know fails here, at import, not at the first refusal.
            facts = _FACTS[cls.reason]
            cls.code = facts.code
            cls.field = facts.bad_request_field or None

    def __init__(
        self,
        message: str,
        *,
        metadata: dict[str, str] | None = None,
        violations: tuple[tuple[str, str], ...] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        self.metadata = dict(metadata or {})
        #: ``(field path, description)`` pairs for ``google.rpc.BadRequest``.
        self.violations = violations or (((self.field, message),) if self.field else ())

    def __str__(self) -> str:
        return f"{self.reason}: {self.message}"


class InvalidArgument(RefereeError):
    """When a request is malformed: unknown enum values, bad cards, ids, names, seeds."""

    reason = "INVALID_ARGUMENT"

    def __init__(self, field: str, description: str, *, metadata: dict[str, str] | None = None) -> None:
        # A whole request at fault has no field (""): its message is the description alone.
        message = f"{field}: {description}" if field else description
        super().__init__(message, metadata=metadata, violations=((field, description),))


class IllegalCombination(RefereeError):
    """When the cards played form no combination of the table's variant."""

    reason = "ILLEGAL_COMBINATION"


class RequestIdReused(RefereeError):
    """When a request id already answered is sent with another method or other fields."""

    reason = "REQUEST_ID_REUSED"


class TableNotFound(RefereeError):
    """When no table has the id (or it has expired)."""

    reason = "TABLE_NOT_FOUND"


class Unauthenticated(RefereeError):
    """When a call needs a token and has none, a malformed one, or one not valid for the table."""

    reason = "UNAUTHENTICATED"


class PermissionDenied(RefereeError):
    """When a valid token is used for something its role may not do (a seat closing the table)."""

    reason = "PERMISSION_DENIED"


class StaleState(RefereeError):
    """When ``expected_version`` is not the table's current version."""

    reason = "STALE_STATE"


class SequenceOutOfRange(RefereeError):
    """When a stream is resumed after a sequence number the table has not reached."""

    reason = "SEQUENCE_OUT_OF_RANGE"


class Unavailable(RefereeError):
    """When the store cannot be reached, or the server is shutting down; retry with the same request id."""

    reason = "UNAVAILABLE"


class ResourceExhausted(RefereeError):
    """A refusal the caller may retry later: ``retry_after_ms`` becomes a ``google.rpc.RetryInfo``."""

    code = "RESOURCE_EXHAUSTED"

    def __init__(self, message: str, *, retry_after_ms: int, metadata: dict[str, str] | None = None) -> None:
        super().__init__(message, metadata=metadata)
        self.retry_after_ms = retry_after_ms


class RateLimited(ResourceExhausted):
    """When a caller sends calls (or creates tables) faster than its rate limit allows."""

    reason = "RATE_LIMITED"


class QuotaExceeded(ResourceExhausted):
    """When a caller holds as many open tables or streams as it may (or the process as many streams)."""

    reason = "QUOTA_EXCEEDED"


class StoreFull(ResourceExhausted):
    """When the table store is (nearly) out of memory: new tables first, then any change."""

    reason = "STORE_FULL"


class Internal(RefereeError):
    """When something unexpected happened; details are logged, never sent."""

    reason = "INTERNAL"


class TableClosed(RefereeError):
    """When a closed table is asked to change."""

    reason = "TABLE_CLOSED"


class TableFull(RefereeError):
    """When JoinTable finds no free seat."""

    reason = "TABLE_FULL"


class SeatTaken(RefereeError):
    """When JoinTable asks for a seat that is occupied or reserved."""

    reason = "SEAT_TAKEN"


class WrongPhase(RefereeError):
    """When a call does not fit the table's phase (a bid during play, Settle before any round ended)."""

    reason = "WRONG_PHASE"


class NotYourTurn(RefereeError):
    """When the caller's seat is not the seat to act."""

    reason = "NOT_YOUR_TURN"


class BidTooLow(RefereeError):
    """When a bid is not higher than the highest bid so far."""

    reason = "BID_TOO_LOW"


class MustLead(RefereeError):
    """When the leader of a trick passes."""

    reason = "MUST_LEAD"


class CardsNotInHand(RefereeError):
    """When a card played is not in the caller's hand, or is listed twice."""

    reason = "CARDS_NOT_IN_HAND"


class DoesNotBeat(RefereeError):
    """When the combination does not beat the last play of the trick."""

    reason = "DOES_NOT_BEAT"


_BY_REFUSAL: dict[Refusal, type[RefereeError]] = {
    Refusal.WRONG_PHASE: WrongPhase,
    Refusal.NOT_YOUR_TURN: NotYourTurn,
    Refusal.BID_TOO_LOW: BidTooLow,
    Refusal.MUST_LEAD: MustLead,
    Refusal.CARDS_NOT_IN_HAND: CardsNotInHand,
    Refusal.ILLEGAL_COMBINATION: IllegalCombination,
    Refusal.DOES_NOT_BEAT: DoesNotBeat,
}


def from_refusal(refusal: IllegalAction, metadata: dict[str, str]) -> RefereeError:
    """The referee error for a rules-core refusal."""
    if refusal.reason is Refusal.INVALID_BID:
        return InvalidArgument("amount", refusal.message, metadata=metadata)
    if refusal.reason is Refusal.INVALID_SEAT:
        return Internal(refusal.message, metadata=metadata)
    return _BY_REFUSAL[refusal.reason](refusal.message, metadata=metadata)
