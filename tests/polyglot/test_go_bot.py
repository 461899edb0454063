"""clients/go's stubs: ``buf generate`` (proto/buf.gen.yaml) as the bot's build uses it, and without managed mode.

(The Go bot itself plays in test_polyglot_bots.py and test_mixed_tables.py.)
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from tests.support.polyglot_builds import BUF, BUILD, ROOT


def test_go_stubs_generate_without_managed_mode_or_import_path_flags(go_bot: list[str], tmp_path: Path) -> None:
    """go_package in the files is enough: a plain template, as with ``protoc --go_out``, needs no M flags."""
    template = json.dumps(
        {
            "version": "v2",
            "plugins": [
                {"local": "protoc-gen-go", "out": str(tmp_path), "opt": "paths=source_relative"},
                {"local": "protoc-gen-go-grpc", "out": str(tmp_path), "opt": "paths=source_relative"},
            ],
        }
    )
    path = f"{BUILD / 'go' / 'bin'}{os.pathsep}{os.environ['PATH']}"
    result = subprocess.run(
        [str(BUF), "generate", "--template", template],
        cwd=ROOT / "proto",
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "package dizhuv1\n" in (tmp_path / "dizhu" / "v1" / "table_service_grpc.pb.go").read_text()


def test_the_readmes_protoc_fallback_generates_the_stubs_in_a_fresh_checkout(go_bot: list[str], tmp_path: Path) -> None:
    """clients/go/README.md's step 2 without buf, run as written from a clients/go with no gen/ folder."""
    readme = " ".join((ROOT / "clients" / "go" / "README.md").read_text().split())
    (fallback,) = re.findall(r"Without `buf`, step 2's generation is `([^`]+)`", readme)
    client = tmp_path / "clients" / "go"
    client.mkdir(parents=True)
    (tmp_path / "proto").symlink_to(ROOT / "proto")
    path = f"{BUILD / 'go' / 'bin'}{os.pathsep}{os.environ['PATH']}"
    result = subprocess.run(
        ["sh", "-c", fallback],
        cwd=client,
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "package dizhuv1\n" in (client / "gen" / "dizhu" / "v1" / "table_service_grpc.pb.go").read_text()
