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

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

from dizhu.rules import engines
from dizhu.rules.engines import BACKENDS, EngineUnavailable, native_error
from dizhu.rules.variants import Variant

__all__ = [
    "BACKENDS",
    "EngineUnavailable",
    "RandomRounds",
    "available",
    "backend",
    "native_error",
    "random_rounds",
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
