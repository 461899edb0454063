"""Run the kit's protocol cases against a live referee of ``dizhu.v1`` (docs/conformance.md).

A case is a list of steps; each step makes one call (``"TableService.Bid"``) with a request
written as proto3 JSON with the ``.proto`` field names, and states what must come back: the
status code, and for an error the ``google.rpc.ErrorInfo`` reason, domain and metadata keys
and the ``BadRequest`` fields; for an answer, checks on fields by path. Values saved from an
answer (``"save": {"table": "table_id"}``) are used by later steps as ``"$table"`` (the whole
value) or ``"${table}"`` (inside a string); ``"$fresh:NAME"`` is an id made up for this run of
the case, the same one wherever the case names it again (a retry). Once a case is over, every
table it created is closed with its creator token, so that a run leaves no open table behind
(a lobby or ``dizhu table list`` of the referee checked shows none of them).

The runner knows nothing of the referee but its address: any implementation of ``dizhu.v1``
can be held to the cases, and client libraries can replay them (``clients/node/conformance.mjs``
is the same runner in JavaScript).
"""

from __future__ import annotations

import contextlib
import re
import uuid
from collections.abc import Mapping
from typing import Any

import grpc
from google.protobuf import descriptor_pool, json_format, message_factory
from google.protobuf.message import Message
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from dizhu.client.cards import card_id
from dizhu.client.connection import STARTING_REFEREE_OPTIONS
from dizhu.conformance.kit import Kit, KitError, Report
from dizhu.v1 import cards_pb2, rules_service_pb2, table_service_pb2

__all__ = ["Unreachable", "check_answer", "resolve", "run_protocol"]

_PACKAGE = "dizhu.v1"
_DEFAULTS: tuple[Any, ...] = (0, "", False, "0", [], {})
_INTERPOLATED = re.compile(r"\$\{([A-Za-z0-9_:.-]+)\}")
#: Imported for their side effect: both services and their messages are in the default descriptor pool.
_CONTRACT = (table_service_pb2, rules_service_pb2)


class CaseFailure(Exception):
    """A step's answer differed from the case's expectation; the message says how."""


def resolve(value: Any, saved: dict[str, Any]) -> Any:
    """``value`` with ``$name``, ``${name}`` and ``$fresh:name`` replaced (see the module's docstring)."""
    if isinstance(value, dict):
        return {key: resolve(item, saved) for key, item in value.items()}
    if isinstance(value, list):
        return [resolve(item, saved) for item in value]
    if not isinstance(value, str):
        return value
    if value.startswith("$fresh:"):
        return saved.setdefault(value, uuid.uuid4().hex)
    if value.startswith("$") and not value.startswith("${"):
        if value[1:] not in saved:
            raise CaseFailure(f"{value} was never saved by an earlier step")
        return saved[value[1:]]
    return _INTERPOLATED.sub(lambda found: str(resolve("$" + found.group(1), saved)), value)


def lookup(data: Any, path: str) -> Any:
    """The value at ``path`` (``table.seats[1].player_name``; ``messages[0]...`` in a stream), or None."""
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        if part.startswith("["):
            index = int(part[1:-1])
            data = data[index] if isinstance(data, list) and index < len(data) else None
        else:
            data = data.get(part) if isinstance(data, dict) else None
        if data is None:
            return None
    return data


def _same(actual: Any, expected: Any) -> bool:
    if actual is None:
        return (expected in _DEFAULTS and not isinstance(expected, bool)) or expected is False or expected is None
    if isinstance(expected, int) and not isinstance(expected, bool) and isinstance(actual, str) and actual.isdigit():
        return int(actual) == expected  # 64-bit integers are strings in proto3 JSON
    return bool(actual == expected)


def _card_id(card: Mapping[str, Any]) -> int:
    """The contract's card id (docs/api.md, "Card id") of a card in proto3 JSON: the SDK's ``card_id``."""
    return card_id(json_format.ParseDict(dict(card), cards_pb2.Card()))


