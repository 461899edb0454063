"""The bounds of what a table may be created with, so that no table can outgrow its storage or its clock.

Every bound is part of the contract (``proto/dizhu/v1``, docs/security.md) and is checked when a
table is created, before anything is stored: a table that breaks one is refused with
INVALID_ARGUMENT naming the field and the bound. Why each exists:

- preset seeds: every move rewrites the table's state, which holds them;
- clock durations: a deadline must stay a valid timestamp and the clock must not spin (a
  decision time of 100 ms at least, an hour at most, a time bank of an hour at most);
- redeals: every thrown-in deal of a round is kept in the state for the round's replay;
- names: they are in every view and event.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from dizhu.referee.errors import InvalidArgument
from dizhu.referee.table import TableSettings
from dizhu.rules import SEED_SIZE

__all__ = [
    "MAX_BANK_MS",
    "MAX_DECISION_MS",
    "MAX_NAME_LENGTH",
    "MAX_REDEALS",
    "MAX_SEEDS",
    "MIN_DECISION_MS",
    "check_name",
    "check_seeds",
    "check_settings",
]

#: Preset round seeds a table may hold.
MAX_SEEDS: Final = 1024
#: A player name's length, in characters.
MAX_NAME_LENGTH: Final = 32
#: Bounds of a decision's time (and of a first decision's) when the table has a clock.
MIN_DECISION_MS: Final = 100
MAX_DECISION_MS: Final = 60 * 60 * 1000
#: The largest time bank.
MAX_BANK_MS: Final = 60 * 60 * 1000
#: The largest number of thrown-in deals a round may have before it is void.
MAX_REDEALS: Final = 32


def check_name(field: str, name: str) -> str:
    """``name`` if it is a valid player name, else INVALID_ARGUMENT naming ``field``."""
    if not 1 <= len(name) <= MAX_NAME_LENGTH or not name.isprintable():
        raise InvalidArgument(field, f"a player name is 1..{MAX_NAME_LENGTH} printable characters")
    return name


def check_seeds(seeds: Sequence[bytes]) -> None:
    """At most ``MAX_SEEDS`` seeds of ``SEED_SIZE`` bytes each."""
    if len(seeds) > MAX_SEEDS:
        raise InvalidArgument("seeds", f"at most {MAX_SEEDS} preset seeds, not {len(seeds)}")
    for index, seed in enumerate(seeds):
        if len(seed) != SEED_SIZE:
            raise InvalidArgument(f"seeds[{index}]", f"a round seed is {SEED_SIZE} bytes, not {len(seed)}")


def _within(field: str, ms: int, low: int, high: int) -> None:
    if not low <= ms <= high:
        raise InvalidArgument(field, f"must be between {low} ms and {high} ms, not {ms} ms")


def check_settings(settings: TableSettings) -> None:
    """INVALID_ARGUMENT naming the first setting out of its bounds (see the module docstring)."""
    clock = settings.clock
    if clock.decision_ms:
        _within("settings.clock.decision_time", clock.decision_ms, MIN_DECISION_MS, MAX_DECISION_MS)
        _within("settings.clock.first_decision_time", clock.first_decision_ms, MIN_DECISION_MS, MAX_DECISION_MS)
        _within("settings.clock.time_bank", clock.bank_ms, 0, MAX_BANK_MS)
    if not 0 <= settings.redeal_cap <= MAX_REDEALS:
        raise InvalidArgument("settings.max_redeals", f"at most {MAX_REDEALS}, not {settings.redeal_cap}")
    players = settings.variant.players
    if settings.first_dealer is not None and not 0 <= settings.first_dealer < players:
        raise InvalidArgument("settings.first_dealer", f"{settings.variant.name} has no seat {settings.first_dealer}")
