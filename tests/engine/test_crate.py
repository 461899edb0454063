"""The Rust crate's own checks, in the suite: cargo test (with bounded property tests) and clippy."""

from __future__ import annotations

import os
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
    env = os.environ | {"PROPTEST_CASES": PROPTEST_CASES, "PYO3_PYTHON": sys.executable}
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
