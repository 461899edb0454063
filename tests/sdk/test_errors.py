"""Error conversion (dizhu.client.errors): gRPC status + google.rpc details -> DizhuError subclasses."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from dizhu.client import errors
from dizhu.client.connection import SERVICE_CONFIG, RetryPolicy
from dizhu.v1 import errors_pb2, rules_service_pb2, table_service_pb2


def _rpc_error(
    code: grpc.StatusCode,
    message: str,
    *,
    reason: str | None = None,
    metadata: dict[str, str] | None = None,
    violations: list[tuple[str, str]] | None = None,
    domain: str = "dizhu.v1",
) -> grpc.aio.AioRpcError:
    """An AioRpcError as the referee sends it: the rich status in the trailers."""
    details = []
    if reason is not None:
        packed = any_pb2.Any()
        packed.Pack(error_details_pb2.ErrorInfo(reason=reason, domain=domain, metadata=metadata or {}))
        details.append(packed)
    if violations:
        packed = any_pb2.Any()
        packed.Pack(
            error_details_pb2.BadRequest(
                field_violations=[
                    error_details_pb2.BadRequest.FieldViolation(field=f, description=d) for f, d in violations
                ]
            )
        )
        details.append(packed)
    trailing = grpc.aio.Metadata()
    if details:
        status = rpc_status.to_status(
            status_pb2.Status(code=code_pb2.Code.Value(code.name), message=message, details=details)
        )
        trailing = grpc.aio.Metadata(*status.trailing_metadata)
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), trailing, details=message)


class TestFromRpcError:
    def test_not_your_turn_with_its_metadata(self) -> None:
        error = errors.from_rpc_error(
            _rpc_error(
                grpc.StatusCode.FAILED_PRECONDITION,
                "seat 2 is to act",
                reason="NOT_YOUR_TURN",
                metadata={"table_id": "t1", "turn_seat": "2"},
            )
        )
        assert isinstance(error, errors.NotYourTurn)
        assert isinstance(error, errors.OutOfTurn)
        assert error.reason == "NOT_YOUR_TURN"
        assert error.code is grpc.StatusCode.FAILED_PRECONDITION
        assert error.metadata == {"table_id": "t1", "turn_seat": "2"}
        assert error.table_id == "t1"
        assert error.message == "seat 2 is to act"
        assert not error.retryable
        assert "turn_seat=2" in str(error)

    def test_stale_state_is_catchable_by_reason(self) -> None:
        error = errors.from_rpc_error(
            _rpc_error(grpc.StatusCode.ABORTED, "stale", reason="STALE_STATE", metadata={"current_version": "9"})
        )
        assert isinstance(error, errors.StaleState)
        assert error.reason == "STALE_STATE"
        assert error.metadata["current_version"] == "9"

    def test_invalid_argument_keeps_the_field_violations(self) -> None:
        error = errors.from_rpc_error(
            _rpc_error(
                grpc.StatusCode.INVALID_ARGUMENT,
                "bad card",
                reason="INVALID_ARGUMENT",
                violations=[("cards[2].suit", "a joker has SUIT_JOKER")],
            )
        )
        assert isinstance(error, errors.InvalidArgument)
        assert error.field_violations == [("cards[2].suit", "a joker has SUIT_JOKER")]

    @pytest.mark.parametrize(
        ("reason", "cls"),
        [
            ("DOES_NOT_BEAT", errors.DoesNotBeat),
            ("CARDS_NOT_IN_HAND", errors.CardsNotInHand),
            ("ILLEGAL_COMBINATION", errors.IllegalCombination),
            ("MUST_LEAD", errors.MustLead),
            ("BID_TOO_LOW", errors.BidTooLow),
        ],
    )
    def test_move_refusals(self, reason: str, cls: type[errors.DizhuError]) -> None:
        error = errors.from_rpc_error(_rpc_error(grpc.StatusCode.FAILED_PRECONDITION, "no", reason=reason))
        assert type(error) is cls
        assert isinstance(error, errors.MoveRefused)

    def test_a_transport_failure_without_details_is_judged_by_its_code(self) -> None:
        error = errors.from_rpc_error(_rpc_error(grpc.StatusCode.UNAVAILABLE, "connection refused"))
        assert isinstance(error, errors.Unavailable)
        assert error.reason == "UNAVAILABLE"
        assert error.retryable

    def test_deadline_exceeded_is_retryable(self) -> None:
        error = errors.from_rpc_error(_rpc_error(grpc.StatusCode.DEADLINE_EXCEEDED, "deadline"))
        assert isinstance(error, errors.DeadlineExceeded)
        assert error.retryable

    def test_an_unknown_reason_keeps_its_name_and_gets_its_codes_class(self) -> None:
        error = errors.from_rpc_error(_rpc_error(grpc.StatusCode.UNAVAILABLE, "later", reason="SOMETHING_NEW"))
        assert isinstance(error, errors.Unavailable)
        assert error.reason == "SOMETHING_NEW"
        other = errors.from_rpc_error(_rpc_error(grpc.StatusCode.FAILED_PRECONDITION, "?", reason="SOMETHING_NEW"))
        assert type(other) is errors.DizhuError
        assert other.reason == "SOMETHING_NEW"

    def test_error_info_of_another_domain_is_ignored(self) -> None:
        error = errors.from_rpc_error(
            _rpc_error(grpc.StatusCode.NOT_FOUND, "gone", reason="NOT_YOURS", domain="example.com")
        )
        assert isinstance(error, errors.TableNotFound)
        assert error.reason == "NOT_FOUND"


_BRANCH_OF_CATEGORY = {
    "ERROR_CATEGORY_RETRYABLE": errors.RetryableError,
    "ERROR_CATEGORY_MOVED_ON": errors.OutOfTurn,
    "ERROR_CATEGORY_MOVE_REFUSED": errors.MoveRefused,
}


def _reasons_of_errors_proto() -> dict[str, str]:
    """``reason -> category name`` read from the descriptors (errors.proto's ``facts`` option)."""
    return {
        value.name.removeprefix("ERROR_REASON_"): errors_pb2.ErrorCategory.Name(
            value.GetOptions().Extensions[errors_pb2.facts].category
        )
        for value in errors_pb2.ErrorReason.DESCRIPTOR.values
        if value.number
    }


class TestTheMapIsTheContracts:
    @pytest.mark.parametrize("reason", sorted(_reasons_of_errors_proto()))
    def test_every_reason_has_a_class_on_the_branch_of_its_category(self, reason: str) -> None:
        category = _reasons_of_errors_proto()[reason]
        cls = errors.error_class(reason)
        assert cls is not None
        assert reason == cls.REASON
        branch = _BRANCH_OF_CATEGORY.get(category)
        if branch is None:
            assert category == "ERROR_CATEGORY_REFUSED"
            assert not issubclass(cls, tuple(_BRANCH_OF_CATEGORY.values())), cls.__mro__
        else:
            assert issubclass(cls, branch), cls.__mro__
        error = errors.from_rpc_error(_rpc_error(grpc.StatusCode.UNKNOWN, "x", reason=reason))
        assert type(error) is cls
        assert error.retryable == (category == "ERROR_CATEGORY_RETRYABLE")

    def test_the_categories_are_the_known_ones(self) -> None:
        """Not vacuous: the descriptors carry the facts (an option left out reads as UNSPECIFIED)."""
        categories = _reasons_of_errors_proto()
        assert categories["STALE_STATE"] == "ERROR_CATEGORY_MOVED_ON"
        assert categories["MUST_LEAD"] == "ERROR_CATEGORY_MOVE_REFUSED"
        assert categories["STORE_FULL"] == "ERROR_CATEGORY_RETRYABLE"
        assert categories["QUOTA_EXCEEDED"] == "ERROR_CATEGORY_REFUSED"
        assert "ERROR_CATEGORY_UNSPECIFIED" not in categories.values()


class TestOneRetryPolicy:
    def test_the_sdk_retries_by_the_service_config(self) -> None:
        retry = SERVICE_CONFIG["methodConfig"][0]["retryPolicy"]
        policy = RetryPolicy()
        assert policy.attempts == retry["maxAttempts"]
        assert f"{policy.initial_delay_s}s" == retry["initialBackoff"]
        assert policy.max_delay_s == float(retry["maxBackoff"].removesuffix("s"))
        assert policy.multiplier == retry["backoffMultiplier"]
        assert f"{policy.timeout_s:g}s" == SERVICE_CONFIG["methodConfig"][0]["timeout"]

    @pytest.mark.parametrize("code", list(grpc.StatusCode), ids=lambda code: code.name)
    def test_a_code_without_details_is_retried_when_the_service_config_says_so(self, code: grpc.StatusCode) -> None:
        listed = SERVICE_CONFIG["methodConfig"][0]["retryPolicy"]["retryableStatusCodes"]
        assert errors.from_rpc_error(_rpc_error(code, "x")).retryable == (code.name in listed)

    def test_docs_api_md_shows_the_service_config_as_it_is(self) -> None:
        section = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text().split("### Retries", 1)[1]
        shown = section.split("```json", 1)[1].split("```", 1)[0]
        assert json.loads(shown) == SERVICE_CONFIG

    def test_the_service_config_names_the_services_of_the_contract(self) -> None:
        named = {name["service"] for name in SERVICE_CONFIG["methodConfig"][0]["name"]}
        assert named == {
            service.full_name
            for service in (
                *table_service_pb2.DESCRIPTOR.services_by_name.values(),
                *rules_service_pb2.DESCRIPTOR.services_by_name.values(),
            )
        }
