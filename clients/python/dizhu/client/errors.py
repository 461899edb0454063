"""The SDK's exceptions: every refusal of the referee as a :class:`DizhuError`.

A failed call carries a gRPC status code and, in its ``grpc-status-details-bin`` trailer, a
``google.rpc.Status`` whose details hold a ``google.rpc.ErrorInfo`` (reason, domain
``dizhu.v1``, metadata) and, for INVALID_ARGUMENT, a ``google.rpc.BadRequest`` (see
``docs/api.md`` § Errors). :func:`from_rpc_error` turns one into the subclass named after
its reason, so a bot can write ``except NotYourTurn:`` or test ``err.reason == "STALE_STATE"``.

Hierarchy::

    DizhuError                  any failed call; .code, .reason, .metadata, .field_violations
    ├── RetryableError          nothing was applied for sure: retry with the same request_id
    │   ├── Unavailable         UNAVAILABLE: referee, store or network briefly down
    │   ├── DeadlineExceeded    DEADLINE_EXCEEDED / CANCELLED by the transport
    │   ├── RateLimited         RESOURCE_EXHAUSTED: calls too fast (wait .retry_delay_s)
    │   └── StoreFull           RESOURCE_EXHAUSTED: the referee's store is full for now
    ├── MoveRefused             the move itself is wrong (the bot's fault, not the table's)
    │   ├── IllegalCombination  the cards are no combination of the variant
    │   ├── DoesNotBeat         a combination that does not beat the trick's last play
    │   ├── CardsNotInHand      a card played is not in the hand
    │   ├── MustLead            the trick's leader passed
    │   └── BidTooLow           a bid not above the highest bid
    ├── OutOfTurn               the table moved on: read it again and decide again
    │   ├── StaleState          expected_version is not current (ABORTED)
    │   ├── NotYourTurn         another seat is to act
    │   └── WrongPhase          the call does not fit the phase
    ├── TableNotFound           no such table (or expired)
    ├── TableClosed             a change to a closed table
    ├── TableFull               no free seat to join
    ├── SeatTaken               the seat asked for is not free
    ├── Unauthenticated         token or API key missing, malformed, unknown or revoked
    ├── PermissionDenied        the token does not allow this call
    ├── InvalidArgument         a malformed request (see .field_violations)
    ├── RequestIdReused         the same request_id for a different request
    ├── SequenceOutOfRange      WatchTable's after_sequence is ahead of the table
    ├── QuotaExceeded           RESOURCE_EXHAUSTED: too many open tables or streams
    └── Internal                an unexpected failure on the server (logged there)

The branch of each reason is its category in errors.proto (the ``facts`` option of each
``ErrorReason`` value: RETRYABLE, MOVED_ON, MOVE_REFUSED or REFUSED), read from the stubs'
descriptors: a reason the stubs know but this module names no class for gets a class of its
category made at import, and a class here on another branch than its category fails the import.
A reason the stubs do not know yet (v1 may add some) gives the class of its status code
(``Unavailable`` for UNAVAILABLE, ...; else a plain :class:`DizhuError`) and keeps its
``reason`` string, as the contract asks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import ClassVar

import grpc
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from dizhu.v1 import errors_pb2

__all__ = [
    "DOMAIN",
    "BidTooLow",
    "CardsNotInHand",
    "DeadlineExceeded",
    "DizhuError",
    "DoesNotBeat",
    "IllegalCombination",
    "Internal",
    "InvalidArgument",
    "MoveRefused",
    "MustLead",
    "NotYourTurn",
    "OutOfTurn",
    "PermissionDenied",
    "QuotaExceeded",
    "RateLimited",
    "RequestIdReused",
    "RetryableError",
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
    "error_class",
    "error_facts",
    "from_rpc_error",
]

#: The ErrorInfo domain of every dizhu.v1 error.
DOMAIN = "dizhu.v1"


class DizhuError(Exception):
    """A call the referee refused or that could not be made.

    ``reason`` is the ErrorInfo reason (``"NOT_YOUR_TURN"``, ...) or, when the error
    carries none (a transport failure such as a refused connection), the status code's
    name (``"UNAVAILABLE"``). ``metadata`` holds the ErrorInfo's string facts
    (``table_id``, ``turn_seat``, ``current_version``, ...); ``field_violations`` the
    BadRequest's ``(field path, description)`` pairs.
    """

    #: The reason a subclass stands for (empty on the base class).
    REASON: ClassVar[str] = ""

    def __init__(
        self,
        message: str,
        *,
        code: grpc.StatusCode = grpc.StatusCode.UNKNOWN,
        reason: str = "",
        metadata: Mapping[str, str] | None = None,
        field_violations: Sequence[tuple[str, str]] = (),
        retry_delay_s: float = 0.0,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.reason = reason or self.REASON or code.name
        self.metadata: dict[str, str] = dict(metadata or {})
        self.field_violations: list[tuple[str, str]] = list(field_violations)
        #: How long the referee asks the caller to wait before retrying (its RetryInfo); 0 if it did not say.
        self.retry_delay_s = retry_delay_s

    @property
    def table_id(self) -> str | None:
        """The table concerned, when the server named one."""
        return self.metadata.get("table_id")

    @property
    def retryable(self) -> bool:
        """Whether retrying the same request (same request_id) may succeed."""
        return isinstance(self, RetryableError)

    def __str__(self) -> str:
        facts = "".join(f" {key}={value}" for key, value in sorted(self.metadata.items()) if key != "table_id")
        # A violation the message already states (the referee often says it in both) is said once.
        violations = "".join(
            f"; {field}: {text}"
            for field, text in self.field_violations
            if self.message not in (text, f"{field}: {text}")
        )
        code = "" if self.code.name == self.reason else f" ({self.code.name})"
        return f"{self.reason}{code}: {self.message}{facts}{violations}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, reason={self.reason!r}, code={self.code.name})"


class RetryableError(DizhuError):
    """The call may not have reached the referee: retry it with the same request_id."""


class Unavailable(RetryableError):
    """UNAVAILABLE: the referee, its store or the network is briefly unavailable."""

    REASON = "UNAVAILABLE"


class DeadlineExceeded(RetryableError):
    """DEADLINE_EXCEEDED (or a transport CANCELLED): no answer in time; the call may have applied."""

    REASON = "DEADLINE_EXCEEDED"


class RateLimited(RetryableError):
    """RATE_LIMITED: the caller sends calls faster than its limit; wait ``retry_delay_s``."""

    REASON = "RATE_LIMITED"


class StoreFull(RetryableError):
    """STORE_FULL: the referee's store has no room for now; nothing was applied."""

    REASON = "STORE_FULL"