def check_answer(answer: Any, checks: list[Mapping[str, Any]], saved: dict[str, Any]) -> None:
    """Raise ``CaseFailure`` unless ``answer`` passes every check."""
    for check in checks:
        path = check["path"]
        actual = lookup(answer, path)
        if "equals" in check and not _same(actual, resolve(check["equals"], saved)):
            raise CaseFailure(f"{path}: expected {resolve(check['equals'], saved)!r}, got {actual!r}")
        if "not_equals" in check and _same(actual, resolve(check["not_equals"], saved)):
            raise CaseFailure(f"{path}: expected anything but {actual!r}")
        if "length" in check and len(actual or []) != check["length"]:
            raise CaseFailure(f"{path}: expected {check['length']} items, got {len(actual or [])}")
        if "present" in check and (actual not in (None, [], {})) != check["present"]:
            raise CaseFailure(f"{path}: expected {'a value' if check['present'] else 'nothing'}, got {actual!r}")
        if "card_ids" in check and sorted(map(_card_id, actual or [])) != sorted(check["card_ids"]):
            raise CaseFailure(f"{path}: expected the cards {sorted(check['card_ids'])}")


def _error_facts(error: grpc.RpcError) -> dict[str, Any]:
    """Status code name, ErrorInfo (reason, domain, metadata) and BadRequest fields of a failed call."""
    call: Any = error
    facts: dict[str, Any] = {"code": call.code().name, "reason": None, "domain": None, "metadata": {}, "fields": []}
    status = rpc_status.from_call(call)
    for detail in status.details if status is not None else ():
        info, violations = error_details_pb2.ErrorInfo(), error_details_pb2.BadRequest()
        if detail.Unpack(info):
            facts.update(reason=info.reason, domain=info.domain, metadata=dict(info.metadata))
        elif detail.Unpack(violations):
            facts["fields"] = [violation.field for violation in violations.field_violations]
    return facts


def _check_error(facts: Mapping[str, Any], expect: Mapping[str, Any], saved: dict[str, Any]) -> None:
    if "reason" in expect and (facts["reason"], facts["domain"]) != (expect["reason"], _PACKAGE):
        raise CaseFailure(f"expected reason {expect['reason']}, got {facts['reason']} (domain {facts['domain']})")
    missing = [key for key in expect.get("metadata_keys", []) if key not in facts["metadata"]]
    if missing:
        raise CaseFailure(f"ErrorInfo metadata lacks {missing}: {facts['metadata']}")
    for key, value in resolve(expect.get("metadata", {}), saved).items():
        if facts["metadata"].get(key) != str(value):
            raise CaseFailure(f"metadata {key}: expected {value!r}, got {facts['metadata'].get(key)!r}")
    for field in expect.get("field_violations", []):
        if field not in facts["fields"]:
            raise CaseFailure(f"BadRequest names {facts['fields']}, not {field!r}")


class _Caller:
    """Calls any method of dizhu.v1 by name, requests and answers as proto3 JSON."""

    def __init__(self, channel: grpc.Channel, timeout_s: float) -> None:
        self._channel = channel
        self._timeout_s = timeout_s
        self._pool = descriptor_pool.Default()
        #: (table id, creator token) of every table created since the last ``close_created``.
        self._created: list[tuple[str, str]] = []

    def _method(self, name: str) -> tuple[str, Any, Any, bool]:
        service, _, method = name.partition(".")
        found = self._pool.FindServiceByName(f"{_PACKAGE}.{service}").FindMethodByName(method)
        request = message_factory.GetMessageClass(found.input_type)
        response = message_factory.GetMessageClass(found.output_type)
        return f"/{_PACKAGE}.{service}/{method}", request, response, found.server_streaming

    def call(self, name: str, request: Mapping[str, Any], metadata: tuple[tuple[str, str], ...], take: int) -> Any:
        path, request_type, response_type, streaming = self._method(name)
        message = json_format.ParseDict(dict(request), request_type())
        serialize, deserialize = request_type.SerializeToString, response_type.FromString
        if not streaming:
            call = self._channel.unary_unary(path, request_serializer=serialize, response_deserializer=deserialize)
            answer = call(message, metadata=metadata, timeout=self._timeout_s)
            if isinstance(answer, table_service_pb2.CreateTableResponse):
                self._created.append((answer.table_id, answer.creator_token))
            return _as_json(answer)
        stream = self._channel.unary_stream(path, request_serializer=serialize, response_deserializer=deserialize)
        answers = stream(message, metadata=metadata, timeout=self._timeout_s)
        messages = []
        try:
            for answer in answers:
                messages.append(_as_json(answer))
                if len(messages) == take:
                    break
        finally:
            answers.cancel()
        return {"messages": messages}

    def close_created(self) -> None:
        """Close the tables created since the last call; one already closed (or that cannot be) is left as it is."""
        close = self._channel.unary_unary(
            f"/{_PACKAGE}.TableService/CloseTable",
            request_serializer=table_service_pb2.CloseTableRequest.SerializeToString,
            response_deserializer=table_service_pb2.CloseTableResponse.FromString,
        )
        for table_id, creator_token in self._created:
            request = table_service_pb2.CloseTableRequest(table_id=table_id, request_id=uuid.uuid4().hex)
            with contextlib.suppress(grpc.RpcError):
                close(request, metadata=(("authorization", f"Bearer {creator_token}"),), timeout=self._timeout_s)
        self._created.clear()


