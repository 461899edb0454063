"""Builds of the example bots in clients/go, clients/java, clients/cpp and clients/rust.

Each is built with its language's ordinary toolchain, into ``build/polyglot/<language>``
(gitignored), where the toolchain's own caching keeps a second build of unchanged sources
to a few seconds (the Rust one takes minutes the first time: it is built once per CI run).
A file lock (``tests.support.shared_builds``) serialises the builds of parallel test workers. A
missing toolchain fails the test with the way to install it; it never skips.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.shared_builds import exclusive

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "clients"
BUILD = ROOT / "build" / "polyglot"
BUF = ROOT / ".venv" / "bin" / "buf"

# Versions of the Go code generators (pinned like the go.mod requirements).
PROTOC_GEN_GO = "google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12"
PROTOC_GEN_GO_GRPC = "google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2"


def require(tool: str, how: str) -> str:
    """The tool's path on PATH; fails the test, saying how to install it, when there is none."""
    path = shutil.which(tool)
    if path is None:
        pytest.fail(f"{tool} is not on PATH: {how}", pytrace=False)
    return path


def run(command: Sequence[str], *, cwd: Path, env: dict[str, str] | None = None, timeout: int = 900) -> None:
    """Runs a build step; fails the test with its output when it fails."""
    result = subprocess.run(
        list(command),
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(
            f"{' '.join(command)} (in {cwd}) failed ({result.returncode}):\n"
            f"{result.stdout[-4000:]}\n{result.stderr[-6000:]}",
            pytrace=False,
        )


@contextmanager
def build_lock(language: str) -> Iterator[Path]:
    """``build/polyglot/<language>``, held by this process alone until the block ends."""
    folder = BUILD / language
    folder.mkdir(parents=True, exist_ok=True)
    with exclusive(f"polyglot/{language}"):
        yield folder


def build_go() -> list[str]:
    """clients/go: the generators by ``go install``, stubs by ``buf generate`` (proto/buf.gen.yaml), ``go build``."""
    go = require("go", "install Go >= 1.26 (https://go.dev/doc/install; clients/go/README.md)")
    with build_lock("go") as folder:
        gobin = folder / "bin"
        for package in (PROTOC_GEN_GO, PROTOC_GEN_GO_GRPC):
            if not (gobin / package.split("@")[0].rsplit("/", 1)[1]).exists():
                run([go, "install", package], cwd=CLIENTS / "go", env={"GOBIN": str(gobin)})
        path = f"{gobin}{os.pathsep}{os.environ.get('PATH', '')}"
        run([str(BUF), "generate"], cwd=ROOT / "proto", env={"PATH": path})
        binary = folder / "dizhu-bot"
        run([go, "build", "-o", str(binary), "./cmd/dizhu-bot"], cwd=CLIENTS / "go")
    return [str(binary)]


def newer_than_sources(output: Path, *sources: Path) -> bool:
    """Whether ``output`` exists and no file under ``sources`` changed since it was built (as make decides)."""
    if not output.exists():
        return False
    built = output.stat().st_mtime
    files = (path for source in sources for path in ([source] if source.is_file() else source.rglob("*")))
    return all(path.stat().st_mtime <= built for path in files if path.is_file())


JAVA_HOW = "install a JDK >= 17 and Maven (apt-get install default-jdk-headless maven; clients/java/README.md)"


#: The bot's JVM in the tests: the client compiler alone and the serial collector. A bot of a
#: game or two spends most of its CPU starting up and compiling, and C2 with a parallel collector
#: costs about twice as much CPU on a two-core machine (Maven's own JVM is set the same way in
#: clients/java/.mvn/jvm.config).
QUICK_JVM = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")


def build_java() -> list[str]:
    """clients/java: ``mvn package`` (protoc and protoc-gen-grpc-java from Maven Central), a shaded jar."""
    java = require("java", JAVA_HOW)
    mvn = require("mvn", JAVA_HOW)
    project = CLIENTS / "java"
    jar = project / "target" / "dizhu-bot.jar"
    with build_lock("java"):
        if not newer_than_sources(jar, project / "pom.xml", project / "src", ROOT / "proto" / "dizhu"):
            run([mvn, "-q", "-B", "package"], cwd=project)
    return [java, *QUICK_JVM, "-jar", str(jar)]


DEBIAN_CPP = (
    "install a C++17 compiler, CMake and Debian's gRPC C++ packages "
    "(apt-get install g++ cmake pkg-config libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc; "
    "clients/cpp/README.md)"
)


def build_cpp() -> list[str]:
    """clients/cpp: CMake (stubs by protoc and grpc_cpp_plugin, google.rpc from third_party/googleapis).

    Without optimisation or debug information (the CMake project's own default is Release): the
    bot's speed does not matter here, and the generated stubs compile in half the time (24 against
    47 CPU seconds)."""
    cmake = require("cmake", DEBIAN_CPP)
    for tool in ("c++", "pkg-config", "protoc", "grpc_cpp_plugin"):
        require(tool, DEBIAN_CPP)
    with build_lock("cpp") as folder:
        if not (folder / "CMakeCache.txt").exists():
            generator = ["-G", "Ninja"] if shutil.which("ninja") else []
            unoptimised = ["-DCMAKE_BUILD_TYPE=Debug", "-DCMAKE_CXX_FLAGS_DEBUG=-O0"]
            run([cmake, "-S", str(CLIENTS / "cpp"), "-B", str(folder), *generator, *unoptimised], cwd=CLIENTS / "cpp")
        run([cmake, "--build", str(folder), "-j", "2"], cwd=CLIENTS / "cpp")
    return [str(folder / "dizhu-bot")]


RUST_HOW = (
    "install Rust with rustup (https://rustup.rs; cargo in ~/.cargo/bin) and Debian's protobuf-compiler "
    "(apt-get install protobuf-compiler; clients/rust/README.md)"
)


def build_rust() -> list[str]:
    """clients/rust: ``cargo build`` (tonic; stubs by tonic-prost-build in build.rs, with protoc).

    The development profile without debug information: the bot's speed does not matter here, and
    it builds in two thirds of the release build's time (85 against 122 CPU seconds), and without
    incremental compilation, whose records a build made once never reads (83 against 91), in four
    codegen units a crate rather than the profile's 256 (65 against 75 CPU seconds: each unit is
    an LLVM module of its own, with its own copies of the functions marked inline). The target
    folder is kept in build/polyglot/rust-target: the first build takes minutes, a later one of
    unchanged sources, a second."""
    path = f"{Path.home() / '.cargo' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    cargo = shutil.which("cargo", path=path)
    if cargo is None:
        pytest.fail(f"cargo is not on PATH: {RUST_HOW}", pytrace=False)
    protoc = require("protoc", RUST_HOW)
    target = BUILD / "rust-target"
    with build_lock("rust"):
        run(
            [cargo, "build", "--quiet", "--target-dir", str(target)],
            cwd=CLIENTS / "rust",
            env={
                "PROTOC": protoc,
                "PATH": path,
                "CARGO_PROFILE_DEV_DEBUG": "false",
                "CARGO_PROFILE_DEV_CODEGEN_UNITS": "4",
                "CARGO_INCREMENTAL": "0",
            },
            timeout=1800,
        )
    return [str(target / "debug" / "dizhu-bot")]