class QuotaExceeded(DizhuError):
    """QUOTA_EXCEEDED: the caller holds as many open tables or streams as it may (``limit``, ``max``)."""

    REASON = "QUOTA_EXCEEDED"


class MoveRefused(DizhuError):
    """The move breaks a rule of play: the caller's mistake, not a change of the table."""


class IllegalCombination(MoveRefused):
    """The cards are no combination of the variant (metadata ``classify_reason``)."""

    REASON = "ILLEGAL_COMBINATION"


class DoesNotBeat(MoveRefused):
    """The combination does not beat the trick's last play (``to_beat_kind``, ``to_beat_size``, ...)."""

    REASON = "DOES_NOT_BEAT"


class CardsNotInHand(MoveRefused):
    """A card played is not in the hand (``missing_card_ids``)."""

    REASON = "CARDS_NOT_IN_HAND"


class MustLead(MoveRefused):
    """The trick's leader passed; the leader must play."""

    REASON = "MUST_LEAD"


class BidTooLow(MoveRefused):
    """A bid not above the highest bid so far (``highest_bid``)."""

    REASON = "BID_TOO_LOW"


class OutOfTurn(DizhuError):
    """The table is not where the caller thought it was: read it again and decide again."""


class StaleState(OutOfTurn):
    """ABORTED: expected_version is not the table's current version (``current_version``)."""

    REASON = "STALE_STATE"


class NotYourTurn(OutOfTurn):
    """Another seat is to act (``turn_seat``)."""

    REASON = "NOT_YOUR_TURN"


class WrongPhase(OutOfTurn):
    """The call does not fit the table's phase (``phase``)."""

    REASON = "WRONG_PHASE"


class TableNotFound(DizhuError):
    """No table has this id, or it expired."""

    REASON = "TABLE_NOT_FOUND"


class TableClosed(DizhuError):
    """The table is closed: it can be read, not changed."""

    REASON = "TABLE_CLOSED"


class TableFull(DizhuError):
    """JoinTable found no free seat."""

    REASON = "TABLE_FULL"


class SeatTaken(DizhuError):
    """JoinTable asked for a seat that is not free (``seat``)."""

    REASON = "SEAT_TAKEN"


class Unauthenticated(DizhuError):
    """The token or API key is missing, malformed, unknown or revoked."""

    REASON = "UNAUTHENTICATED"


class PermissionDenied(DizhuError):
    """The token is valid for the table but does not allow this call."""

    REASON = "PERMISSION_DENIED"


class InvalidArgument(DizhuError):
    """A malformed request; ``field_violations`` names the fields."""

    REASON = "INVALID_ARGUMENT"


class RequestIdReused(DizhuError):
    """The same request_id was used for a different request."""

    REASON = "REQUEST_ID_REUSED"


class SequenceOutOfRange(DizhuError):
    """WatchTable's after_sequence is beyond the table's latest event (``latest_sequence``)."""

    REASON = "SEQUENCE_OUT_OF_RANGE"


class Internal(DizhuError):
    """An unexpected failure on the server; it logged the details under ``request_id``."""

    REASON = "INTERNAL"


def _all_subclasses(cls: type[DizhuError]) -> list[type[DizhuError]]:
    found: list[type[DizhuError]] = []
    for sub in cls.__subclasses__():
        found += [sub, *_all_subclasses(sub)]
    return found


