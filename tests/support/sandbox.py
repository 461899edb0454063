"""Helpers of the confinement tests: what a confined Python entrant needs to see, ``[sandbox]`` tables,
processes and control groups left behind."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.tournaments import ROOT, toml_value

HOSTILE = ROOT / "tests" / "tournament" / "hostile"


def python_paths() -> list[str]:
    """What this interpreter and the editable dizhu install need inside a sandbox, read-only."""
    return [sys.base_prefix, sys.prefix, str(ROOT / "server"), str(ROOT / "clients" / "python")]


def add_sandbox(path: Path, **limits: Any) -> None:
    """Append a ``[sandbox]`` table (``ro_paths``: :func:`python_paths`) to the tournament file ``path``."""
    table = {"ro_paths": python_paths(), **limits}
    lines = ["[sandbox]", *(f"{key} = {toml_value(value)}" for key, value in table.items())]
    path.write_text(path.read_text() + "\n".join(lines) + "\n")


def entrant_folder(parent: Path, name: str, *scripts: Path) -> Path:
    """A folder of its own for entrant ``name`` under ``parent``, holding copies of ``scripts``."""
    folder = parent / name
    folder.mkdir()
    for script in scripts:
        shutil.copy(script, folder / script.name)
    return folder


def processes_with(marker: str) -> list[int]:
    """Live processes whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def runner_cgroups() -> list[Path]:
    """Control groups a runner of this process made and left (``dizhu-tournament-<pid>-...``)."""
    prefix = f"dizhu-tournament-{os.getpid()}-"
    return [path for path in Path("/sys/fs/cgroup").glob(f"*/**/{prefix}*") if path.is_dir()]


def require_bubblewrap() -> None:
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap (bwrap) must be installed for the confinement tests: apt-get install bubblewrap")
