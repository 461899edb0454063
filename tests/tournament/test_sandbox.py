"""Confinement (``[sandbox]``): its command lines, its configuration, its refusal where it cannot run,
the referee's unix socket, and a confined tournament of well-behaved entrants of every kind.

(Hostile entrants: ``test_sandbox_hostile.py``.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dizhu.cli import build_parser
from dizhu.client import TableClient
from dizhu.config import config_from_args
from dizhu.tournament import load_config, run_tournament
from dizhu.tournament.cgroups import RunGroups
from dizhu.tournament.config import ConfigError, EntrantSpec, SandboxSpec
from dizhu.tournament.players import check_entrant
from dizhu.tournament.sandbox import (
    ENVIRONMENT,
    INSTALL,
    REFEREE_SOCKET,
    bwrap_arguments,
    environment,
    launcher_arguments,
)
from tests.support.referees import served_referee
from tests.support.sandbox import (
    add_sandbox,
    entrant_folder,
    processes_with,
    python_paths,
    require_bubblewrap,
    runner_cgroups,
)
from tests.support.tournaments import BOTS, toml_value, write_tournament

SPEC = SandboxSpec(memory_mib=100, processes=20, cpu_s=2.5, open_files=50, file_size_mib=3, tmp_mib=7)
SYSTEM = [("/usr", None), ("/bin", "usr/bin")]


def pairs(args: list[str], flag: str) -> list[tuple[str, str]]:
    """The (source, destination) of every ``flag SOURCE DEST`` in ``args``."""
    return [(args[i + 1], args[i + 2]) for i, arg in enumerate(args) if arg == flag]


class TestCommandLines:
    def test_bwrap_unshares_everything_and_shows_the_system_the_folder_and_the_socket_alone(self) -> None:
        args = bwrap_arguments(
            SPEC, ["./bot", "--fast"], folder=Path("/cup/alice"), system=SYSTEM, referee=Path("/run/r/7.sock")
        )
        assert args[0] == "bwrap"
        for flag in ("--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session"):
            assert flag in args
        assert args[args.index("--cap-drop") + 1] == "ALL"
        assert args[args.index("--uid") + 1] == args[args.index("--gid") + 1] == "65534"
        assert pairs(args, "--ro-bind") == [
            ("/usr", "/usr"),
            ("/cup/alice", "/cup/alice"),
            ("/run/r/7.sock", REFEREE_SOCKET),
        ]
        assert pairs(args, "--symlink") == [("usr/bin", "/bin")]
        assert "--bind" not in args
        tmpfs = [(args[i - 1], args[i + 1]) for i, arg in enumerate(args) if arg == "--tmpfs"]
        assert tmpfs == [(str(7 << 20), "/tmp"), (str(7 << 20), "/dev/shm")]  # all it may write, each --size'd
        assert args[args.index("--remount-ro") + 1] == "/dev"
        assert args[args.index("--chdir") + 1] == "/cup/alice"
        assert args[-3:] == ["--", "./bot", "--fast"]
        assert "--share-net" not in args

    def test_a_stdio_entrant_gets_no_socket_and_ro_paths_are_bound_read_only(self) -> None:
        spec = SandboxSpec(ro_paths=(Path("/opt/jdk"),))
        args = bwrap_arguments(spec, ["java", "Bot"], folder=Path("/cup/bob"), system=SYSTEM)
        assert REFEREE_SOCKET not in args
        assert ("/opt/jdk", "/opt/jdk") in pairs(args, "--ro-bind")

    def test_the_launcher_joins_the_groups_before_bwrap_with_the_per_process_limits(self) -> None:
        procs = [Path("/sys/fs/cgroup/memory/x/cgroup.procs"), Path("/sys/fs/cgroup/pids/x/cgroup.procs")]
        args = launcher_arguments(SPEC, procs, ["bwrap", "true"])
        assert args[:2] == ["/bin/sh", "-c"]
        assert args[4:7] == ["2", str(procs[0]), str(procs[1])]
        limits = args[args.index("prlimit") + 1 : args.index("--")]
        assert limits == ["--nofile=50", f"--fsize={3 << 20}", "--cpu=3", "--core=0"]
        assert args[-2:] == ["bwrap", "true"]

    def test_the_environment_is_the_allow_list_the_named_variables_and_the_game(self) -> None:
        runner = {"REDIS_URL": "redis://secret", "DIZHU_API_KEY": "k", "JAVA_HOME": "/opt/jdk", "PATH": "/root/bin"}
        spec = SandboxSpec(env=("JAVA_HOME", "NOT_SET"))
        env = environment(spec, {"DIZHU_ENTRANT": "alice"}, runner)
        assert env == {**ENVIRONMENT, "JAVA_HOME": "/opt/jdk", "DIZHU_ENTRANT": "alice"}


class TestConfig:
    def write(self, tmp_path: Path, entrant: str, sandbox: str = "[sandbox]\n", referee: str = "") -> Path:
        (tmp_path / "alice").mkdir(exist_ok=True)
        path = tmp_path / "cup.toml"
        path.write_text(
            f"{referee}\n[clock]\ndecision_s = 1\n"
            '[[entrants]]\nname = "h"\nbot = "heuristic"\n[[entrants]]\nname = "r"\nbot = "random"\n'
            f'[[entrants]]\nname = "alice"\n{entrant}\n{sandbox}'
        )
        return path

    def test_an_empty_table_confines_with_the_documented_defaults_and_folders_resolve(self, tmp_path: Path) -> None:
        config = load_config(self.write(tmp_path, 'folder = "alice"\nstdio = ["./bot"]'))
        assert config.sandbox == SandboxSpec()
        assert config.entrants[2].folder == tmp_path / "alice"

    def test_every_limit_is_settable_and_paths_are_the_files_folders(self, tmp_path: Path) -> None:
        (tmp_path / "venv").mkdir()
        table = (
            "[sandbox]\nmemory_mib = 100\nprocesses = 20\ncpu_s = 2.5\nopen_files = 50\nfile_size_mib = 3\n"
            'tmp_mib = 7\nro_paths = ["venv"]\nenv = ["JAVA_HOME"]\n'
        )
        config = load_config(self.write(tmp_path, 'folder = "alice"\nstdio = ["./bot"]', table))
        expected = SandboxSpec(100, 20, 2.5, 50, 3, 7, (tmp_path / "venv",), ("JAVA_HOME",))
        assert config.sandbox == expected

    def test_the_flag_confines_a_file_without_the_table(self, tmp_path: Path) -> None:
        path = self.write(tmp_path, 'folder = "alice"\nstdio = ["./bot"]', sandbox="")
        assert load_config(path).sandbox is None
        assert load_config(path, {"sandbox": True}).sandbox == SandboxSpec()

    @pytest.mark.parametrize(
        ("entrant", "sandbox", "referee", "message"),
        [
            ('stdio = ["./bot"]', "[sandbox]", "", "entrants.alice.folder: expected a folder of its own"),
            ('folder = "nowhere"\nstdio = ["./bot"]', "[sandbox]", "", "entrants.alice.folder"),
            ('folder = "alice"\nstdio = ["./bot"]', "[sandbox]\nmemory_mib = 0", "", "sandbox: expected limits"),
            ('folder = "alice"\nstdio = ["./bot"]', "[sandbox]\nswap = 1", "", "sandbox.swap: unknown key"),
            ('folder = "alice"\nstdio = ["./bot"]', '[sandbox]\nro_paths = ["gone"]', "", "sandbox.ro_paths"),
            (
                'folder = "alice"\ncommand = ["./bot"]',
                "[sandbox]",
                '[referee]\ntargets = ["10.0.0.1:50051"]',
                "referee.targets: expected embedded referees, or unix: targets",
            ),
        ],
    )
    def test_mistakes_are_refused_naming_the_key(
        self, tmp_path: Path, entrant: str, sandbox: str, referee: str, message: str
    ) -> None:
        with pytest.raises(ConfigError, match=message):
            load_config(self.write(tmp_path, entrant, sandbox, referee))


class TestPrograms:
    def test_a_program_its_sandbox_does_not_show_is_refused_before_any_game(self, tmp_path: Path) -> None:
        folder = entrant_folder(tmp_path, "alice", BOTS / "faulty_stdio_bot.py")
        entrant = EntrantSpec(name="alice", stdio=(sys.executable, "faulty_stdio_bot.py", "legal"), folder=folder)
        check_entrant(entrant, tmp_path)  # unconfined: the runner's interpreter is there
        with pytest.raises(
            ConfigError, match=r"entrants\.alice\.stdio: .*add a folder holding it to \[sandbox\] ro_paths"
        ):
            check_entrant(entrant, tmp_path, SandboxSpec())
        check_entrant(entrant, tmp_path, SandboxSpec(ro_paths=tuple(map(Path, python_paths()))))

    def test_a_bare_name_must_be_on_the_sandboxs_path(self, tmp_path: Path) -> None:
        folder = entrant_folder(tmp_path, "bob")
        check_entrant(EntrantSpec(name="bob", stdio=("sh", "-c", "true"), folder=folder), tmp_path, SandboxSpec())
        (folder / "mybot").write_text("#!/bin/sh\n")
        (folder / "mybot").chmod(0o755)
        spec = EntrantSpec(name="bob", stdio=("mybot",), folder=folder)
        with pytest.raises(ConfigError, match=r"is not on a confined process's PATH \(/usr/local/bin:/usr/bin:/bin\)"):
            check_entrant(spec, tmp_path, SandboxSpec())


class TestControlGroups:
    def test_groups_left_by_a_killed_runner_are_removed_by_the_next_and_its_own_at_its_end(self) -> None:
        dead = subprocess.Popen(["true"])  # a pid that runs no more
        dead.wait()
        first = RunGroups.create()
        stale = {c: path.parent / f"dizhu-tournament-{dead.pid}-abc123" for c, path in first.paths.items()}
        for path in stale.values():
            (path / "p1").mkdir(parents=True)  # as a runner killed mid-game leaves them: empty
        first.remove()
        second = RunGroups.create()
        group = second.new_process_group()
        group.limit(memory_bytes=64 << 20, processes=8)
        assert [path.exists() for path in stale.values()] == [False, False, False]
        assert all(path.is_dir() for path in group.paths.values())
        second.remove()
        assert [path.exists() for path in second.paths.values()] == [False, False, False]


class TestRefusedWhereItCannotRun:
    def test_without_bubblewrap_the_run_is_refused_at_start_with_the_reason_and_the_install_line(
        self, tmp_path: Path
    ) -> None:
        folder = entrant_folder(tmp_path, "alice", BOTS / "faulty_stdio_bot.py")
        path = tmp_path / "cup.toml"
        entrant = {"name": "alice", "folder": "alice", "stdio": [sys.executable, "faulty_stdio_bot.py", "legal"]}
        path.write_text(
            'output = "out"\n[[entrants]]\nname = "h"\nbot = "heuristic"\n[[entrants]]\nname = "r"\nbot = "random"\n'
            "[[entrants]]\n" + "\n".join(f"{k} = {toml_value(v)}" for k, v in entrant.items()) + "\n"
        )
        add_sandbox(path)  # its interpreter shown: what is missing is bubblewrap alone
        empty = tmp_path / "empty-path"
        empty.mkdir()
        done = subprocess.run(
            [sys.executable, "-m", "dizhu.cli", "tournament", str(path), "--sandbox", "--quiet"],
            env={**os.environ, "PATH": str(empty)},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 2, done.stderr
        assert "bwrap and prlimit not found on the PATH" in done.stderr
        assert INSTALL in done.stderr
        assert not (tmp_path / "out" / "games").exists()  # nothing played unconfined
        assert folder.is_dir()


class TestRefereeUnixSocket:
    async def test_the_referee_serves_the_sdk_on_a_unix_socket_beside_its_port(
        self, tmp_path: Path, redis_url: str
    ) -> None:
        socket = tmp_path / "referee.sock"
        with served_referee(redis_url, "unix", flags=["--unix-socket", str(socket)]) as target:
            async with TableClient(f"unix:{socket}") as over_socket, TableClient(target) as over_port:
                created = await over_socket.create_table(player_names=["a", "b", "c"])
                view = await over_port.for_seat(created.seat_tokens[0].token, created.table_id).get()
        assert view.table_id == created.table_id

    def test_one_socket_is_not_shared_by_workers(self) -> None:
        parsed = build_parser().parse_args(["serve", "--unix-socket", "/run/r.sock", "--workers", "2"])
        with pytest.raises(SystemExit):
            config_from_args(parsed)


class TestConfinedTournament:
    async def test_every_kind_of_entrant_plays_confined_on_embedded_referees_and_leaves_nothing(
        self, tmp_path: Path, redis_url: str
    ) -> None:
        require_bubblewrap()
        stdio = entrant_folder(tmp_path, "stdio-bot", BOTS / "faulty_stdio_bot.py")
        entrant_folder(tmp_path, "exec-bot", BOTS / "exec_bot.py")
        (tmp_path / "per-game").mkdir()
        seat = ["--table", "{table_id}", "--token", "{seat_token}"]
        entrants = [
            {"name": "heuristic", "bot": "heuristic"},
            # "fork": it leaves a child holding its pipes, which dies with the game here.
            {
                "name": "stdio-bot",
                "folder": "stdio-bot",
                "stdio": [sys.executable, str(stdio / "faulty_stdio_bot.py"), "fork"],
            },
            {
                "name": "per-game",
                "folder": "per-game",
                "command": [sys.executable, "-m", "dizhu.client", "--target", "{target}", *seat, "--bot", "random"],
            },
            {"name": "exec-bot", "folder": "exec-bot", "per_game": False, "command": [sys.executable, "exec_bot.py"]},
        ]
        path = write_tournament(
            tmp_path,
            entrants,
            referee="",
            redis_url=redis_url,
            referee_keys={"targets": []},
            concurrency=4,
            # A process starting, and playing, on a busy machine: no timeout may tell against confinement.
            clock={"decision_s": 3, "first_decision_s": 20, "time_bank_s": 30},
        )
        add_sandbox(path, memory_mib=256)
        config = load_config(path)
        summary = await run_tournament(config, live=False)
        assert (summary.progress.done, summary.progress.games) == (12, 12)
        for folder in sorted((summary.output / "games").iterdir()):
            record = json.loads((folder / "game.json").read_text())
            for entry in record["seats"]:
                assert entry["faults"] == {}, (folder.name, entry)
        exec_logs = "".join(log.read_text() for log in (summary.output / "games").glob("*/seat*-exec-bot.stderr.txt"))
        assert exec_logs.count(f"at unix:{REFEREE_SOCKET}: exit status 0") == 9  # a fresh process per game
        assert processes_with(str(stdio)) == []  # the forked children went with their games
        assert runner_cgroups() == []
