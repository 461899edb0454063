"""web/src's TypeScript run in Node.js: a script beside the page's modules, bundled as web/build bundles the page.

The contract's TypeScript is generated afresh (buf, protoc-gen-es) into a temporary copy of
web/src, and esbuild from web/node_modules bundles the script with what it imports. Needs
Node.js and npm (``npm ci`` runs in web/ when esbuild is missing).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.shared_builds import npm_ci

WEB = Path(__file__).resolve().parents[2] / "web"


def bundle_for_node(folder: Path, name: str, script: str) -> Path:
    """``script`` written as ``src/<name>.ts`` beside web/src's modules in ``folder``, bundled into ``<name>.mjs``."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is not on PATH: install Node.js (>= 18, with npm)", pytrace=False)
    npm_ci(WEB, ".bin/esbuild")
    if not (folder / "src").exists():
        shutil.copytree(WEB / "src", folder / "src", ignore=shutil.ignore_patterns("gen"))
        (folder / "node_modules").symlink_to(WEB / "node_modules")
        buf = os.environ.get("BUF") or str(Path(sys.executable).parent / "buf")
        subprocess.run([buf, "generate", "--output", str(folder)], cwd=WEB, check=True, timeout=300)
    (folder / "src" / f"{name}.ts").write_text(script)
    bundle = folder / f"{name}.mjs"
    subprocess.run(
        [
            *(str(WEB / "node_modules" / ".bin" / "esbuild"), str(folder / "src" / f"{name}.ts"), "--bundle"),
            *("--platform=node", "--format=esm", "--log-level=warning", f"--outfile={bundle}"),
        ],
        check=True,
        timeout=300,
    )
    return bundle
