"""``python -m build`` makes a valid wheel and sdist of both packages, and ``twine check`` passes them.

The sources are copied to a fresh directory first (a build writes ``build/`` and
``*.egg-info`` next to them), and built without isolation, with the build tools of the test
environment: no index is needed. The wheel is built from the sdist, which so proves the
sdist complete.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_SKIP = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist", "node_modules")


def _run(*command: str, cwd: Path) -> str:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of what the two packages are built from."""
    tree = tmp_path_factory.mktemp("sources")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, tree / name)
    shutil.copytree(ROOT / "server", tree / "server", ignore=_SKIP)
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


SDK_FILES = {"dizhu/client/bot.py", "dizhu/client/command.py", "dizhu/client/__main__.py", "dizhu/client/py.typed"}
STUB_FILES = {"dizhu/v1/table_pb2.py", "dizhu/v1/table_pb2.pyi", "dizhu/v1/table_service_pb2_grpc.py"}


class TestTheWholeProject:
    def test_its_wheel_holds_server_sdk_and_stubs_and_the_dizhu_command(self, sources: Path) -> None:
        wheel, sdist = _build(sources)
        assert wheel.name == "dizhu-0.1.0-py3-none-any.whl"
        files = _wheel_files(wheel)
        assert {"dizhu/cli.py", "dizhu/rules/cards.py", "dizhu/service/startup.py", "dizhu/testing.py"} <= files
        assert {"dizhu/conformance/rules_runner.py", "dizhu/conformance/protocol_runner.py"} <= files
        assert files >= SDK_FILES | STUB_FILES
        assert "dizhu/__init__.py" not in files  # a namespace package shared with the SDK
        assert "dizhu = dizhu.cli:main" in _entry_points(wheel)
        with tarfile.open(sdist) as archive:
            names = archive.getnames()
        assert "dizhu-0.1.0/README.md" in names
        assert "dizhu-0.1.0/clients/python/dizhu/v1/table_pb2.py" in names


class TestTheSdkAlone:
    def test_its_wheel_holds_the_sdk_and_stubs_only(self, sources: Path) -> None:
        wheel, _ = _build(sources / "clients" / "python")
        assert wheel.name == "dizhu_client-0.1.0-py3-none-any.whl"
        files = _wheel_files(wheel)
        assert files >= SDK_FILES | STUB_FILES
        assert not {name for name in files if name.startswith(("dizhu/rules/", "dizhu/service/", "dizhu/cli.py"))}
        assert "dizhu-bot = dizhu.client.command:main" in _entry_points(wheel)
