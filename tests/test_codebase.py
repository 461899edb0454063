"""The codebase's own checks, run with the suite so that CI enforces them: ruff and mypy --strict."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False, timeout=600)


class TestCodebase:
    def test_ruff_finds_nothing(self) -> None:
        result = _run(sys.executable, "-m", "ruff", "check", "--no-cache", ".")
        assert result.returncode == 0, result.stdout + result.stderr

    def test_ruff_format_is_applied(self) -> None:
        result = _run(sys.executable, "-m", "ruff", "format", "--check", "--no-cache", ".")
        assert result.returncode == 0, result.stdout + result.stderr

    def test_mypy_strict_passes_on_server(self) -> None:
        result = _run(sys.executable, "-m", "mypy", "--no-incremental")
        assert result.returncode == 0, result.stdout + result.stderr

    def test_imports_keep_to_the_layers(self) -> None:
        """The import-linter contracts of pyproject.toml (docs/architecture.md) are all kept."""
        lint_imports = Path(sys.executable).parent / "lint-imports"
        assert lint_imports.exists(), "lint-imports is missing: pip install -e '.[test]' installs it (import-linter)"
        # As a developer runs it: bare, over the installed package (pyproject.toml names both halves).
        environment = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
        result = subprocess.run(
            [str(lint_imports), "--no-cache"],
            cwd=ROOT,
            env=environment,
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        assert "0 broken" in result.stdout, result.stdout


def _buf() -> str:
    buf = Path(sys.executable).parent / "buf"
    assert buf.exists(), "the buf CLI is missing: pip install -e '.[test]' installs it (package buf-bin)"
    return str(buf)


class TestContract:
    def test_buf_lint_passes(self) -> None:
        result = subprocess.run(
            [_buf(), "lint"], cwd=ROOT / "proto", capture_output=True, text=True, check=False, timeout=300
        )
        assert result.returncode == 0, result.stdout + result.stderr

    def test_generated_stubs_match_the_protos(self) -> None:
        result = subprocess.run(
            ["bash", "scripts/gen_protos", "--check"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
            env={**os.environ, "PYTHON": sys.executable},
        )
        assert result.returncode == 0, "stubs drifted; run scripts/gen_protos\n" + result.stdout + result.stderr


def _anchor(heading: str) -> str:
    """The anchor a Markdown renderer (GitHub's) gives a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


class TestDocs:
    def test_every_relative_link_and_anchor_of_the_docs_resolves(self) -> None:
        pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "clients" / "python" / "README.md"]
        anchors = {
            page: {_anchor(found[1]) for found in re.finditer(r"^#+\s+(.*)$", page.read_text(), re.M)} for page in pages
        }
        broken = []
        for page in pages:
            for link in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
                if re.match(r"[a-z]+:", link):
                    continue
                path, _, anchor = link.partition("#")
                target = (page.parent / path).resolve() if path else page
                if not target.exists():
                    broken.append(f"{page.relative_to(ROOT)}: {link} (no such file)")
                elif anchor and target.suffix == ".md" and anchor not in anchors.get(target, set()):
                    broken.append(f"{page.relative_to(ROOT)}: {link} (no such heading)")
        assert not broken, "\n".join(broken)


class TestBenchmarks:
    def test_every_benchmark_script_starts(self) -> None:
        # Benchmarks import each other's helpers; one renamed helper must not leave another broken
        # until someone next measures (their figures are in docs/benchmarks.md, not in the suite).
        failed = []
        for script in sorted((ROOT / "bench").glob("*.py")):
            if script.name in {"peers.py"}:
                continue  # a module of the peers' adapters, no command
            ran = _run(sys.executable, str(script), "--help")
            if ran.returncode != 0 or "usage:" not in ran.stdout:
                failed.append(f"{script.name}: exit {ran.returncode}\n{ran.stderr[-600:]}")
        assert not failed, "\n".join(failed)


def _imports_of_test_modules(source: str) -> list[str]:
    """The modules of ``tests`` that ``source`` imports and that are tests or conftests, not support."""

    def is_test_module(dotted: str) -> bool:
        last = dotted.rpartition(".")[2]
        return dotted.startswith("tests.") and (last.startswith("test_") or last == "conftest")

    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if is_test_module(alias.name)]
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            found += [node.module] if is_test_module(node.module) else []
            found += [f"{node.module}.{a.name}" for a in node.names if is_test_module(f"{node.module}.{a.name}")]
    return found


class TestTheTestsLayout:
    """docs/testing.md: what tests share is in tests/support; a test module never imports another."""

    def test_no_module_of_the_tests_imports_a_test_module_or_a_conftest(self) -> None:
        imports = {
            f"{path.relative_to(ROOT)}: {module}"
            for path in sorted((ROOT / "tests").rglob("*.py"))
            for module in _imports_of_test_modules(path.read_text(encoding="utf-8"))
        }
        assert not imports, "import these from tests.support instead:\n" + "\n".join(sorted(imports))

    def test_the_check_sees_each_way_of_importing_a_test_module(self) -> None:
        source = (
            "from tests.web.test_web_hostile import _frame\n"
            "from tests.grpc import conftest\n"
            "def later():\n    import tests.live.test_live_replays\n"
            "from tests.support.web import WebReferee\n"
        )
        assert _imports_of_test_modules(source) == [
            "tests.web.test_web_hostile",
            "tests.grpc.conftest",
            "tests.live.test_live_replays",
        ]
