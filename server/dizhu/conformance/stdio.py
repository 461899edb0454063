"""The rules core behind the kit's stdio engine protocol: ``python -m dizhu.conformance.stdio``.

The reference for an engine in another language (docs/conformance.md, "Running it against your own implementation"): it
reads one JSON object ``{"family": ..., "query": ...}`` per line and writes one answer per
line, ``{"unsupported": "why"}`` for a family it does not answer itself (perft, which the
runner counts from ``legal_moves``), ``{"error": "why"}`` for a query it cannot read.
``dizhu conformance rules --engine "cmd:python -m dizhu.conformance.stdio"`` runs the kit
through it.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from dizhu.conformance.engines import CoreEngine, Unsupported


def answer_line(engine: CoreEngine, line: str) -> dict[str, Any]:
    """The answer to one request line."""
    try:
        request = json.loads(line)
        return engine.answer(request["family"], request["query"])
    except Unsupported as why:
        return {"unsupported": str(why)}
    except (ValueError, KeyError, TypeError) as error:  # a request that is no query of the kit
        return {"error": f"{type(error).__name__}: {error}"}


def main() -> int:
    engine = CoreEngine()
    for line in sys.stdin:
        sys.stdout.write(json.dumps(answer_line(engine, line)) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
