"""The contract generates cleanly in every language, and its language options left the wire as it was.

Every ``.proto`` file names its Go import path, Java package, C# namespace, ... (what a
generator needs that the package alone does not give), the same in each file, so that
``protoc --go_out`` and ``buf generate`` work without ``M`` flags and Java gets top-level
classes in ``dizhu.v1``. ``contract-before-file-options.binpb`` is the contract as it was
before those options (``buf build --exclude-source-info``): ``buf breaking`` against it with
the FILE rules, less the rules about those very options, proves the options changed no
message, field, enum, service or name on the wire or in JSON.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from google.protobuf import descriptor_pb2

from dizhu.v1 import (
    cards_pb2,
    errors_pb2,
    events_pb2,
    replay_pb2,
    rules_service_pb2,
    table_pb2,
    table_service_pb2,
)

ROOT = Path(__file__).resolve().parents[2]
BEFORE = Path(__file__).with_name("contract-before-file-options.binpb")
MODULES = [cards_pb2, errors_pb2, events_pb2, replay_pb2, rules_service_pb2, table_pb2, table_service_pb2]
# The rules that compare the options this change set; every other FILE rule still applies.
OPTION_RULES = [
    "FILE_SAME_GO_PACKAGE",
    "FILE_SAME_JAVA_PACKAGE",
    "FILE_SAME_JAVA_MULTIPLE_FILES",
    "FILE_SAME_JAVA_OUTER_CLASSNAME",
    "FILE_SAME_CSHARP_NAMESPACE",
    "FILE_SAME_OBJC_CLASS_PREFIX",
    "FILE_SAME_PHP_NAMESPACE",
    "FILE_SAME_RUBY_PACKAGE",
]


def _buf() -> str:
    buf = Path(sys.executable).parent / "buf"
    assert buf.exists(), "the buf CLI is missing: pip install -e '.[test]' installs it (package buf-bin)"
    return str(buf)


@pytest.mark.parametrize("module", MODULES, ids=lambda module: module.DESCRIPTOR.name)
def test_every_file_names_its_package_in_every_language(module: ModuleType) -> None:
    options = module.DESCRIPTOR.GetOptions()
    stem = Path(module.DESCRIPTOR.name).stem
    assert options.go_package == "dizhu/clients/go/gen/dizhu/v1;dizhuv1"
    assert options.java_package == "dizhu.v1"
    assert options.java_multiple_files is True
    assert options.java_outer_classname == "".join(part.title() for part in stem.split("_")) + "Proto"
    assert options.csharp_namespace == "Dizhu.V1"
    assert options.objc_class_prefix == "DVX"
    assert options.php_namespace == "Dizhu\\V1"
    assert options.ruby_package == "Dizhu::V1"


def test_the_options_changed_nothing_on_the_wire_or_in_names() -> None:
    config = '{"version":"v2","breaking":{"use":["FILE"],"except":[' + ",".join(f'"{r}"' for r in OPTION_RULES) + "]}}"
    result = subprocess.run(
        [_buf(), "breaking", "--against", str(BEFORE), "--config", config],
        cwd=ROOT / "proto",
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_buf_breaking_against_the_options_alone_would_have_noticed_them() -> None:
    """The check above is not blind: the option rules it leaves out do see the new options."""
    result = subprocess.run(
        [_buf(), "breaking", "--against", str(BEFORE)],
        cwd=ROOT / "proto",
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode != 0
    assert 'File option "go_package" changed from "" to' in result.stdout


def _java_outer_class_before(file: descriptor_pb2.FileDescriptorProto) -> str:
    """The outer class protoc's Java generator named the file without java_outer_classname: its
    name in CamelCase, with ``OuterClass`` added when a message, enum or service has that name."""
    outer = "".join(part.title() for part in Path(file.name).stem.split("_"))
    taken = {*(message.name for message in file.message_type), *(enum.name for enum in file.enum_type)}
    return outer + "OuterClass" if outer in taken | {service.name for service in file.service} else outer


def test_the_docs_map_the_java_and_objective_c_names_the_options_changed() -> None:
    """java_multiple_files moved every message and enum out of its file's outer class, and
    java_outer_classname renamed that class; objc_class_prefix prefixed every Objective-C class:
    docs/api.md gives existing clients the mapping, file by file."""
    api = " ".join((ROOT / "docs" / "api.md").read_text().split())  # as read, not as wrapped
    before = descriptor_pb2.FileDescriptorSet.FromString(BEFORE.read_bytes())
    now = {module.DESCRIPTOR.name: module.DESCRIPTOR.GetOptions() for module in MODULES}
    for file in before.file:
        if file.name in now:
            assert not file.options.java_multiple_files
            old, new = _java_outer_class_before(file), now[file.name].java_outer_classname
            assert f"`dizhu.v1.{old}` → `dizhu.v1.{new}`" in api, f"docs/api.md does not map {file.name}'s {old}"
    assert "`dizhu.v1.Table.TableView` → `dizhu.v1.TableView`" in api
    assert f"`TableView` → `{now['dizhu/v1/table.proto'].objc_class_prefix}TableView`" in api
    assert "in any name" not in api
