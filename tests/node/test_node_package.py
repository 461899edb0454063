"""The Node client as a package: ``npm pack`` makes a tarball that works anywhere.

The tarball carries what the client reads at run time from outside its folder in the
repository -- the contract's ``.proto`` files and the retry policy every client follows -- the
way the Python SDK's wheel does. Installed into an empty project outside the repository, with
no ``DIZHU_PROTO_DIR`` or ``DIZHU_RETRY_POLICY`` pointing back into it, its ``play-table.mjs``
plays a whole table on a real referee.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.referees import served_referee
from tests.support.shared_builds import exclusive, npm_ci

ROOT = Path(__file__).resolve().parents[2]
NODE_CLIENT = ROOT / "clients" / "node"


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not on PATH: install Node.js (>= 18, with npm) for clients/node", pytrace=False)
    return path


def _run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def referee(redis_url: str) -> Iterator[str]:
    """A ``dizhu serve`` subprocess on the tests' Redis."""
    with served_referee(redis_url, "node-pack") as target:
        yield target


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """(an empty project outside the repository with the packed client installed, the packed files)."""
    npm = _tool("npm")
    npm_ci(NODE_CLIENT, *json.loads((NODE_CLIENT / "package.json").read_text())["dependencies"])
    packs = tmp_path_factory.mktemp("packs")
    with exclusive("npm-clients-node"):
        packed = json.loads(_run([npm, "pack", "--json", "--pack-destination", str(packs)], cwd=NODE_CLIENT))[0]
    project = tmp_path_factory.mktemp("elsewhere")
    (project / "package.json").write_text('{"name": "elsewhere", "private": true}\n')
    # The dependencies come from npm's cache, which the npm ci above filled.
    _run([npm, "install", "--no-audit", "--no-fund", "--prefer-offline", str(packs / packed["filename"])], cwd=project)
    return project, [entry["path"] for entry in packed["files"]]


def test_the_tarball_carries_the_contract_and_the_retry_policy(installed: tuple[Path, list[str]]) -> None:
    _, files = installed
    protos = sorted(path.relative_to(ROOT / "proto").as_posix() for path in (ROOT / "proto" / "dizhu").rglob("*.proto"))
    assert sorted(path.removeprefix("contract/") for path in files if path.endswith(".proto")) == protos
    assert "contract/retry_policy.json" in files
    assert not (NODE_CLIENT / "contract").exists(), "npm pack left its copy of the contract in the repository"


def test_the_installed_package_plays_a_table_outside_the_repository(
    installed: tuple[Path, list[str]], referee: str
) -> None:
    project, _ = installed
    env = {name: value for name, value in os.environ.items() if name not in ("DIZHU_PROTO_DIR", "DIZHU_RETRY_POLICY")}
    script = project / "node_modules" / "dizhu-node-client" / "play-table.mjs"
    output = json.loads(_run([_tool("node"), str(script), "--target", referee], cwd=project, env=env).splitlines()[-1])
    assert sorted(entry["seat"] for entry in output["standings"]) == [0, 1, 2]
    assert sum(entry["balance"] for entry in output["standings"]) == 0
