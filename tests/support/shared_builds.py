"""Builds and installs the test workers share, each made by one worker at a time.

Under ``pytest -n`` two workers may need the same build at once: a second ``npm ci`` starts by
deleting the ``node_modules`` the first is filling or another test is reading, and two builds
into one folder overwrite each other. A file lock under ``build/`` (gitignored) serialises them;
whoever comes second finds the work done.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"


@contextmanager
def exclusive(name: str) -> Iterator[None]:
    """Held by this process alone until the block ends (``build/<name>.lock``)."""
    lock_file = BUILD / f"{name}.lock"
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_file, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def npm_ci(folder: Path, *needed: str) -> None:
    """``npm ci`` in ``folder`` unless every one of ``needed`` (paths under its node_modules) is there."""

    # Looked at under the lock only: another worker's npm ci may be half way.
    with exclusive(f"npm-{folder.relative_to(ROOT).as_posix().replace('/', '-')}"):
        if all((folder / "node_modules" / path).exists() for path in needed):
            return
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail(f"npm is not on PATH: install Node.js (>= 18, with npm) for {folder}", pytrace=False)
        installed = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if installed.returncode != 0:
            pytest.fail(f"npm ci failed in {folder}:\n{installed.stdout}\n{installed.stderr}", pytrace=False)
