"""Confinement of entrant processes with bubblewrap (``[sandbox]``; docs/tournaments.md, "Confinement").

Each ``command`` and ``stdio`` entrant process of a confined tournament runs, for one game,
as ``bwrap`` (Debian's ``bubblewrap``, the sandbox Flatpak builds on) in new PID, mount,
IPC, UTS, network and user namespaces, seeing only:

* the system read-only (:data:`SYSTEM_PATHS`: ``/usr``, the libraries, the few files of
  ``/etc`` programs need -- not ``/etc`` itself, where secrets live), the ``ro_paths`` of
  ``[sandbox]``, and its own folder, read-only, at their own paths;
* a private ``/tmp`` of ``tmp_mib``, a fresh ``/proc`` (its own processes), ``/dev``'s usual
  nodes read-only and a private ``/dev/shm`` of ``tmp_mib``;
* for a gRPC entrant, its referee's unix socket at :data:`REFEREE_SOCKET` (stdio entrants:
  no network at all);
* an environment built from :data:`ENVIRONMENT` and the game, nothing else of the runner's.

Limits: memory, processes and CPU time through a control group of its own
(:mod:`dizhu.tournament.cgroups`, counted over every process it starts), open files and
file size through ``prlimit``, ``/tmp`` by the size of its tmpfs. A limit met ends the
process (:class:`Confined` watches), which its seat records as a crash naming the limit.

The command lines are pure functions (:func:`bwrap_arguments`, :func:`launcher_arguments`);
:class:`Sandbox` is what a runner opens once: it checks that bubblewrap runs here first, and
refuses the tournament (:class:`SandboxUnavailable`, with the reason and the install line)
when it does not -- never a silent run without it.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Final

from dizhu.tournament.cgroups import CgroupUnavailable, ProcessGroup, RunGroups
from dizhu.tournament.config import ConfigError, SandboxSpec
from dizhu.tournament.referees import referee_socket

__all__ = [
    "ENVIRONMENT",
    "INSTALL",
    "REFEREE_SOCKET",
    "SYSTEM_PATHS",
    "Confined",
    "Sandbox",
    "SandboxUnavailable",
    "bwrap_arguments",
    "launcher_arguments",
    "opened",
    "unreachable",
]

#: How an organiser installs what confinement needs (``prlimit`` is util-linux's, always there).
INSTALL: Final = "apt-get install bubblewrap"
#: What of the system every confined process sees, read-only, where it exists here.
SYSTEM_PATHS: Final = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc/alternatives",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/nsswitch.conf",
    "/etc/passwd",
    "/etc/group",
    "/etc/hosts",
    "/etc/ssl/certs",
)
#: The environment of every confined process (then the game's ``DIZHU_*`` and ``[sandbox] env``).
ENVIRONMENT: Final = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",  # noqa: S108 -- the sandbox's private tmpfs
    "TMPDIR": "/tmp",  # noqa: S108
    "LANG": "C.UTF-8",
}
#: Where a gRPC entrant finds its referee: ``DIZHU_TARGET`` is ``unix:`` this.
REFEREE_SOCKET: Final = "/run/dizhu/referee.sock"
#: The user and group a confined process is, inside its user namespace (nobody).
SANDBOX_ID: Final = "65534"
#: How often a confined process's counters are read.
WATCH_S: Final = 0.1
#: Joins the control groups named by the first arguments, then runs the rest.
_JOIN: Final = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"'
_MIB: Final = 1 << 20
#: The sandbox's own /tmp (a private tmpfs, not the host's).
_TMP: Final = "/tmp"  # noqa: S108


class SandboxUnavailable(ConfigError):
    """Confinement cannot run on this machine; the message says why and how to install it."""


def system_entries(paths: Sequence[str] = SYSTEM_PATHS) -> list[tuple[str, str | None]]:
    """The system paths that exist here: ``(path, None)`` to bind, ``(path, target)`` for a symlink."""
    entries: list[tuple[str, str | None]] = []
    for path in paths:
        if os.path.islink(path):
            entries.append((path, os.readlink(path)))
        elif os.path.exists(path):
            entries.append((path, None))
    return entries


def bwrap_arguments(
    spec: SandboxSpec,
    command: Sequence[str],
    *,
    folder: Path,
    system: Sequence[tuple[str, str | None]],
    referee: Path | None = None,
) -> list[str]:
    """``bwrap`` running ``command`` in ``folder`` confined as the module docstring says."""
    args = [
        "bwrap",
        "--unshare-all",  # pid, mount, ipc, uts, net (only a loopback of its own), cgroup
        "--unshare-user",
        "--uid", SANDBOX_ID,
        "--gid", SANDBOX_ID,
        "--disable-userns",  # no namespaces of its own inside: less of the kernel within reach
        "--cap-drop", "ALL",
        "--die-with-parent",  # the runner gone, the sandbox goes; its PID namespace takes every process along
        "--new-session",  # no terminal to push keystrokes into
        "--hostname", "dizhu-entrant",
    ]  # fmt: skip
    for path, target in system:
        args += ["--symlink", target, path] if target is not None else ["--ro-bind", path, path]
    tmp_size = str(spec.tmp_mib * _MIB)
    args += ["--proc", "/proc", "--size", tmp_size, "--tmpfs", _TMP]
    # /dev's nodes, read-only but for a /dev/shm like /tmp (POSIX shared memory, semaphores).
    args += ["--dev", "/dev", "--size", tmp_size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]  # noqa: S108
    for visible in (*spec.ro_paths, folder):
        args += ["--ro-bind", str(visible), str(visible)]
    if referee is not None:  # connecting needs no write access; read-only, nobody can chmod it
        args += ["--ro-bind", str(referee), REFEREE_SOCKET]
    return [*args, "--chdir", str(folder), "--", *command]


def launcher_arguments(spec: SandboxSpec, procs_files: Sequence[Path], bwrap: Sequence[str]) -> list[str]:
    """``bwrap`` started by a shell that first joins the control groups (before anything can fork),
    through ``prlimit`` setting the per-process limits."""
    return [
        "/bin/sh", "-c", _JOIN, "dizhu-sandbox", str(len(procs_files)), *map(str, procs_files),
        "prlimit",
        f"--nofile={spec.open_files}",
        f"--fsize={spec.file_size_mib * _MIB}",
        f"--cpu={math.ceil(spec.cpu_s)}",  # a backstop per process: the group's total is watched
        "--core=0",
        "--",
        *bwrap,
    ]  # fmt: skip


def environment(spec: SandboxSpec, game: Mapping[str, str], runner: Mapping[str, str]) -> dict[str, str]:
    """A confined process's whole environment: :data:`ENVIRONMENT`, ``[sandbox] env``, the game's."""
    passed = {name: runner[name] for name in spec.env if name in runner}
    return {**ENVIRONMENT, **passed, **game}


def unreachable(spec: SandboxSpec, folder: Path, program: str) -> str | None:
    """Why a confined process could not run ``program`` (its command's first word), or None.

    A bare name must be on the sandbox's ``PATH``; the program, and what its symlinks lead to,
    must lie in what the sandbox shows (the system, ``ro_paths``, the entrant's folder).
    """
    if os.sep not in program:
        found = shutil.which(program, path=ENVIRONMENT["PATH"])
        if found is None:
            return (
                f"is not on a confined process's PATH ({ENVIRONMENT['PATH']}): name it by its path, and add "
                "its folder to [sandbox] ro_paths"
            )
        path = Path(found)
    else:
        path = folder / program
    roots = [Path(root) for root in SYSTEM_PATHS] + [*spec.ro_paths, folder]
    for seen in (path, path.resolve()):
        if not any(seen.is_relative_to(root) for root in roots):
            return f"is {seen}, which its sandbox does not show: add a folder holding it to [sandbox] ro_paths"
    return None


class Confined:
    """One confined process: its control group, watched until it is closed."""

    def __init__(self, spec: SandboxSpec, group: ProcessGroup) -> None:
        self.spec = spec
        self.group = group
        #: The limit that ended it, once one did (e.g. ``memory limit 512 MiB``).
        self.verdict: str | None = None
        self._watch: asyncio.Task[None] | None = None

    def watch(self, pid: int) -> None:
        """Start watching the process ``pid`` (its ``bwrap``): a limit met kills everything in the group."""
        self._watch = asyncio.create_task(self._watching(pid), name=f"sandbox-watch-{pid}")

    async def _watching(self, pid: int) -> None:
        while self.verdict is None:
            await asyncio.sleep(WATCH_S)
            try:
                self.verdict = self._exceeded()
            except OSError:  # the group is gone: the process was closed
                return
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        self.group.kill()

    def _exceeded(self) -> str | None:
        counters = self.group.counters()
        if counters.oom_kills:
            return f"memory limit {self.spec.memory_mib} MiB"
        if counters.forks_refused:
            return f"process limit {self.spec.processes} (processes and threads)"
        if counters.cpu_s >= self.spec.cpu_s:
            return f"CPU limit {self.spec.cpu_s:g} s per game"
        return None

    def explain(self, returncode: int | None) -> str | None:
        """The limit that ended the process, read now (the kernel may have acted between two looks)."""
        if self.verdict is None:
            with contextlib.suppress(OSError):
                self.verdict = self._exceeded()
        if self.verdict is None and returncode is not None:  # bwrap exits 128 + the signal that ended its child
            if returncode - 128 == signal.SIGXFSZ:
                self.verdict = f"file size limit {self.spec.file_size_mib} MiB"
            elif returncode - 128 == signal.SIGXCPU:
                self.verdict = f"CPU limit {self.spec.cpu_s:g} s per game"
        return self.verdict

    async def close(self, returncode: int | None, timeout_s: float = 5.0) -> None:
        """Record the verdict, kill whatever is left in the group, and remove it."""
        self.explain(returncode)
        if self._watch is not None:
            self._watch.cancel()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            self.group.kill()
            if self.group.remove() or loop.time() > deadline:
                return
            await asyncio.sleep(0.02)


class Sandbox:
    """A runner's confinement: the limits, its control groups, its referees' sockets."""

    def __init__(self, spec: SandboxSpec, groups: RunGroups, socket_dir: Path) -> None:
        self.spec = spec
        self.groups = groups
        #: Where the embedded referees' unix sockets are (never seen by an entrant).
        self.socket_dir = socket_dir
        self._system = system_entries()

    def referee_socket(self, target: str) -> Path:
        """The unix socket of the referee ``target`` (an embedded one's, or a ``unix:`` target's path)."""
        if target.startswith("unix:"):
            return Path(target.removeprefix("unix:").removeprefix("//"))
        return referee_socket(self.socket_dir, target)

    def confine(
        self, command: Sequence[str], *, folder: Path, game: Mapping[str, str], target: str | None
    ) -> tuple[list[str], dict[str, str], Confined]:
        """The command line and environment that run ``command`` confined, and its :class:`Confined`.

        ``target``: the referee a gRPC entrant plays on (None: a stdio entrant, no socket);
        ``game``: the game's ``DIZHU_*`` variables (``DIZHU_TARGET`` is replaced by the socket).
        """
        group = self.groups.new_process_group()
        group.limit(memory_bytes=self.spec.memory_mib * _MIB, processes=self.spec.processes)
        socket = None if target is None else self.referee_socket(target)
        bwrap = bwrap_arguments(self.spec, command, folder=folder, system=self._system, referee=socket)
        env = environment(self.spec, game, os.environ)
        if socket is not None:
            env["DIZHU_TARGET"] = f"unix:{REFEREE_SOCKET}"
        return launcher_arguments(self.spec, group.procs_files, bwrap), env, Confined(self.spec, group)

    def close(self) -> None:
        self.groups.remove()
        shutil.rmtree(self.socket_dir, ignore_errors=True)


def _check_runs(spec: SandboxSpec) -> None:
    """A trial sandbox, so that what the kernel refuses (user namespaces, ...) is said now."""
    missing = [program for program in ("bwrap", "prlimit") if shutil.which(program) is None]
    if missing:
        raise SandboxUnavailable(f"[sandbox]: {' and '.join(missing)} not found on the PATH; install: {INSTALL}")
    with tempfile.TemporaryDirectory(prefix="dizhu-sandbox-check-") as folder:
        trial = bwrap_arguments(spec, ["true"], folder=Path(folder), system=system_entries())
        try:
            done = subprocess.run(trial, capture_output=True, timeout=30, check=False)  # noqa: S603
        except (OSError, subprocess.TimeoutExpired) as error:
            raise SandboxUnavailable(f"[sandbox]: bubblewrap could not run: {error}; install: {INSTALL}") from None
    if done.returncode != 0:
        reason = done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}"
        raise SandboxUnavailable(
            f"[sandbox]: bubblewrap cannot confine a process here ({reason}); it needs user namespaces "
            f"(sysctl kernel.unprivileged_userns_clone=1 where the runner is not root) and {INSTALL}"
        )


@contextlib.contextmanager
def opened(spec: SandboxSpec) -> Iterator[Sandbox]:
    """The runner's :class:`Sandbox`, checked (:class:`SandboxUnavailable`), removed at the end."""
    _check_runs(spec)
    try:
        groups = RunGroups.create()
    except CgroupUnavailable as error:
        raise SandboxUnavailable(f"[sandbox]: {error}") from None
    sandbox = Sandbox(spec, groups, Path(tempfile.mkdtemp(prefix="dizhu-referees-")))
    try:
        yield sandbox
    finally:
        sandbox.close()
