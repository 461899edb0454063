"""Control groups of confined entrant processes: memory, processes and CPU time, counted together.

A confined process (:mod:`dizhu.tournament.sandbox`) is put, before it runs anything, into
a group of its own under the runner's group, with the group's limits: the memory and the
number of processes and threads of everything it starts are bounded together, its CPU time
(children's included) is counted, and every process in it can be found and killed.

This uses the cgroup **v1** controllers ``memory``, ``pids`` and ``cpuacct``, mounted
writable (``/sys/fs/cgroup/<controller>``, as Debian and most container hosts with v1 do).
A machine with cgroup v2 alone is refused with that reason: its delegation rules (no
process in a group whose controllers are delegated) would move the runner itself, which is
not done yet.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import secrets
import signal
from collections.abc import Iterable
from pathlib import Path
from typing import Final

__all__ = ["CONTROLLERS", "CgroupUnavailable", "Counters", "ProcessGroup", "RunGroups"]

#: The v1 controllers used, and what each bounds or counts.
CONTROLLERS: Final = ("memory", "pids", "cpuacct")
_MOUNTINFO: Final = Path("/proc/self/mountinfo")
_OWN: Final = Path("/proc/self/cgroup")


class CgroupUnavailable(Exception):
    """The controllers cannot be used here; the message says why."""


@dataclasses.dataclass(frozen=True, slots=True)
class Counters:
    """What a group has met so far."""

    #: Processes the kernel killed for the memory limit.
    oom_kills: int
    #: Forks (or new threads) refused for the process limit.
    forks_refused: int
    #: CPU time of every process that ran in it, seconds.
    cpu_s: float


def _mounts() -> dict[str, tuple[Path, str]]:
    """Per v1 controller: its mount point and the hierarchy path mounted there."""
    found: dict[str, tuple[Path, str]] = {}
    for line in _MOUNTINFO.read_text().splitlines():
        fields, _, rest = line.partition(" - ")
        parts, extra = fields.split(), rest.split()
        if len(extra) < 3 or extra[0] != "cgroup":
            continue
        for controller in CONTROLLERS:
            if controller in extra[2].split(","):
                found.setdefault(controller, (Path(parts[4]), parts[3]))
    return found


def _own_paths() -> dict[str, str]:
    """Per v1 controller: this process's group, as a path of its hierarchy."""
    own: dict[str, str] = {}
    for line in _OWN.read_text().splitlines():
        _, names, path = line.split(":", 2)
        for name in names.split(","):
            own[name] = path
    return own


def _write(path: Path, value: str) -> None:
    path.write_text(value)


class ProcessGroup:
    """The groups (one per controller) of one confined process."""

    def __init__(self, paths: dict[str, Path]) -> None:
        self.paths = paths

    @property
    def procs_files(self) -> list[Path]:
        """The files a process writes its pid to, to join the groups."""
        return [path / "cgroup.procs" for path in self.paths.values()]

    def limit(self, *, memory_bytes: int, processes: int) -> None:
        memory = self.paths["memory"]
        _write(memory / "memory.limit_in_bytes", str(memory_bytes))
        if (memory / "memory.memsw.limit_in_bytes").exists():  # no swapping out of the limit
            _write(memory / "memory.memsw.limit_in_bytes", str(memory_bytes))
        _write(self.paths["pids"] / "pids.max", str(processes))

    def counters(self) -> Counters:
        oom = _keyed(self.paths["memory"] / "memory.oom_control").get("oom_kill", 0)
        refused = _keyed(self.paths["pids"] / "pids.events").get("max", 0)
        usage_ns = int((self.paths["cpuacct"] / "cpuacct.usage").read_text() or 0)
        return Counters(oom_kills=oom, forks_refused=refused, cpu_s=usage_ns / 1e9)

    def pids(self) -> set[int]:
        found: set[int] = set()
        for path in self.procs_files:
            with contextlib.suppress(OSError):
                found.update(int(pid) for pid in path.read_text().split())
        return found

    def kill(self) -> None:
        """SIGKILL every process in the groups (a fork racing with it is caught by the next call)."""
        for pid in self.pids():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

    def remove(self) -> bool:
        """Remove the groups once empty; False if a process is still in one."""
        removed = True
        for path in self.paths.values():
            try:
                path.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                removed = False
        return removed


def _keyed(path: Path) -> dict[str, int]:
    values: dict[str, int] = {}
    for line in path.read_text().splitlines():
        key, _, value = line.partition(" ")
        with contextlib.suppress(ValueError):
            values[key] = int(value)
    return values


class RunGroups:
    """A runner's parent groups, one per controller, under its own; a :class:`ProcessGroup` per process."""

    def __init__(self, paths: dict[str, Path]) -> None:
        self.paths = paths
        self._made = 0

    @classmethod
    def create(cls, name: str = "dizhu-tournament") -> RunGroups:
        """Parent groups named ``name-<pid>-<random>``; :class:`CgroupUnavailable` if they cannot be made.

        Empty groups a runner killed with SIGKILL left beside them (named after a pid that no
        longer runs) are removed first."""
        mounts = _mounts()
        missing = [controller for controller in CONTROLLERS if controller not in mounts]
        if missing:
            v2 = " (this machine mounts cgroup v2, not supported yet)" if _has_v2_only() else ""
            raise CgroupUnavailable(
                f"the cgroup v1 controller(s) {', '.join(missing)} are not mounted{v2}: memory, processes and CPU "
                "time cannot be bounded"
            )
        own = _own_paths()
        paths: dict[str, Path] = {}
        leaf = f"{name}-{os.getpid()}-{secrets.token_hex(3)}"
        try:
            for controller, (mount, root) in mounts.items():
                relative = own.get(controller, "/")
                relative = relative[len(root) :] if root != "/" and relative.startswith(root) else relative
                path = mount / relative.lstrip("/") / leaf
                _remove_stale(path.parent, name)
                path.mkdir()
                paths[controller] = path
        except OSError as error:
            RunGroups(paths).remove()
            raise CgroupUnavailable(
                f"cannot make a control group in {error.filename}: {error.strerror} (the runner needs write access to "
                "the cgroup v1 memory, pids and cpuacct hierarchies, e.g. as root)"
            ) from None
        return cls(paths)

    def new_process_group(self) -> ProcessGroup:
        self._made += 1
        paths = {controller: path / f"p{self._made}" for controller, path in self.paths.items()}
        for path in paths.values():
            path.mkdir()
        return ProcessGroup(paths)

    def remove(self) -> None:
        for path in self.paths.values():
            for child in _children(path):
                with contextlib.suppress(OSError):
                    child.rmdir()
            with contextlib.suppress(OSError):
                path.rmdir()


def _children(path: Path) -> Iterable[Path]:
    with contextlib.suppress(OSError):
        yield from (child for child in path.iterdir() if child.is_dir())


def _remove_stale(parent: Path, name: str) -> None:
    """Remove ``parent``'s empty groups of runners (``name-<pid>-...``) whose pid runs no more."""
    pattern = re.compile(re.escape(name) + r"-(\d+)-[0-9a-f]+")
    for group in _children(parent):
        found = pattern.fullmatch(group.name)
        if found is None or Path(f"/proc/{found[1]}").exists():
            continue
        for child in _children(group):
            with contextlib.suppress(OSError):  # a group still holding a process stays
                child.rmdir()
        with contextlib.suppress(OSError):
            group.rmdir()


def _has_v2_only() -> bool:
    return Path("/sys/fs/cgroup/cgroup.controllers").exists()
