"""The rules engine in use, and the way to choose it (docs/engine.md).

``dizhu.rules`` computes its hot paths (classification, legal moves, the deal) with the
native engine (``dizhu._engine``, the rules in Rust) when it is built, and with the pure-Python
rules core otherwise; both return the same values. ``DIZHU_ENGINE=python|native`` chooses at
start, ``DIZHU_REQUIRE_NATIVE=1`` makes a missing native engine an error::

    >>> from dizhu import engine
    >>> engine.backend() in engine.BACKENDS
    True
    >>> with engine.using("python"):
    ...     engine.backend()
    'python'
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import NamedTuple

from dizhu import rules as _rules
from dizhu.rules import Card, Combination, Deal, Phase, RoundState, Variant, engines
from dizhu.rules.deal import deal_with
from dizhu.rules.engines import BACKENDS, EngineUnavailable, native_error, offered_native_rules
from dizhu.rules.moves import native_legal_moves, python_legal_moves

__all__ = [
    "BACKENDS",
    "EngineUnavailable",
    "RandomRounds",
    "available",
    "backend",
    "native_error",
    "random_rounds",
    "rules",
    "select",
    "using",
]


def backend() -> str:
    """The engine ``dizhu.rules`` uses now: ``"native"`` or ``"python"``."""
    return engines.active()


def available() -> tuple[str, ...]:
    """The engines this installation can use (``"python"`` always)."""
    return BACKENDS if engines.native_module() is not None else ("python",)


def select(name: str) -> None:
    """Use engine ``name`` from now on; raises ``EngineUnavailable`` for a native engine that is not built."""
    engines.select(name)


@contextmanager
def using(name: str) -> Iterator[None]:
    """Use engine ``name`` inside the ``with`` block, then the engine used before."""
    before = engines.active()
    engines.select(name)
    try:
        yield
    finally:
        engines.select(before)


class Rules:
    """The rules with one engine, whichever ``dizhu.rules`` uses: the names and meanings of ``dizhu.rules``.

    ``deal`` and ``legal_plays`` are computed by the engine named; ``apply`` checks a play with
    the readings of ``dizhu.rules`` (the same in both engines, as the differential tests keep them).
    """

    start_round = staticmethod(_rules.start_round)
    apply = staticmethod(_rules.apply)
    pick_cards = staticmethod(_rules.pick_cards)
    settle = staticmethod(_rules.settle)
    derive_seed = staticmethod(_rules.derive_seed)

    def __init__(self, name: str) -> None:
        if name not in BACKENDS:
            raise ValueError(f"no engine is called {name!r}: {' or '.join(BACKENDS)}")
        if name == "native" and engines.native_module() is None:
            raise EngineUnavailable(f"{native_error()} (docs/engine.md)")
        self.name = name

    def deal(self, seed: bytes, variant: Variant, dealer: int) -> Deal:
        native = offered_native_rules(variant) if self.name == "native" else None
        return deal_with(native, seed, variant, dealer)

    def legal_moves(self, hand: Sequence[Card], to_beat: Combination | None, variant: Variant) -> list[Combination]:
        native = offered_native_rules(variant) if self.name == "native" else None
        if native is None:
            return python_legal_moves(hand, to_beat, variant)
        return native_legal_moves(native, hand, to_beat)

    def legal_plays(self, state: RoundState) -> list[Combination]:
        if state.phase is not Phase.PLAY:
            return []
        return self.legal_moves(state.hands[state.turn], state.last_play, state.variant)


_RULES_BY_NAME: dict[str, Rules] = {}


def rules(name: str) -> Rules:
    """The rules computed by engine ``name`` whichever engine ``dizhu.rules`` uses (for the training
    environments and comparisons); raises ``EngineUnavailable`` for a native engine that is not built."""
    found = _RULES_BY_NAME.get(name)
    if found is None:
        found = _RULES_BY_NAME[name] = Rules(name)
    return found


class RandomRounds(NamedTuple):
    """What a batch of random rounds played inside the native engine did."""

    rounds: int
    actions: int
    thrown_in: int
    landlord_wins: int
    #: The landlords' balance changes summed over the batch: a checksum of the rounds played.
    landlord_balance: int


def random_rounds(variant: Variant, seed: int, rounds: int, *, spring: bool = False) -> RandomRounds:
    """Play ``rounds`` complete rounds between uniformly random players inside the native engine.

    Many rounds in one call, without the interpreter's lock: for simulations and training.
    Seeded by ``seed`` (0 .. 2**64 - 1); raises ``EngineUnavailable`` without the native engine.
    """
    module = engines.native_module()
    if module is None:
        raise EngineUnavailable(f"{native_error()} (docs/engine.md)")
    rules = engines.native_rules(variant) if backend() == "native" else None
    if rules is None:
        with using("native"):
            rules = engines.native_rules(variant)
    if rules is None:
        raise ValueError(f"the native engine does not play the variant {variant.name!r}")
    return RandomRounds(*rules.random_rounds(seed, rounds, spring))
