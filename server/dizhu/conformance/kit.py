"""The conformance kit on disk: where it is, its version, its files, and the report of a run.

The kit is data (docs/conformance.md): ``VERSION``, ``rules/<family>.json``,
``protocol/cases.json``, a JSON Schema per file kind in ``schemas/``, and
``known-failing/<implementation>.json`` (the case ids an implementation is known to fail).
A source checkout finds it beside ``server/``; an installed package is told where with
``--kit DIR`` or ``DIZHU_CONFORMANCE_KIT``.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["CaseResult", "Kit", "KitError", "Report", "find_kit"]

#: The kit of a source checkout: ``<repository>/conformance``.
_CHECKOUT_KIT = Path(__file__).resolve().parents[3] / "conformance"


class KitError(Exception):
    """Raised when the kit cannot be found or read; the message says which file and why."""


@dataclasses.dataclass(frozen=True)
class Kit:
    """A conformance kit folder."""

    root: Path

    @property
    def version(self) -> str:
        return self._text("VERSION").strip()

    def _text(self, name: str) -> str:
        try:
            return (self.root / name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise KitError(f"{self.root / name}: {getattr(error, 'strerror', None) or error}") from None

    def load(self, name: str) -> Any:
        """The JSON file ``name`` (a path inside the kit)."""
        try:
            return json.loads(self._text(name))
        except json.JSONDecodeError as error:
            raise KitError(f"{self.root / name}: not JSON: {error}") from None

    def known_failing(self, implementation: str) -> frozenset[str]:
        """The case ids ``implementation`` is known to fail (none when it has no list)."""
        name = f"known-failing/{implementation}.json"
        if not (self.root / name).is_file():
            return frozenset()
        return frozenset(self.load(name)["cases"])

    def validate(self) -> list[str]:
        """Every data file checked against its kind's schema: one line per error (needs ``jsonschema``)."""
        try:
            import jsonschema
        except ImportError:
            raise KitError("validating the kit needs jsonschema: pip install 'dizhu[conformance]'") from None
        errors: list[str] = []
        files = [
            (f"rules/{path.name}", f"rules-{path.stem}.schema.json") for path in sorted(self.root.glob("rules/*.json"))
        ]
        files += [("protocol/cases.json", "protocol-cases.schema.json")]
        files += [
            (f"known-failing/{path.name}", "known-failing.schema.json")
            for path in sorted(self.root.glob("known-failing/*.json"))
        ]
        for name, schema_name in files:
            schema = self.load(f"schemas/{schema_name}")
            validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
            errors += [
                f"{name}: {'/'.join(map(str, error.absolute_path))}: {error.message}"
                for error in validator.iter_errors(self.load(name))
            ]
        return errors


def find_kit(explicit: str | None = None) -> Kit:
    """The kit at ``explicit``, else ``$DIZHU_CONFORMANCE_KIT``, else the source checkout's."""
    chosen = explicit or os.environ.get("DIZHU_CONFORMANCE_KIT")
    root = Path(chosen) if chosen else _CHECKOUT_KIT
    if not (root / "VERSION").is_file():
        where = f"{root} has no VERSION" if chosen else "this installation has no kit beside it"
        raise KitError(
            f"no conformance kit found ({where}): pass --kit DIR (the conformance/ folder of the repository)"
        )
    return Kit(root)


@dataclasses.dataclass(frozen=True)
class CaseResult:
    """One case's fate: ``passed``, ``failed``, ``known_failing`` or ``unexpected_pass``."""

    case_id: str
    group: str
    status: str
    detail: str = ""


@dataclasses.dataclass
class Report:
    """What a run found, case by case; ``ok`` when nothing failed that was not known to."""

    suite: str
    implementation: str
    kit_version: str
    results: list[CaseResult] = dataclasses.field(default_factory=list)
    #: How a family's answers were compared where the run chose (``{"legal_moves": "ordered"}``).
    comparison: dict[str, str] = dataclasses.field(default_factory=dict)

    def add(self, case_id: str, group: str, failure: str | None, known: Iterable[str]) -> None:
        """Record a case: ``failure`` None when it passed, else why not."""
        expected_to_fail = case_id in known
        if failure is None:
            status = "unexpected_pass" if expected_to_fail else "passed"
            detail = "listed as known failing: remove it from the list" if expected_to_fail else ""
        else:
            status, detail = ("known_failing" if expected_to_fail else "failed"), failure
        self.results.append(CaseResult(case_id, group, status, detail))

    def count(self, status: str) -> int:
        return sum(result.status == status for result in self.results)

    @property
    def ok(self) -> bool:
        return self.count("failed") == 0 and self.count("unexpected_pass") == 0

    def by_group(self) -> dict[str, dict[str, int]]:
        """Per group (family, or protocol area): how many cases of each status."""
        groups: dict[str, dict[str, int]] = {}
        for result in self.results:
            counts = groups.setdefault(result.group, {})
            counts[result.status] = counts.get(result.status, 0) + 1
        return groups

    def to_json(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "implementation": self.implementation,
            "kit_version": self.kit_version,
            "comparison": self.comparison,
            "ok": self.ok,
            "totals": {
                status: self.count(status) for status in ("passed", "failed", "known_failing", "unexpected_pass")
            },
            "groups": self.by_group(),
            "cases": [dataclasses.asdict(result) for result in self.results],
        }

    def to_text(self) -> str:
        lines = [f"dizhu conformance {self.suite}: {self.implementation} against kit {self.kit_version}"]
        for group, counts in self.by_group().items():
            total = sum(counts.values())
            how = f" ({self.comparison[group]})" if group in self.comparison else ""
            lines.append(f"  {group:<14} {counts.get('passed', 0):>5} / {total:<5} passed{how}")
        lines += [
            f"  {result.status.upper()} {result.case_id}: {result.detail}"
            for result in self.results
            if result.status in ("failed", "unexpected_pass")
        ]
        totals = ", ".join(
            f"{self.count(status)} {status.replace('_', ' ')}"
            for status in ("passed", "failed", "known_failing", "unexpected_pass")
        )
        lines.append(f"  {'OK' if self.ok else 'FAILED'}: {totals}")
        return "\n".join(lines)
