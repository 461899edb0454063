"""The built web table in the package is what web/ builds from proto/ and web/src (the drift check).

``web/build DIR`` regenerates the TypeScript of the contract with buf and protoc-gen-es,
type-checks it with tsc and bundles it with esbuild into DIR; the files must equal the ones
committed under ``server/dizhu/web/static``. Needs Node.js and npm (``npm ci`` runs when
``web/node_modules`` is missing); without them the test fails, saying so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.shared_builds import npm_ci

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "server" / "dizhu" / "web" / "static"


def test_the_committed_web_table_is_the_build_of_its_sources(tmp_path: Path) -> None:
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            pytest.fail(
                f"{tool} is not on PATH: install Node.js (>= 18, with npm) to build the web table", pytrace=False
            )
    npm_ci(ROOT / "web", ".bin/esbuild", ".bin/tsc")  # here, not by web/build: under a lock the other workers share
    env = {**os.environ, "BUF": str(Path(sys.executable).parent / "buf")}
    built = subprocess.run(
        ["bash", str(ROOT / "web" / "build"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
    )
    assert built.returncode == 0, f"web/build failed:\n{built.stdout}\n{built.stderr}"
    committed = sorted(path.name for path in STATIC.iterdir())
    assert sorted(path.name for path in tmp_path.iterdir()) == committed
    drifted = [name for name in committed if (tmp_path / name).read_bytes() != (STATIC / name).read_bytes()]
    assert not drifted, f"{drifted} differ from a fresh build: run web/build and commit server/dizhu/web/static"
