"""The conformance kit's runner: the rules and the protocol as published data (docs/conformance.md).

The kit itself is data, in the repository's ``conformance/`` folder: rules vectors of both
variants (deals, classification, beats, legal moves, perft counts, auctions, redeals,
settlement) and protocol cases for a live referee, each file with its JSON Schema. This
package runs them::

    >>> from dizhu.conformance import find_kit, load_engine, run_rules
    >>> run_rules(find_kit(), load_engine("python")).ok
    True

``dizhu conformance rules [--engine ...]`` and ``dizhu conformance protocol --target HOST:PORT``
do the same on the command line. An engine is anything with ``answer(family, query)``
(:class:`RulesEngine`); ``python -m dizhu.conformance.stdio`` shows the same interface spoken
over standard input and output, for engines in other languages.
"""

from dizhu.conformance.engines import (
    FAMILIES,
    CoreEngine,
    EngineError,
    NativeEngineMissing,
    RulesEngine,
    StdioEngine,
    Unsupported,
    load_engine,
)
from dizhu.conformance.kit import CaseResult, Kit, KitError, Report, find_kit
from dizhu.conformance.rules_runner import count_lines, run_rules

__all__ = [
    "FAMILIES",
    "CaseResult",
    "CoreEngine",
    "EngineError",
    "Kit",
    "KitError",
    "NativeEngineMissing",
    "Report",
    "RulesEngine",
    "StdioEngine",
    "Unsupported",
    "count_lines",
    "find_kit",
    "load_engine",
    "run_rules",
]
