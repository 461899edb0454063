"""``dizhu serve``'s flags, with environment variables as defaults, read into a :class:`ServerConfig`.

Every flag is a declared setting (:mod:`dizhu.config.declaration`): its environment variable is
``DIZHU_<FLAG>`` unless the declaration names another (the conventional ``REDIS_URL``); a flag
given on the command line wins (repeatable flags such as ``--api-key`` replace their variable's
comma-separated list). Environment values are checked like flags: a bad one is a clear usage
error. The server secret has a file flag and an environment variable, never a flag of its own
(command lines are visible to every user of the machine). Each group of settings is a group of
``--help``, in the order of :data:`~dizhu.config.settings.GROUPS`, with the checks of its own
combinations. How a value is checked: :mod:`~dizhu.config.flag_values`.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from dizhu.config.declaration import Declared, declared_settings
from dizhu.config.flag_values import add_env_flag, add_env_switch
from dizhu.config.settings import GROUPS, ServerConfig

__all__ = ["add_server_arguments", "config_from_args"]


def add_server_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``serve`` flags, group by group; each one's environment variable gives its default."""
    for group in GROUPS:
        container: argparse._ActionsContainer = (
            parser if group.TITLE is None else parser.add_argument_group(group.TITLE)
        )
        for declared in declared_settings(group):
            _add_flag(container, declared)
        group.add_other_arguments(container)


def _add_flag(container: argparse._ActionsContainer, declared: Declared) -> None:
    setting = declared.setting
    if setting.form == "switch":
        add_env_switch(container, declared.flag, declared.env, help=setting.help, default_text=setting.default_text)
        return
    metavar = setting.values.metavar if setting.values is not None else None
    if setting.form == "list":
        container.add_argument(
            declared.flag,
            metavar=metavar,
            action="append",
            default=None,
            help=f"{setting.help}; repeatable; given at all, the flags replace ${declared.env} (comma-separated) "
            f"(default: {setting.default_text})",
        )
        return
    options: dict[str, Any] = {}
    if setting.choices:
        options["choices"] = list(setting.choices)
        if setting.normalise is not None:
            options["type"] = setting.normalise
    add_env_flag(
        container,
        declared.flag,
        declared.env,
        convert=None if setting.values is None else setting.values.convert,
        expected="" if setting.values is None else setting.values.expected,
        # A setting read from its flag's file has no default text to convert: the variable, or nothing.
        default=None if setting.read is not None else declared.default,
        help=setting.help,
        default_text=setting.default_text,
        empty_is_unset=setting.empty_env_is_unset,
        metavar=metavar,
        **options,
    )


def config_from_args(args: argparse.Namespace) -> ServerConfig:
    """The settings the flags (and their environment variables) say; SystemExit(2) for a bad combination."""
    for group in GROUPS:
        group.check_arguments(args)
    values: dict[str, Any] = {}
    for group in GROUPS:
        for declared in declared_settings(group):
            values[declared.name] = _value(declared, args)
    return ServerConfig(**values)


def _value(declared: Declared, args: argparse.Namespace) -> Any:
    if declared.setting.form == "list":
        given = declared.read(args)
        items = given if given is not None else os.environ.get(declared.env, "").split(",")
        return tuple(item for item in items if item)
    return declared.read(args)
