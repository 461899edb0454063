"""Table settings: validated on the way in (every field named in a refusal), shown on the way out."""

from __future__ import annotations

import datetime
from typing import Final, cast

from google.protobuf import duration_pb2

from dizhu.referee.errors import InvalidArgument
from dizhu.referee.table import (
    ClockSettings,
    NextRound,
    TableSettings,
    TimeoutPolicy,
)
from dizhu.rules import (
    HouseRules,
)
from dizhu.service.convert.cards import variant_from_proto, variant_to_proto
from dizhu.v1 import table_pb2

__all__ = [
    "TIMEOUT_POLICIES_TO_PROTO",
    "keep_shown_settings_of",
    "settings_from_proto",
    "settings_to_proto",
    "shown_settings",
]

#: The referee's timeout policies and next-round rules as the contract's, by the name both
#: spell (one the contract lacks fails the import).
TIMEOUT_POLICIES_TO_PROTO: Final = {
    policy: cast(table_pb2.TimeoutPolicy, table_pb2.TimeoutPolicy.Value(f"TIMEOUT_POLICY_{policy.name}"))
    for policy in TimeoutPolicy
}
_TIMEOUT_POLICIES_FROM_PROTO: Final = {
    table_pb2.TIMEOUT_POLICY_UNSPECIFIED: TimeoutPolicy.AUTO_PLAY,
    **{number: policy for policy, number in TIMEOUT_POLICIES_TO_PROTO.items()},
}
_NEXT_ROUNDS_TO_PROTO: Final = {
    rule: cast(table_pb2.NextRound, table_pb2.NextRound.Value(f"NEXT_ROUND_{rule.name}")) for rule in NextRound
}
_NEXT_ROUNDS_FROM_PROTO: Final = {
    table_pb2.NEXT_ROUND_UNSPECIFIED: NextRound.AUTOMATIC,
    **{number: rule for rule, number in _NEXT_ROUNDS_TO_PROTO.items()},
}

_MAX_DURATION_SECONDS = 315_576_000_000
_NANOS_PER_SECOND = 1_000_000_000
_NANOS_PER_MS = 1_000_000


def _clock_ms(duration: duration_pb2.Duration, field: str) -> int:
    """A clock duration in whole milliseconds.

    INVALID_ARGUMENT if it is no valid Duration (out of range, nanos out of range or of
    another sign than seconds), negative, or finer than a millisecond; its bounds are the
    referee's (``dizhu.referee.limits``).
    """
    seconds, nanos = duration.seconds, duration.nanos
    if (
        abs(seconds) > _MAX_DURATION_SECONDS
        or abs(nanos) >= _NANOS_PER_SECOND
        or (seconds > 0 and nanos < 0)
        or (seconds < 0 and nanos > 0)
    ):
        raise InvalidArgument(field, "not a valid google.protobuf.Duration")
    if seconds < 0 or nanos < 0:
        raise InvalidArgument(field, "durations cannot be negative")
    if nanos % _NANOS_PER_MS:
        raise InvalidArgument(field, "clock durations are whole milliseconds")
    return seconds * 1000 + nanos // _NANOS_PER_MS


def settings_from_proto(settings: table_pb2.TableSettings) -> TableSettings:
    variant = variant_from_proto(settings.variant, "settings.variant")
    clock = settings.clock
    decision_ms = _clock_ms(clock.decision_time, "settings.clock.decision_time")
    # Unset or zero: the decision time.
    first_ms = _clock_ms(clock.first_decision_time, "settings.clock.first_decision_time") or decision_ms
    bank_ms = _clock_ms(clock.time_bank, "settings.clock.time_bank")
    policy = _TIMEOUT_POLICIES_FROM_PROTO.get(clock.timeout_policy)
    if policy is None:
        raise InvalidArgument("settings.clock.timeout_policy", "unknown timeout policy")
    next_round = _NEXT_ROUNDS_FROM_PROTO.get(settings.next_round)
    if next_round is None:
        raise InvalidArgument("settings.next_round", "unknown next-round policy")
    return TableSettings(
        variant=variant,
        house_rules=HouseRules(spring=settings.house_rules.spring),
        clock=ClockSettings(decision_ms, first_ms, bank_ms, policy),
        round_limit=settings.round_limit,
        redeal_cap=settings.max_redeals if settings.HasField("max_redeals") else variant.default_redeal_cap,
        next_round=next_round,
        first_dealer=settings.first_dealer if settings.HasField("first_dealer") else None,
    )


def _duration(ms: int) -> datetime.timedelta:
    return datetime.timedelta(milliseconds=ms)


def settings_to_proto(settings: TableSettings) -> table_pb2.TableSettings:
    clock = settings.clock
    message = table_pb2.TableSettings(
        variant=variant_to_proto(settings.variant),
        house_rules=table_pb2.HouseRules(spring=settings.house_rules.spring),
        round_limit=settings.round_limit,
        max_redeals=settings.redeal_cap,
        next_round=_NEXT_ROUNDS_TO_PROTO[settings.next_round],
    )
    if clock.decision_ms:
        message.clock.decision_time.FromTimedelta(_duration(clock.decision_ms))
        message.clock.first_decision_time.FromTimedelta(_duration(clock.first_decision_ms))
        message.clock.time_bank.FromTimedelta(_duration(clock.bank_ms))
        message.clock.timeout_policy = TIMEOUT_POLICIES_TO_PROTO[clock.policy]
    if settings.first_dealer is not None:
        message.first_dealer = settings.first_dealer
    return message


#: Settings as views show them, by the identity of the settings (a table's states share one
#: object; hashing its fields costs about as much as converting them).
_SHOWN_SETTINGS: dict[int, tuple[TableSettings, table_pb2.TableSettings]] = {}
#: How many settings objects are kept before all are forgotten (:func:`keep_shown_settings_of`).
_shown_settings_kept = 1 << 12


def keep_shown_settings_of(tables: int) -> None:
    """Keep the shown settings of at most ``tables`` tables in this process (4,096 unless set)."""
    global _shown_settings_kept  # noqa: PLW0603 -- the process's one bound
    _shown_settings_kept = tables
    _SHOWN_SETTINGS.clear()


def shown_settings(settings: TableSettings) -> table_pb2.TableSettings:
    """A table's settings as every view shows them: built once per settings object (never
    changed after: a view's constructor copies it)."""
    known = _SHOWN_SETTINGS.get(id(settings))
    if known is not None and known[0] is settings:
        return known[1]
    if len(_SHOWN_SETTINGS) >= _shown_settings_kept:
        _SHOWN_SETTINGS.clear()
    message = settings_to_proto(settings)
    _SHOWN_SETTINGS[id(settings)] = (settings, message)
    return message
