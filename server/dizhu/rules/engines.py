"""Which engine computes the rules' hot paths: the native one (``dizhu._engine``, Rust) or this package.

The rules core keeps one public API; classification, legal-move generation and the deal
ask ``native_rules(variant)`` and, when it answers, let the native engine compute what the
Python code would, returning the same Python values (docs/engine.md). The choice is made
once at import from the environment and may be changed later through ``dizhu.engine``:

* ``DIZHU_ENGINE=python`` uses this package only; ``DIZHU_ENGINE=native`` requires the native
  engine; unset, the native engine is used when it is built;
* ``DIZHU_REQUIRE_NATIVE=1`` makes a missing native engine an error, whatever is chosen: no
  silent slow path where a native build was expected (CI sets it).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, Protocol

from dizhu.rules.variants import VARIANTS, Variant

__all__ = [
    "BACKENDS",
    "RULES_BY_VARIANT_ID",
    "EngineUnavailable",
    "NativeRules",
    "active",
    "native_error",
    "native_module",
    "native_rules",
    "offered_native_rules",
    "on_switch",
    "select",
]

#: The engines, by the names ``DIZHU_ENGINE`` takes.
BACKENDS = ("native", "python")
#: Custom variants' native rules are kept for at most this many variants (they are made by hand).
_MAX_CUSTOM_VARIANTS = 64


class EngineUnavailable(RuntimeError):
    """The native engine was asked for (``DIZHU_ENGINE=native``, ``DIZHU_REQUIRE_NATIVE=1``) but is not built."""


class NativeRules(Protocol):
    """One variant's rules in the native engine (``dizhu._engine.Rules``)."""

    def read(self, ranks: bytes) -> tuple[int, int] | str: ...
    def legal_moves(self, hand: Any, to_beat: Any, play_of_key: Callable[[int], Any]) -> list[Any]: ...
    def legal_moves_message(
        self,
        hand: Any,
        to_beat: Any,
        card_ids: Sequence[int],
        card_entries: Sequence[bytes],
        entry_of_key: Callable[[int], bytes],
        tail: bytes,
    ) -> tuple[bytes, int]: ...
    def shuffle(self, seed: bytes) -> tuple[list[int], int]: ...
    def random_rounds(self, seed: int, rounds: int, spring: bool = False) -> tuple[int, int, int, int, int]: ...
    def start_round(self, hands: list[list[int]], kitty: list[int], first: int, spring: bool = False) -> Any: ...


def _import_native() -> tuple[ModuleType | None, str | None]:
    try:
        from dizhu import _engine  # type: ignore[attr-defined]
    except ImportError as missing:
        return None, f"the native engine (dizhu._engine) is not built: {missing}"
    return _engine, None


_NATIVE_MODULE, _NATIVE_ERROR = _import_native()
#: The rules of each variant in the active native engine, by the variant's identity (with the
#: variant itself, so that an identity is never reused while it is kept); empty when Python computes.
#: ``native_rules`` looks here first; the hottest callers (``legal_moves``) look here themselves.
RULES_BY_VARIANT_ID: dict[int, tuple[Variant, NativeRules | None]] = {}
_RULES = RULES_BY_VARIANT_ID


class _Choice:
    """The engine in use (one mutable slot, read on every hot call)."""

    name = "python"


_CHOICE = _Choice()
#: Called after every switch: caches of values one engine computed are emptied, so that the
#: other engine is really the one asked.
_SWITCH_HOOKS: list[Callable[[], None]] = []


def native_module() -> ModuleType | None:
    """The native extension module, or None when it is not built."""
    return _NATIVE_MODULE


def native_error() -> str | None:
    """Why the native engine cannot be loaded, or None when it can."""
    return _NATIVE_ERROR


def active() -> str:
    """The engine in use: ``"native"`` or ``"python"``."""
    return _CHOICE.name


def _rules_of(variant: Variant) -> NativeRules | None:
    assert _NATIVE_MODULE is not None
    kinds = sum(1 << kind for kind in variant.kinds)
    try:
        rules: NativeRules = _NATIVE_MODULE.Rules(
            variant.name,
            variant.players,
            variant.decks,
            variant.hand_size,
            variant.kitty_size,
            kinds,
            variant.max_bomb_size,
            variant.min_doubling_bomb_size,
        )
    except ValueError:  # a variant of the caller's own making the native engine does not play
        return None
    return rules


def native_rules(variant: Variant) -> NativeRules | None:
    """The native engine's rules for ``variant``, or None when Python computes them."""
    entry = _RULES.get(id(variant))
    if entry is not None and entry[0] is variant:
        return entry[1]
    if _CHOICE.name != "native":
        return None
    if len(_RULES) >= len(VARIANTS) + _MAX_CUSTOM_VARIANTS:
        return _rules_of(variant)
    rules = _rules_of(variant)
    _RULES[id(variant)] = (variant, rules)
    return rules


#: Native rules offered whichever engine is selected (``offered_native_rules``), by variant identity.
_OFFERED: dict[int, tuple[Variant, NativeRules | None]] = {}


def offered_native_rules(variant: Variant) -> NativeRules | None:
    """The native engine's rules for ``variant`` whichever engine is selected; None where it is not built."""
    if _NATIVE_MODULE is None:
        return None
    entry = _OFFERED.get(id(variant))
    if entry is not None and entry[0] is variant:
        return entry[1]
    rules = _rules_of(variant)
    if len(_OFFERED) < len(VARIANTS) + _MAX_CUSTOM_VARIANTS:
        _OFFERED[id(variant)] = (variant, rules)
    return rules


def on_switch(hook: Callable[[], None]) -> None:
    """Call ``hook`` after every change of engine (to empty a cache of computed values)."""
    _SWITCH_HOOKS.append(hook)


def select(name: str) -> None:
    """Use the engine ``name`` (``"native"`` or ``"python"``) from now on."""
    if name not in BACKENDS:
        raise ValueError(f"no engine is called {name!r}: {' or '.join(BACKENDS)}")
    if name == "native" and _NATIVE_MODULE is None:
        raise EngineUnavailable(f"{_NATIVE_ERROR}; build it with Rust's cargo on the PATH (docs/engine.md)")
    _CHOICE.name = name
    _RULES.clear()
    if name == "native":
        for variant in VARIANTS.values():
            _RULES[id(variant)] = (variant, _rules_of(variant))
    for hook in _SWITCH_HOOKS:
        hook()


def _select_from_environment() -> None:
    requested = os.environ.get("DIZHU_ENGINE", "").strip().lower()
    if os.environ.get("DIZHU_REQUIRE_NATIVE", "").strip() == "1" and _NATIVE_MODULE is None:
        raise EngineUnavailable(f"DIZHU_REQUIRE_NATIVE=1, but {_NATIVE_ERROR} (docs/engine.md)")
    if requested:
        select(requested)
    elif _NATIVE_MODULE is not None:
        select("native")


_select_from_environment()
