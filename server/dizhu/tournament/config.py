"""A tournament's description: one TOML file, command-line overrides on top (docs/tournaments.md).

Everything is checked here, before a referee is started or a game claimed; a mistake is a
:class:`ConfigError` naming the key and what is expected. Paths and commands are kept as
written: entrant processes start in :attr:`TournamentConfig.base_dir` (the file's folder).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from dizhu.client import table_settings
from dizhu.client.bots import BOT_KINDS
from dizhu.config.settings import REDIS_URL_EXPECTED, is_redis_url
from dizhu.rules.variants import VARIANTS

__all__ = [
    "BUNDLED_BOTS",
    "DEFAULT_ENTRANTS",
    "ClockSpec",
    "ConfigError",
    "EntrantSpec",
    "SandboxSpec",
    "TournamentConfig",
    "load_config",
]

#: The bundled bots, by the name an entrant's ``bot`` key gives (``expert:200ms``: with its options).
BUNDLED_BOTS: Final = tuple(BOT_KINDS)
FORMATS: Final = ("duplicate", "random")
SEATINGS: Final = ("all", "rotations")
TIMEOUT_POLICIES: Final = tuple(table_settings.TIMEOUT_POLICIES)
_NAME: Final = re.compile(r"[A-Za-z0-9._-]{1,32}")
_MODULE_CLASS: Final = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")


class ConfigError(ValueError):
    """The tournament file or an override is wrong; the message names the key."""


@dataclasses.dataclass(frozen=True, slots=True)
class EntrantSpec:
    """One entrant: exactly one of ``bot``, ``command`` (a gRPC executable) or ``stdio``."""

    name: str
    #: A bundled bot (``expert``, ``heuristic``, ``random``) or ``module:Class`` of a ``dizhu.client.Bot``.
    bot: str | None = None
    #: An executable that plays through gRPC itself (docs/tournaments.md, "gRPC executables").
    command: tuple[str, ...] = ()
    #: An executable speaking the stdio protocol ``dizhu.stdio/v1``.
    stdio: tuple[str, ...] = ()
    #: For ``command``: a process per game (True) or one process for many games (False).
    per_game: bool = True
    #: The folder its process starts in (None: the tournament file's); under ``[sandbox]`` the
    #: only one of the organiser's it sees, read-only, and required.
    folder: Path | None = None

    @property
    def kind(self) -> str:
        """``"bot"``, ``"grpc"`` or ``"stdio"``."""
        if self.bot is not None:
            return "bot"
        return "grpc" if self.command else "stdio"

    @property
    def is_process(self) -> bool:
        return self.bot is None


@dataclasses.dataclass(frozen=True, slots=True)
class ClockSpec:
    """The turn clock of every table (``dizhu.v1.ClockSettings``); 0 s: no clock."""

    decision_s: float = 5.0
    first_decision_s: float = 0.0
    time_bank_s: float = 0.0
    timeout_policy: str = "auto_play"


@dataclasses.dataclass(frozen=True, slots=True)
class SandboxSpec:
    """The ``[sandbox]`` table: how every ``command`` and ``stdio`` entrant process is confined
    (:mod:`dizhu.tournament.sandbox`; docs/tournaments.md, "Confinement"). Limits hold per process
    and game: a confined process lives for one game."""

    #: Memory of all its processes together (cgroup), MiB.
    memory_mib: int = 512
    #: Processes and threads together (cgroup), its sandbox's own two included.
    processes: int = 128
    #: CPU time of all its processes together, seconds per game.
    cpu_s: float = 60.0
    #: Open files per process (RLIMIT_NOFILE).
    open_files: int = 256
    #: The largest file a process may write, MiB (RLIMIT_FSIZE).
    file_size_mib: int = 64
    #: Its private writable ``/tmp``, MiB.
    tmp_mib: int = 64
    #: Further folders or files it sees read-only, at the same path (an interpreter, a virtualenv, a JDK).
    ro_paths: tuple[Path, ...] = ()
    #: Names of the runner's environment variables passed on (beyond the documented allow-list).
    env: tuple[str, ...] = ()


#: Entrants of a tournament given no file: the two bundled strategies, random twice.
DEFAULT_ENTRANTS: Final = (
    EntrantSpec(name="heuristic", bot="heuristic"),
    EntrantSpec(name="random", bot="random"),
    EntrantSpec(name="random-b", bot="random"),
)


@dataclasses.dataclass(frozen=True, slots=True)
class TournamentConfig:
    """Everything a runner needs; see docs/tournaments.md for each key."""

    name: str = "bundled"
    variant: str = "3p"
    format: str = "duplicate"
    deal_sets: int = 20
    seatings: str = "all"
    #: Line-ups per deal set when there are more entrants than seats; 0: every line-up.
    lineups_per_set: int = 0
    seed: str = "dizhu"
    spring: bool = False
    entrants: tuple[EntrantSpec, ...] = DEFAULT_ENTRANTS
    clock: ClockSpec = ClockSpec()
    #: Games one runner plays at once.
    concurrency: int = 6
    output: Path = Path("tournament-results")
    #: A referee's HTTP address serving the web table (``http://host:8080``): results link each
    #: game to its replay viewer. None: links to the saved replay files only.
    viewer_url: str | None = None
    #: External referees (``host:port``); empty: start ``embedded_referees`` of our own.
    referees: tuple[str, ...] = ()
    embedded_referees: int = 1
    #: The ``x-api-key`` for CreateTable on external referees (env ``DIZHU_API_KEY``).
    api_key: str | None = None
    #: External referees serve TLS: checked against the system's authorities, or ``tls_ca`` (PEM).
    tls: bool = False
    tls_ca: Path | None = None
    #: The Redis holding the schedule and results; None: REDIS_URL, else the embedded one.
    redis_url: str | None = None
    key_prefix: str = "dizhu"
    #: Further ``dizhu serve`` flags for the embedded referees.
    serve_args: tuple[str, ...] = ()
    #: How long a claimed game stays another runner's before it may be taken over.
    lease_s: float = 15.0
    #: A game still running after this long is closed by the runner (its round abandoned).
    game_timeout_s: float = 600.0
    #: Bytes of standard error kept per entrant process and game (head and tail).
    stderr_cap_bytes: int = 64 * 1024
    #: Where entrant processes start (the tournament file's folder).
    base_dir: Path = Path()
    #: Confine every ``command`` and ``stdio`` entrant process; None: they run as the runner's children.
    sandbox: SandboxSpec | None = None

    @property
    def players(self) -> int:
        return VARIANTS[self.variant].players

    @property
    def uses_tls(self) -> bool:
        return self.tls or self.tls_ca is not None

    def tls_environment(self) -> dict[str, str]:
        """What tells a gRPC entrant's process how to reach the referee: ``DIZHU_TLS`` (``1``) and
        ``DIZHU_TLS_CA`` (the authority's file) when the referees serve TLS; nothing in plaintext."""
        if not self.uses_tls:
            return {}
        return {"DIZHU_TLS": "1", **({"DIZHU_TLS_CA": str(self.tls_ca)} if self.tls_ca is not None else {})}

    def seed_bytes(self) -> bytes:
        """The tournament seed: 64 hex digits as written, any other text through SHA-256."""
        if re.fullmatch(r"[0-9a-fA-F]{64}", self.seed):
            return bytes.fromhex(self.seed)
        return hashlib.sha256(self.seed.encode()).digest()

    def fingerprint(self) -> str:
        """SHA-256 of what decides the schedule and the games (not where or how fast they run)."""
        decisive = {
            "variant": self.variant,
            "format": self.format,
            "deal_sets": self.deal_sets,
            "seatings": self.seatings,
            "lineups_per_set": self.lineups_per_set,
            "seed": self.seed_bytes().hex(),
            "spring": self.spring,
            "entrants": [entrant.name for entrant in self.entrants],
            "clock": dataclasses.asdict(self.clock),
        }
        return hashlib.sha256(json.dumps(decisive, sort_keys=True).encode()).hexdigest()

    def check(self) -> TournamentConfig:
        """Self, if consistent; else :class:`ConfigError`."""
        _expect(bool(_NAME.fullmatch(self.name)), "name", "1..32 characters of A-Z a-z 0-9 . _ -")
        _expect(self.variant in VARIANTS, "variant", "'3p' or '4p'")
        _expect(self.format in FORMATS, "format", " or ".join(FORMATS))
        _expect(self.seatings in SEATINGS, "seatings", " or ".join(SEATINGS))
        _expect(self.deal_sets >= 1, "deal_sets", "at least 1")
        _expect(self.lineups_per_set >= 0, "lineups_per_set", "0 (every line-up) or more")
        _expect(self.concurrency >= 1, "concurrency", "at least 1")
        _expect(self.embedded_referees >= 1, "embedded_referees", "at least 1")
        _expect(
            not self.uses_tls or bool(self.referees),
            "referee.tls, referee.tls_ca",
            "external referees (referee.targets, --referee) to reach over TLS: the embedded ones speak plaintext",
        )
        _expect(self.redis_url is None or is_redis_url(self.redis_url), "referee.redis_url", REDIS_URL_EXPECTED)
        _expect(self.lease_s > 0 and self.game_timeout_s > 0, "lease_s, game_timeout_s", "positive")
        _expect(self.stderr_cap_bytes >= 0, "stderr_cap_kib", "0 or more")
        _expect(self.clock.timeout_policy in TIMEOUT_POLICIES, "clock.timeout_policy", " or ".join(TIMEOUT_POLICIES))
        _expect(min(dataclasses.astuple(self.clock)[:3]) >= 0, "clock", "durations of 0 s or more")
        names = [entrant.name for entrant in self.entrants]
        _expect(len(set(names)) == len(names), "entrants", "distinct names")
        for entrant in self.entrants:
            where = f"entrants.{entrant.name}"
            _expect(bool(_NAME.fullmatch(entrant.name)), where, "a name of 1..32 characters of A-Z a-z 0-9 . _ -")
            given = sum((entrant.bot is not None, bool(entrant.command), bool(entrant.stdio)))
            _expect(given == 1, where, "exactly one of bot, command or stdio")
            if entrant.bot is not None:
                _expect(
                    entrant.bot in BOT_KINDS or bool(_MODULE_CLASS.fullmatch(entrant.bot)),
                    f"{where}.bot",
                    f"{' or '.join(BUNDLED_BOTS)}, or module:Class of a dizhu.client.Bot",
                )
        _expect(
            len(names) >= self.players,
            "entrants",
            f"at least {self.players} entrants for {self.variant} (every seat of a game holds a different entrant)",
        )
        if self.sandbox is not None:
            self._check_sandbox(self.sandbox)
        if any(entrant.is_process for entrant in self.entrants):
            _expect(
                self.clock.decision_s > 0,
                "clock.decision_s",
                "a clock (above 0 s) when an entrant is a process: without one a hung bot stops its game",
            )
        return self

    def _check_sandbox(self, sandbox: SandboxSpec) -> None:
        numbers = dataclasses.astuple(sandbox)[:6]
        _expect(min(numbers) > 0, "sandbox", "limits above 0")
        for path in sandbox.ro_paths:
            _expect(path.exists(), "sandbox.ro_paths", f"paths that exist ({path} does not)")
        for entrant in self.entrants:
            if entrant.is_process:
                _expect(
                    entrant.folder is not None and entrant.folder.is_dir(),
                    f"entrants.{entrant.name}.folder",
                    "a folder of its own (the only one of yours a confined entrant sees)",
                )
        if any(entrant.command for entrant in self.entrants):
            _expect(
                all(target.startswith("unix:") for target in self.referees),
                "referee.targets",
                "embedded referees, or unix: targets, with [sandbox] and command entrants: a confined entrant "
                "has no network and reaches its referee through a unix socket",
            )
            _expect(not self.uses_tls, "referee.tls", "no TLS with [sandbox]: a unix socket is plaintext")


def _expect(ok: bool, key: str, what: str) -> None:
    if not ok:
        raise ConfigError(f"{key}: expected {what}")


def _strings(value: object, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value) or not value:
        raise ConfigError(f"{key}: expected a list of strings")
    return tuple(value)


def _entrant(raw: object, index: int, base_dir: Path) -> EntrantSpec:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise ConfigError(f"entrants[{index}]: expected a table with a name")
    unknown = set(raw) - {"name", "bot", "command", "stdio", "per_game", "folder"}
    if unknown:
        raise ConfigError(f"entrants.{raw['name']}: unknown keys {sorted(unknown)}")
    bot = raw.get("bot")
    if bot is not None and not isinstance(bot, str):
        raise ConfigError(f"entrants.{raw['name']}.bot: expected a string")
    folder = raw.get("folder")
    if folder is not None and not isinstance(folder, str):
        raise ConfigError(f"entrants.{raw['name']}.folder: expected a string")
    return EntrantSpec(
        name=raw["name"],
        bot=bot,
        command=_strings(raw["command"], f"entrants.{raw['name']}.command") if "command" in raw else (),
        stdio=_strings(raw["stdio"], f"entrants.{raw['name']}.stdio") if "stdio" in raw else (),
        per_game=bool(raw.get("per_game", True)),
        folder=None if folder is None else (base_dir / folder).resolve(),
    )


_TOP_KEYS: Final = {
    "name": str,
    "variant": str,
    "format": str,
    "deal_sets": int,
    "seatings": str,
    "lineups_per_set": int,
    "seed": str,
    "spring": bool,
    "concurrency": int,
    "output": str,
    "viewer_url": str,
}
_REFEREE_KEYS: Final = {
    "targets": list,
    "embedded": int,
    "api_key": str,
    "tls": bool,
    "tls_ca": str,
    "redis_url": str,
    "key_prefix": str,
    "lease_s": (int, float),
    "game_timeout_s": (int, float),
    "stderr_cap_kib": int,
    "serve_args": list,
}
_SANDBOX_KEYS: Final = {
    "memory_mib": int,
    "processes": int,
    "cpu_s": (int, float),
    "open_files": int,
    "file_size_mib": int,
    "tmp_mib": int,
    "ro_paths": list,
    "env": list,
}
_CLOCK_KEYS: Final = {
    "decision_s": (int, float),
    "first_decision_s": (int, float),
    "time_bank_s": (int, float),
    "timeout_policy": str,
}


def _typed(section: Mapping[str, Any], spec: Mapping[str, Any], where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in section.items():
        if key not in spec:
            raise ConfigError(f"{where}{key}: unknown key (known: {', '.join(sorted(spec))})")
        if not isinstance(value, spec[key]) or (isinstance(value, bool) and spec[key] is not bool):
            raise ConfigError(f"{where}{key}: wrong type {type(value).__name__}")
        out[key] = value
    return out


def _from_toml(data: Mapping[str, Any], base_dir: Path, default_name: str) -> TournamentConfig:
    sections = {"referee", "clock", "entrants", "sandbox"}
    top = _typed({k: v for k, v in data.items() if k not in sections}, _TOP_KEYS, "")
    referee = _typed(data.get("referee", {}), _REFEREE_KEYS, "referee.")
    clock = _typed(data.get("clock", {}), _CLOCK_KEYS, "clock.")
    config = TournamentConfig(name=default_name, base_dir=base_dir)
    changes: dict[str, Any] = {k: v for k, v in top.items() if k != "output"}
    if "output" in top:
        changes["output"] = (base_dir / top["output"]).resolve()
    if "entrants" in data:
        if not isinstance(data["entrants"], list):
            raise ConfigError("entrants: expected [[entrants]] tables")
        changes["entrants"] = tuple(_entrant(raw, i, base_dir) for i, raw in enumerate(data["entrants"]))
    if "sandbox" in data:
        changes["sandbox"] = _sandbox(_typed(data["sandbox"], _SANDBOX_KEYS, "sandbox."), base_dir)
    if clock:
        typed: dict[str, Any] = {k: v if k == "timeout_policy" else float(v) for k, v in clock.items()}
        changes["clock"] = dataclasses.replace(config.clock, **typed)
    renamed = {"targets": "referees", "embedded": "embedded_referees"}
    for key, value in referee.items():
        if key == "stderr_cap_kib":
            changes["stderr_cap_bytes"] = value * 1024
        elif key == "tls_ca":
            changes["tls_ca"] = (base_dir / value).resolve()
        elif key in ("targets", "serve_args"):
            changes[renamed.get(key, key)] = _strings(value, f"referee.{key}") if value else ()
        else:
            changes[renamed.get(key, key)] = float(value) if key.endswith("_s") else value
    return dataclasses.replace(config, **changes)


def _sandbox(table: Mapping[str, Any], base_dir: Path) -> SandboxSpec:
    changes: dict[str, Any] = {key: float(value) if key == "cpu_s" else value for key, value in table.items()}
    if "ro_paths" in table:
        changes["ro_paths"] = tuple(
            (base_dir / path).resolve() for path in _strings(table["ro_paths"], "sandbox.ro_paths")
        )
    if "env" in table:
        changes["env"] = _strings(table["env"], "sandbox.env")
    return SandboxSpec(**changes)


def load_config(path: Path | None, overrides: Mapping[str, Any] | None = None) -> TournamentConfig:
    """The tournament of ``path`` (None: the default, bundled bots), with ``overrides`` applied.

    ``overrides`` maps :class:`TournamentConfig` field names to values (None values are
    ignored); ``clock`` fields are given as ``clock.<field>``; ``sandbox`` True confines the
    entrants with the file's ``[sandbox]`` limits, else the defaults.
    """
    if path is None:
        config = TournamentConfig(base_dir=Path.cwd())
    else:
        try:
            data = tomllib.loads(path.read_text())
        except OSError as error:
            raise ConfigError(f"cannot read {path}: {error.strerror or error}") from error
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"{path}: {error}") from error
        base = path.resolve().parent
        config = _from_toml(data, base, default_name=re.sub(r"[^A-Za-z0-9._-]", "-", path.stem)[:32] or "tournament")
    clock_changes: dict[str, Any] = {}
    changes: dict[str, Any] = {}
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        if key.startswith("clock."):
            clock_changes[key.removeprefix("clock.")] = value
        elif key == "sandbox" and value is True:
            changes[key] = config.sandbox or SandboxSpec()
        else:
            changes[key] = value
    if clock_changes:
        changes["clock"] = dataclasses.replace(config.clock, **clock_changes)
    return dataclasses.replace(config, **changes).check()