def _as_json(message: Message) -> Any:
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


def _metadata(step: Mapping[str, Any], saved: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    pairs = [(key, str(resolve(value, saved))) for key, value in step.get("metadata", [])]
    if step.get("token") is not None:
        pairs.append(("authorization", f"Bearer {resolve(step['token'], saved)}"))
    return tuple(pairs)


def _run_step(caller: _Caller, step: Mapping[str, Any], saved: dict[str, Any]) -> None:
    """Make a step's call; ``CaseFailure`` unless it answers as the step expects."""
    expect = step.get("expect", {})
    try:
        request = resolve(step.get("request", {}), saved)
        answer = caller.call(step["call"], request, _metadata(step, saved), step.get("take", 1))
    except grpc.RpcError as error:
        facts = _error_facts(error)
        if expect.get("code", "OK") != facts["code"]:
            raise CaseFailure(f"expected {expect.get('code', 'OK')}, got {facts['code']} {facts}") from None
        _check_error(facts, expect, saved)
        return
    except json_format.ParseError as error:
        raise CaseFailure(f"no request of {step['call']}: {error}") from None
    if expect.get("code", "OK") != "OK":
        raise CaseFailure(f"expected {expect['code']}, got OK")
    check_answer(answer, expect.get("checks", []), saved)
    for name, path in step.get("save", {}).items():
        value = lookup(answer, path)
        if value is None:
            raise CaseFailure(f"nothing at {path} to save as {name}")
        saved[name] = value


def run_case(caller: _Caller, case: Mapping[str, Any]) -> None:
    """Run a case's steps in order; ``CaseFailure`` at the first that does not answer as expected.

    A step with ``repeat: N`` is made up to N times, until it answers as expected (a limit
    that a burst of calls must reach).
    """
    saved: dict[str, Any] = {}
    for number, step in enumerate(case["steps"], 1):
        for attempt in range(step.get("repeat", 1)):
            try:
                _run_step(caller, step, saved)
                break
            except CaseFailure as failure:
                if attempt + 1 == step.get("repeat", 1):
                    raise CaseFailure(f"step {number} ({step['call']}): {failure}") from None


def run_protocol(
    kit: Kit,
    target: str,
    *,
    implementation: str = "dizhu",
    credentials: grpc.ChannelCredentials | None = None,
    timeout_s: float = 10.0,
    only: str | None = None,
    profile: str = "default",
) -> Report:
    """Every protocol case of ``profile`` (or those whose id starts with ``only``) against the referee at ``target``.

    A profile is how the referee was started: the cases file lists each profile's ``dizhu serve``
    flags (``default``: none; ``rate`` and ``quota``: limits switched on, low).
    """
    report = Report("protocol", implementation, kit.version)
    known = kit.known_failing(implementation)
    document = kit.load("protocol/cases.json")
    profiles = sorted(document.get("profiles", {"default": []}))
    if profile not in profiles:
        raise KitError(f"no profile {profile!r}: {', '.join(profiles)}")
    cases = [
        case
        for case in document["cases"]
        if case.get("profile", "default") == profile and (only is None or case["id"].startswith(only))
    ]
    if not cases:
        starting = f" has an id starting with {only!r}" if only is not None else ""
        raise KitError(f"no case of profile {profile}{starting}")
    # The kit may be run at a referee just started.
    channel = (
        grpc.insecure_channel(target, options=STARTING_REFEREE_OPTIONS)
        if credentials is None
        else grpc.secure_channel(target, credentials, options=STARTING_REFEREE_OPTIONS)
    )
    with channel:
        try:
            grpc.channel_ready_future(channel).result(timeout=timeout_s)
        except grpc.FutureTimeoutError:
            raise Unreachable(f"no referee answers at {target} (waited {timeout_s:g} s)") from None
        caller = _Caller(channel, timeout_s)
        for case in cases:
            try:
                run_case(caller, case)
                failure = None
            except CaseFailure as why:
                failure = str(why)
            finally:
                caller.close_created()
            report.add(case["id"], case["area"], failure, known)
    return report


class Unreachable(Exception):
    """Nothing answers at the target: no case can be run."""