def _read_facts() -> Mapping[str, errors_pb2.ErrorFacts]:
    return MappingProxyType(
        {
            # The generated .pyi types an extension as a plain FieldDescriptor.
            value.name.removeprefix("ERROR_REASON_"): value.GetOptions().Extensions[errors_pb2.facts]  # type: ignore[index]
            for value in errors_pb2.ErrorReason.DESCRIPTOR.values
            if value.number != errors_pb2.ERROR_REASON_UNSPECIFIED
        }
    )


_FACTS = _read_facts()


def error_facts() -> Mapping[str, errors_pb2.ErrorFacts]:
    """``reason -> ErrorFacts`` (status code, category, metadata keys, ...) as errors.proto states them."""
    return _FACTS


#: The branch of the hierarchy of each category.
_CATEGORY_BASE: dict[int, type[DizhuError]] = {
    errors_pb2.ERROR_CATEGORY_RETRYABLE: RetryableError,
    errors_pb2.ERROR_CATEGORY_MOVED_ON: OutOfTurn,
    errors_pb2.ERROR_CATEGORY_MOVE_REFUSED: MoveRefused,
    errors_pb2.ERROR_CATEGORY_REFUSED: DizhuError,
}
_BRANCHES = (RetryableError, OutOfTurn, MoveRefused)


def _class_for(reason: str, facts: errors_pb2.ErrorFacts, named: type[DizhuError] | None) -> type[DizhuError]:
    base = _CATEGORY_BASE[facts.category]
    if named is None:
        name = "".join(word.title() for word in reason.split("_"))
        return type(name, (base,), {"REASON": reason, "__doc__": f"{facts.code}: {facts.summary}."})
    other = [branch for branch in _BRANCHES if branch is not base and issubclass(named, branch)]
    if not issubclass(named, base) or other:
        raise TypeError(f"{named.__name__} is not on the branch of {reason}'s category in errors.proto")
    return named


def _by_reason() -> dict[str, type[DizhuError]]:
    named = {cls.REASON: cls for cls in _all_subclasses(DizhuError) if cls.REASON}
    return named | {reason: _class_for(reason, facts, named.get(reason)) for reason, facts in _FACTS.items()}


_BY_REASON = _by_reason()


def error_class(reason: str) -> type[DizhuError] | None:
    """The class of ``reason`` (every reason of errors.proto has one), or None for a reason unknown here."""
    return _BY_REASON.get(reason)


# Transport failures without ErrorInfo: classified by code alone.
_BY_CODE: dict[grpc.StatusCode, type[DizhuError]] = {
    grpc.StatusCode.UNAVAILABLE: Unavailable,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceeded,
    grpc.StatusCode.CANCELLED: DeadlineExceeded,
    grpc.StatusCode.INTERNAL: Internal,
    grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDenied,
    grpc.StatusCode.NOT_FOUND: TableNotFound,
    grpc.StatusCode.ABORTED: StaleState,
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
}


def _status_of(error: grpc.RpcError) -> status_pb2.Status | None:
    """The rich status in the error's trailers, or None (absent, or inconsistent with the call)."""
    try:
        return rpc_status.from_call(error)  # type: ignore[arg-type]
    except (ValueError, AttributeError):
        return None


def from_rpc_error(error: grpc.RpcError) -> DizhuError:
    """The :class:`DizhuError` subclass for a failed call (``grpc.aio.AioRpcError`` or a sync ``grpc.Call``).

    The class is chosen by the ErrorInfo reason when there is one (domain ``dizhu.v1``),
    else by the status code; the original error is kept as ``__cause__`` by callers that
    ``raise from_rpc_error(e) from e``.
    """
    code_of = getattr(error, "code", None)
    code: grpc.StatusCode = code_of() if callable(code_of) else grpc.StatusCode.UNKNOWN
    details_of = getattr(error, "details", None)
    message: str = (details_of() if callable(details_of) else None) or str(error)
    reason = ""
    metadata: dict[str, str] = {}
    violations: list[tuple[str, str]] = []
    retry_delay_s = 0.0
    status = _status_of(error)
    for detail in status.details if status is not None else ():
        info = error_details_pb2.ErrorInfo()
        bad_request = error_details_pb2.BadRequest()
        retry_info = error_details_pb2.RetryInfo()
        if detail.Is(retry_info.DESCRIPTOR) and detail.Unpack(retry_info):
            retry_delay_s = retry_info.retry_delay.ToMilliseconds() / 1000
            continue
        if detail.Is(info.DESCRIPTOR) and detail.Unpack(info):
            if info.domain in ("", DOMAIN):
                reason = info.reason
                metadata.update(info.metadata)
        elif detail.Is(bad_request.DESCRIPTOR) and detail.Unpack(bad_request):
            violations += [(v.field, v.description) for v in bad_request.field_violations]
    # An unknown reason is judged by its code alone (the contract's advice) but keeps its name.
    cls = _BY_REASON.get(reason) or _BY_CODE.get(code, DizhuError)
    return cls(
        message,
        code=code,
        reason=reason or code.name,
        metadata=metadata,
        field_violations=violations,
        retry_delay_s=retry_delay_s,
    )
