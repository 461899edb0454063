"""How a setting of ``dizhu serve`` is declared: once, as a field of its group's settings.

A group of settings (one per group of ``--help``: :mod:`~dizhu.config.process_settings`,
:mod:`~dizhu.config.safety_settings`, ...) is a frozen dataclass whose every field is made by
:func:`setting`: its name, type and default are the field's; its flag, environment variable,
unit, check, help and how the docs describe it are the :class:`Setting` in the field's metadata.
:class:`~dizhu.config.settings.ServerConfig` is all the groups together; the flags
(:mod:`~dizhu.config.flags`) and the docs table (:mod:`~dizhu.config.docs_table`) are read
from the same fields by :func:`declared_settings`.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Iterator
from typing import Any, ClassVar, Literal

from dizhu.config.flag_values import Values

__all__ = ["Declared", "Setting", "SettingsGroup", "declared_settings", "setting"]

#: How a setting is given: a value; a switch an environment variable set to 1 turns on; a
#: repeatable flag whose environment variable lists its values, comma-separated.
Form = Literal["value", "switch", "list"]

_METADATA_KEY = "dizhu.setting"


@dataclasses.dataclass(frozen=True, slots=True)
class Setting:
    """What a field of a settings group says beyond its name, type and default."""

    #: What it does, as ``--help`` says it (the docs table says it too).
    help: str
    #: Its unit and check (None: the text as it is, or a choice of ``choices``).
    values: Values | None = None
    choices: tuple[str, ...] = ()
    #: What a choice's text goes through before it is checked (e.g. ``str.lower``).
    normalise: Callable[[str], str] | None = None
    #: The flag and the variable; derived from the field's name when not given
    #: (``grace_s``: ``--grace`` and ``DIZHU_GRACE_S``).
    flag: str = ""
    env: str = ""
    #: The default as ``--help`` and the docs say it (``%(default)s``: the value itself).
    default_text: str = "%(default)s"
    form: Form = "value"
    #: An environment variable set but empty: unset (the default), or a value to check.
    empty_env_is_unset: bool = True
    #: How the setting is read from the parsed flags when it is not the flag's value itself
    #: (a file's content, several flags together).
    read: Callable[[argparse.Namespace], Any] | None = None
    #: What the docs table adds to ``help`` (Markdown: a link, a fact for operators).
    docs: str = ""


def setting(default: Any, help: str, *, repr: bool = True, **details: Any) -> Any:
    """A settings group's field: ``default``, and the :class:`Setting` made of ``help`` and ``details``."""
    return dataclasses.field(default=default, repr=repr, metadata={_METADATA_KEY: Setting(help, **details)})


class SettingsGroup:
    """A group of settings: a frozen dataclass of :func:`setting` fields deriving from this class."""

    #: The title of its group in ``--help`` (None: the command's own flags).
    TITLE: ClassVar[str | None] = None
    #: What the docs table of its settings is headed with (Markdown).
    DOCS_HEADING: ClassVar[str] = ""

    @staticmethod
    def check_arguments(args: argparse.Namespace) -> None:
        """A usage error (SystemExit(2)) for a combination of the group's flags that cannot work."""

    @staticmethod
    def add_other_arguments(group: argparse._ActionsContainer) -> None:
        """Flags of the group that are no setting (an action, such as printing a key)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Declared:
    """One declared setting: its field's name and default, its flag and variable resolved."""

    name: str
    default: Any
    flag: str
    env: str
    setting: Setting

    @property
    def dest(self) -> str:
        """The attribute argparse keeps the flag's value in."""
        return self.flag.removeprefix("--").replace("-", "_")

    def read(self, args: argparse.Namespace) -> Any:
        """The setting's value from the parsed flags (and their environment variables)."""
        if self.setting.read is not None:
            return self.setting.read(args)
        return getattr(args, self.dest)


def declared_settings(group: type[SettingsGroup]) -> Iterator[Declared]:
    """The settings ``group`` declares, in their order."""
    for field in dataclasses.fields(group):  # type: ignore[arg-type]
        declared: Setting = field.metadata[_METADATA_KEY]
        stem = field.name.removesuffix("_s")
        yield Declared(
            name=field.name,
            default=field.default,
            flag=declared.flag or "--" + stem.replace("_", "-"),
            env=declared.env or "DIZHU_" + field.name.upper(),
            setting=declared,
        )
