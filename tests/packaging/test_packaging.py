"""``python -m build`` makes a valid wheel and sdist of both packages, and ``twine check`` passes them.

The sources are copied to a fresh directory first (a build writes ``build/`` and
``*.egg-info`` next to them), and built without isolation, with the build tools of the test
environment: no index is needed. The wheel is built from the sdist, which so proves the
sdist complete. The project's wheel holds the native engine (docs/engine.md), built by cargo;
it installs in a fresh virtual environment and the rules core there uses it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_SKIP = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist", "node_modules", "target", "_engine.*.so")
#: The wheel of the whole project: the native engine inside, for CPython 3.11 and later.
WHEEL = "dizhu-0.1.0-cp311-abi3-linux_x86_64.whl"


def _run(*command: str, cwd: Path) -> str:
    # The crate's dependencies compiled by the editable install are reused: only the crate is built again.
    env = os.environ | {"CARGO_TARGET_DIR": str(ROOT / "native" / "target")}
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600, check=False, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of what the two packages are built from."""
    tree = tmp_path_factory.mktemp("sources")
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md"):
        shutil.copy2(ROOT / name, tree / name)
    shutil.copytree(ROOT / "server", tree / "server", ignore=_SKIP)
    shutil.copytree(ROOT / "native", tree / "native", ignore=_SKIP)
    shutil.copytree(ROOT / "clients" / "python", tree / "clients" / "python", ignore=_SKIP)
    return tree


def _build(project: Path) -> tuple[Path, Path]:
    """``(wheel, sdist)`` of ``project``, checked by ``twine check --strict``."""
    out = project / "dist"
    _run(sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(project), cwd=project)
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    report = _run(sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist), cwd=project)
    assert report.count("PASSED") == 2, report
    return wheel, sdist


def _wheel_files(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def _entry_points(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt")]
        return archive.read(name).decode()


SDK_FILES = {
    "dizhu/client/bot.py",
    "dizhu/client/command.py",
    "dizhu/client/__main__.py",
    "dizhu/client/py.typed",
    # The retry policy the SDK reads at import.
    "dizhu/client/retry_policy.json",
}
STUB_FILES = {"dizhu/v1/table_pb2.py", "dizhu/v1/table_pb2.pyi", "dizhu/v1/table_service_pb2_grpc.py"}


class TestTheWholeProject:
    def test_its_wheel_holds_server_sdk_and_stubs_and_the_dizhu_command(self, sources: Path) -> None:
        wheel, sdist = _build(sources)
        assert wheel.name == WHEEL
        files = _wheel_files(wheel)
        assert {"dizhu/cli.py", "dizhu/rules/cards.py", "dizhu/service/startup.py", "dizhu/testing.py"} <= files
        assert {"dizhu/conformance/rules_runner.py", "dizhu/conformance/protocol_runner.py"} <= files
        assert "dizhu/_engine.abi3.so" in files
        assert files >= SDK_FILES | STUB_FILES
        assert "dizhu/__init__.py" not in files  # a namespace package shared with the SDK
        assert "dizhu = dizhu.cli:main" in _entry_points(wheel)
        assert "dizhu/expert/bot.py" in files
        assert "expert = dizhu.expert.bot:ExpertBot" in _entry_points(wheel)  # the SDK's catalogue finds it
        with tarfile.open(sdist) as archive:
            names = archive.getnames()
        assert "dizhu-0.1.0/README.md" in names
        assert "dizhu-0.1.0/clients/python/dizhu/v1/table_pb2.py" in names
        assert {"dizhu-0.1.0/native/Cargo.lock", "dizhu-0.1.0/native/src/lib.rs", "dizhu-0.1.0/setup.py"} <= set(names)
        assert not [name for name in names if "/native/target/" in name]

    def test_its_wheel_installs_in_a_fresh_environment_and_uses_the_native_engine(
        self, sources: Path, tmp_path: Path
    ) -> None:
        (wheel,) = list((sources / "dist").glob("*.whl")) or _build(sources)[:1]
        _run(sys.executable, "-m", "venv", str(tmp_path / "venv"), cwd=tmp_path)
        python = tmp_path / "venv" / "bin" / "python"
        # The rules core needs nothing beyond the standard library: the wheel alone is enough for it.
        _run(str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel), cwd=tmp_path)
        check = (
            "from dizhu import engine; from dizhu.rules import THREE_PLAYER, legal_moves, parse_ranks; "
            "print(engine.backend(), len(legal_moves(parse_ranks('3456789'), None, THREE_PLAYER)))"
        )
        assert _run(str(python), "-c", check, cwd=tmp_path).split() == ["native", "13"]


class TestTheSdkAlone:
    def test_its_wheel_holds_the_sdk_and_stubs_only(self, sources: Path) -> None:
        wheel, _ = _build(sources / "clients" / "python")
        assert wheel.name == "dizhu_client-0.1.0-py3-none-any.whl"
        files = _wheel_files(wheel)
        assert files >= SDK_FILES | STUB_FILES
        assert not {name for name in files if name.startswith(("dizhu/rules/", "dizhu/service/", "dizhu/cli.py"))}
        assert "dizhu-bot = dizhu.client.command:main" in _entry_points(wheel)
