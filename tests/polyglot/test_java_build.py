"""The Java bot builds the standard way: its generators come from Maven Central, nothing from the machine.

protoc and protoc-gen-grpc-java are the protobuf Maven plugin's artifacts at the versions of
their runtimes (``os.detected.classifier`` picks the executable), so the build works wherever
a JDK and Maven do, not only where Debian's ``grpc_java_plugin`` is installed. The suite's
build of the bot (``polyglot_builds.build_java``) asks for no more than ``java`` and ``mvn``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from tests.support.polyglot_builds import CLIENTS

POM = CLIENTS / "java" / "pom.xml"
NS = {"m": "http://maven.apache.org/POM/4.0.0"}


def _plugin(project: ET.Element, artifact: str) -> ET.Element | None:
    for plugin in project.iterfind("m:build/m:plugins/m:plugin", NS):
        if plugin.findtext("m:artifactId", namespaces=NS) == artifact:
            return plugin
    return None


def test_the_stubs_are_generated_by_the_protobuf_maven_plugin_with_artifacts_from_maven_central() -> None:
    project = ET.parse(POM).getroot()
    protobuf = _plugin(project, "protobuf-maven-plugin")
    assert protobuf is not None
    configuration = protobuf.find("m:configuration", NS)
    assert configuration is not None
    assert configuration.findtext("m:protocArtifact", namespaces=NS) == (
        "com.google.protobuf:protoc:${protobuf.version}:exe:${os.detected.classifier}"
    )
    assert configuration.findtext("m:pluginArtifact", namespaces=NS) == (
        "io.grpc:protoc-gen-grpc-java:${grpc.version}:exe:${os.detected.classifier}"
    )
    goals = {goal.text for goal in protobuf.iterfind("m:executions/m:execution/m:goals/m:goal", NS)}
    assert goals == {"compile", "compile-custom"}
    # Nothing the machine must provide: no executable run by path, no local plugin.
    assert _plugin(project, "exec-maven-plugin") is None
    text = POM.read_text()
    assert "grpc_java_plugin" not in text
    assert "<protocExecutable>" not in text
