"""The Rust crate's own checks, in the suite: cargo test (with bounded property tests) and clippy."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

CRATE = Path(__file__).resolve().parents[2] / "native"
#: Cases per property test of native/tests/properties.rs: a few seconds.
PROPTEST_CASES = "2000"


def _cargo(*args: str) -> subprocess.CompletedProcess[str]:
    cargo = shutil.which("cargo")
    assert cargo is not None, "cargo is not on the PATH: install Rust (rustup) to build and test the native engine"
    # Without incremental compilation: its records cost a cold build (the suite's, CI's) about a tenth
    # more CPU for cargo test (33 against 29 s) and save a rebuild of this small crate little.
    env = os.environ | {"PROPTEST_CASES": PROPTEST_CASES, "PYO3_PYTHON": sys.executable, "CARGO_INCREMENTAL": "0"}
    return subprocess.run([cargo, *args], cwd=CRATE, env=env, capture_output=True, text=True, check=False, timeout=900)


def test_cargo_test_passes_with_the_property_tests() -> None:
    done = _cargo("test", "--locked")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "every_legal_move_is_held_reads_as_itself_and_beats_the_play ... ok" in done.stdout
    assert " 0 failed" in done.stdout


def test_clippy_finds_nothing_in_the_core_and_the_bindings() -> None:
    for features in ([], ["--features", "python"]):
        done = _cargo("clippy", "--locked", "--all-targets", *features, "--", "-D", "warnings")
        assert done.returncode == 0, done.stderr[-4000:]


def _module_graph() -> dict[str, set[str]]:
    """Each module of the crate's ``src/`` and the modules of the crate it names (``crate::name``)."""
    modules = {path.stem: path.read_text() for path in (CRATE / "src").glob("*.rs") if path.stem != "lib"}
    names = re.compile(r"\bcrate::(\w+)")
    return {module: set(names.findall(text)) & modules.keys() - {module} for module, text in modules.items()}


def _a_circle(graph: dict[str, set[str]]) -> list[str] | None:
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> list[str] | None:
        if module in path:
            return [*path[path.index(module) :], module]
        if module in done:
            return None
        for used in sorted(graph[module]):
            if circle := visit(used, [*path, module]):
                return circle
        done.add(module)
        return None

    for module in sorted(graph):
        if circle := visit(module, []):
            return circle
    return None


def test_no_module_of_the_crate_depends_on_itself_through_others() -> None:
    graph = _module_graph()
    assert {"tables", "douzero", "python", "python_tables"} <= graph.keys()
    assert _a_circle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"], "the check finds a circle of two"
    assert _a_circle(graph) is None, f"modules that use each other: {' -> '.join(_a_circle(graph) or [])}"
