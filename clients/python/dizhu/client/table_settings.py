"""A table's settings from :meth:`~dizhu.client.TableClient.create_table`'s keywords: the
variant, the turn clock's durations and its timeout policy."""

from __future__ import annotations

import datetime
from typing import Final, cast

from google.protobuf import duration_pb2

from dizhu.v1 import cards_pb2, table_pb2

__all__ = ["TIMEOUT_POLICIES", "Seconds", "clock_settings", "duration", "variant_of"]

_THREE: Final = cards_pb2.VARIANT_THREE_PLAYER
_FOUR: Final = cards_pb2.VARIANT_FOUR_PLAYER

#: A duration in seconds, or as a ``timedelta``.
Seconds = float | datetime.timedelta
#: The timeout policies by the names ``create_table`` takes, from the contract's enum
#: (``TIMEOUT_POLICY_FORFEIT``: ``"forfeit"``).
TIMEOUT_POLICIES: Final = {
    name.removeprefix("TIMEOUT_POLICY_").lower(): cast(table_pb2.TimeoutPolicy, number)
    for name, number in table_pb2.TimeoutPolicy.items()
    if number != table_pb2.TIMEOUT_POLICY_UNSPECIFIED
}


def duration(value: Seconds) -> duration_pb2.Duration:
    duration = duration_pb2.Duration()
    duration.FromTimedelta(value if isinstance(value, datetime.timedelta) else datetime.timedelta(seconds=value))
    return duration


def clock_settings(
    decision_time: Seconds,
    first_decision_time: Seconds | None,
    time_bank: Seconds | None,
    timeout_policy: str | table_pb2.TimeoutPolicy,
) -> table_pb2.ClockSettings:
    """The clock settings of :meth:`TableClient.create_table`'s keywords."""
    policy = TIMEOUT_POLICIES.get(timeout_policy, timeout_policy) if isinstance(timeout_policy, str) else timeout_policy
    if isinstance(policy, str):
        raise ValueError(f"unknown timeout policy {timeout_policy!r}: use {' or '.join(map(repr, TIMEOUT_POLICIES))}")
    clock = table_pb2.ClockSettings(decision_time=duration(decision_time), timeout_policy=policy)
    if first_decision_time is not None:
        clock.first_decision_time.CopyFrom(duration(first_decision_time))
    if time_bank is not None:
        clock.time_bank.CopyFrom(duration(time_bank))
    return clock


def variant_of(variant: int | str) -> cards_pb2.Variant:
    if variant in ("3p", 3, _THREE):
        return _THREE
    if variant in ("4p", 4, _FOUR):
        return _FOUR
    raise ValueError(f"unknown variant {variant!r}: use '3p' or '4p'")
