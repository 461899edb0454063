"""The one seam between the environments and the rules: every rules call goes through a ``Rules``.

The environments never import the rules core's modules directly. They ask ``rules(name)``
for a backend -- ``"python"`` is the pure rules core (``dizhu.rules``), the reference;
``"native"`` is the native engine, offered by ``dizhu.engine`` where it is built -- and call
only the functions of the ``Rules`` protocol below. Switching an environment to another
engine is ``dou_dizhu_v0.env(engine="native")``; ``DIZHU_ENGINE`` chooses the default.

A backend is any object with these functions and the same meaning as ``dizhu.rules``'s:
``dizhu.engine`` offers the native one as ``dizhu.engine.rules("native")``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from typing import Any, Protocol, cast

from dizhu import rules as _pure
from dizhu.rules import Action, Card, Combination, Deal, HouseRules, RoundState, Settlement, Transition, Variant
from dizhu.rules.engines import native_module, offered_native_rules

__all__ = [
    "ENGINES",
    "EngineMissing",
    "Rules",
    "available_engines",
    "default_engine",
    "has_native_tables",
    "native_required",
    "native_tables",
    "rules",
    "shard_signals",
]

#: Every engine name an environment accepts.
ENGINES = ("python", "native")


class Rules(Protocol):
    """What the environments need of a rules engine (the names and meanings of ``dizhu.rules``)."""

    def deal(self, seed: bytes, variant: Variant, dealer: int) -> Deal: ...
    def derive_seed(self, seed: bytes, label: str, index: int) -> bytes: ...
    def start_round(self, deal: Deal, house_rules: HouseRules | None = None) -> RoundState: ...
    def apply(self, state: RoundState, action: Action) -> Transition: ...
    def legal_plays(self, state: RoundState) -> list[Combination]: ...
    def pick_cards(self, hand: Sequence[Card], play: Combination) -> tuple[Card, ...]: ...
    def settle(self, state: RoundState) -> Settlement: ...


class EngineMissing(RuntimeError):
    """An engine was asked for that this installation does not have; the message says how to get it."""


def native_required() -> bool:
    """Whether ``DIZHU_REQUIRE_NATIVE=1``: a missing native engine is then an error, never a fallback."""
    return os.environ.get("DIZHU_REQUIRE_NATIVE", "") == "1"


def _native() -> Rules | None:
    """The native engine's rules, or None where ``dizhu.engine`` does not offer them."""
    try:
        engine = importlib.import_module("dizhu.engine")
    except ImportError:
        return None
    offered = getattr(engine, "rules", None)
    if offered is None:
        return None
    try:
        return cast("Rules", offered("native"))
    except (ImportError, LookupError, RuntimeError):
        return None


def available_engines() -> tuple[str, ...]:
    """The engines this installation has: always ``"python"``, and ``"native"`` where it is built."""
    return ("python", "native") if _native() is not None else ("python",)


def default_engine() -> str:
    """``DIZHU_ENGINE`` if set (``python`` or ``native``), else the fastest engine available."""
    chosen = os.environ.get("DIZHU_ENGINE", "")
    if chosen:
        if chosen not in ENGINES:
            raise ValueError(f"DIZHU_ENGINE={chosen!r}: expected one of {', '.join(ENGINES)}")
        return chosen
    if native_required():
        return "native"
    return available_engines()[-1]


def rules(name: str | None = None) -> Rules:
    """The rules backend called ``name`` (default: ``default_engine()``)."""
    name = default_engine() if name is None else name
    if name == "python":
        return cast("Rules", cast(Any, _pure))
    if name == "native":
        native = _native()
        if native is None:
            raise EngineMissing(
                "the native rules engine is not installed (dizhu.engine offers no 'native' rules): "
                "build it as docs/engine.md says, or choose engine='python'"
            )
        return native
    raise ValueError(f"unknown engine {name!r}: expected one of {', '.join(ENGINES)}")


def has_native_tables(engine: Rules, variant: Variant) -> bool:
    """Whether ``engine`` is the native engine and plays ``variant``: its tables then play in Rust."""
    return getattr(engine, "name", None) == "native" and offered_native_rules(variant) is not None


def native_tables(engine: Rules, variant: Variant, arguments: tuple[Any, ...]) -> Any | None:
    """``dizhu._engine.NativeTables(rules, *arguments)`` for ``variant`` when ``engine`` is the native
    engine and plays ``variant`` (its tables play whole rounds inside the engine); else None."""
    native = offered_native_rules(variant) if has_native_tables(engine, variant) else None
    if native is None:
        return None
    module = native_module()
    assert module is not None  # the native rules above come from it
    return module.NativeTables(native, *arguments)


def shard_signals(shards: int) -> Any:
    """``dizhu._engine.ShardSignals(shards)``: how a vector environment asks its native shards'
    threads for steps (``dizhu.env.threads``). Only for shards of native tables."""
    module = native_module()
    if module is None:
        raise EngineMissing("the native rules engine is not installed: its shards cannot be served")
    return module.ShardSignals(shards)
