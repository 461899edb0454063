"""The codebase's own checks, run with the suite so that CI enforces them: ruff and mypy --strict."""

from __future__ import annotations

import ast
import itertools
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


#: What starts a ``dizhu serve`` process: ``dizhu.testing``'s starters, called by name.
_REFEREE_STARTERS = frozenset({"serve_process", "serve_command"})


def _referee_starts(source: str) -> list[str]:
    """Where ``source`` starts a ``dizhu serve`` process itself: a call of ``serve_process`` or
    ``serve_command``, or a command (a list, a tuple or a call's arguments) running ``dizhu serve``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        commands: list[list[ast.expr]] = []
        if isinstance(node, ast.Call):
            called = node.func
            name = called.id if isinstance(called, ast.Name) else getattr(called, "attr", None)
            if name in _REFEREE_STARTERS:
                found.append((node.lineno, f"{name}("))
            commands.append(node.args)
        elif isinstance(node, ast.List | ast.Tuple):
            commands.append(node.elts)
        for command in commands:
            words = [item.value if isinstance(item, ast.Constant) else None for item in command]
            if any(word in ("dizhu", "dizhu.cli") and then == "serve" for word, then in itertools.pairwise(words)):
                found.append((node.lineno, "dizhu serve"))
    return [f"line {line}: {what}" for line, what in sorted(found)]


#: The test modules that start ``dizhu serve`` themselves instead of through
#: ``tests.support.referees.served_referee``, and why.
OWN_REFEREE_PROCESS = {
    "tests/ops/test_ops_command_line.py": "tests the serve command itself: its exit status, refusals and signals",
    "tests/grpc/test_grpc_second_process.py": "reads the JSON lines the process logs and its exit status",
    "tests/ops/test_ops_metrics.py": "reads the process's exit status after SIGTERM",
    "tests/safety/test_safety_config.py": "reads the process's log from a file; listens on 0.0.0.0 on a chosen port",
    "tests/safety/test_safety_secrets.py": "reads the process's debug log from a file",
    "tests/polyglot/test_referee_restart.py": "stops the referee and starts another on the same port",
    "tests/live/test_live_presence.py": "shares the in-process referees' key prefix; the process is killed",
}


class TestTheTestsLayout:
    """docs/testing.md: what tests share is in tests/support; a test module never imports another;
    a referee process is started one way (``tests.support.referees.served_referee``)."""

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

    def test_no_module_of_the_tests_starts_a_referee_process_but_through_the_one_factory(self) -> None:
        starting = {
            path.relative_to(ROOT).as_posix(): starts
            for path in sorted((ROOT / "tests").rglob("*.py"))
            if path.relative_to(ROOT / "tests").parts[0] != "support"
            and (starts := _referee_starts(path.read_text(encoding="utf-8")))
        }
        unexplained = {path: starts for path, starts in starting.items() if path not in OWN_REFEREE_PROCESS}
        assert not unexplained, (
            "start it with tests.support.referees.served_referee (flags=...) instead:\n"
            + "\n".join(f"{path}: {', '.join(starts)}" for path, starts in sorted(unexplained.items()))
        )
        # An exception that no longer starts its own referee is dropped from the list.
        assert sorted(set(OWN_REFEREE_PROCESS) - set(starting)) == []

    def test_the_check_sees_each_way_of_starting_a_referee_process(self) -> None:
        source = (
            "from dizhu import testing\n"
            "with serve_process(url, args=flags) as referee: pass\n"
            "with testing.serve_process(url) as referee: pass\n"
            "command = testing.serve_command(target, url, [])\n"
            "subprocess.Popen([sys.executable, '-m', 'dizhu.cli', 'serve', '--redis-url', url])\n"
            "asyncio.create_subprocess_exec(sys.executable, '-m', 'dizhu.cli', 'serve')\n"
            "subprocess.run(('dizhu', 'serve'))\n"
            "with served_referee(url, 'prefix', flags=['--grace', '1']) as target: pass\n"
            "dizhu('serve', '--help')\n"
            "subprocess.run([sys.executable, '-m', 'dizhu.cli', 'bot', '--target', target])\n"
        )
        assert _referee_starts(source) == [
            "line 2: serve_process(",
            "line 3: serve_process(",
            "line 4: serve_command(",
            "line 5: dizhu serve",
            "line 6: dizhu serve",
            "line 7: dizhu serve",
        ]
