"""How a flag's text, or its environment variable's, becomes a setting: the checks every group of flags uses.

:func:`add_env_flag` adds a flag whose default its environment variable gives, naming the variable
once for the check's message, the default and the help. :class:`Values` names a kind of value
once (its unit, its check, what it expects), for every setting of that kind.

A bad value, from the command line or the environment, is a usage error that says what was
expected and where the value came from (never a traceback).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = [
    "COUNT",
    "DIR",
    "FILE",
    "FRACTION",
    "HOST_PORT",
    "MAX_PORT",
    "PORT",
    "SECONDS",
    "SECONDS_OR_NONE",
    "SOME",
    "WHOLE_SECONDS",
    "Values",
    "add_env_flag",
    "add_env_switch",
    "at_least",
    "checked",
    "fraction",
    "from_env",
    "host_port",
    "one_of",
    "port_number",
    "usage_error",
]

MAX_PORT = 65535


def from_env(name: str, default: object) -> str:
    """The environment's value of ``name``, else ``default``: a string argparse converts and checks
    like a flag's (so a bad environment value is a clear error of its own, never a traceback)."""
    return os.environ.get(name, str(default))


def add_env_flag(
    group: argparse._ActionsContainer,
    flag: str,
    env: str,
    *,
    convert: Callable[[str], Any] | None = None,
    expected: str = "",
    default: object = None,
    help: str,
    default_text: str = "%(default)s",
    empty_is_unset: bool = True,
    **argparse_options: Any,
) -> None:
    """Add ``flag``, whose environment variable ``env`` gives its default: the one place that names it.

    ``convert`` (with what it ``expected``) checks the flag's text and the variable's alike; so do
    ``choices`` (after ``type``, if given), which argparse itself checks only on the command line. The
    default is the variable's value, else ``default``; without one, an unset variable leaves the
    setting None, and so does an empty one if ``empty_is_unset`` (else its empty text is checked).
    The help ends "(env ENV; default: DEFAULT_TEXT)".
    """
    if convert is None and "choices" in argparse_options:
        allowed = tuple(argparse_options["choices"])
        normalise: Callable[[str], str] = argparse_options.pop("type", str)
        convert = functools.partial(_chosen, allowed, normalise)
        expected = expected or "one of " + ", ".join(allowed)
    if convert is not None:
        argparse_options["type"] = checked(convert, expected, env)
    unset_default = os.environ.get(env)
    if empty_is_unset:
        unset_default = unset_default or None
    group.add_argument(
        flag,
        default=from_env(env, default) if default is not None else unset_default,
        help=f"{help} (env {env}; default: {default_text})",
        **argparse_options,
    )


def add_env_switch(
    group: argparse._ActionsContainer, flag: str, env: str, *, help: str, default_text: str = "off"
) -> None:
    """Add a switch that ``env`` set to 1 (or true, yes) turns on; the help ends "(env ENV=1; default: ...)"."""
    group.add_argument(
        flag,
        action="store_true",
        default=from_env(env, "") in {"1", "true", "yes"},
        help=f"{help} (env {env}=1; default: {default_text})",
    )


def checked(convert: Callable[[str], Any], what: str, env: str) -> Callable[[str], Any]:
    """An argparse type: ``convert(text)``, or an error saying what was expected and where it came from."""

    def parse(text: str) -> Any:
        try:
            return convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what} (from the flag, or ${env})") from None

    parse.__name__ = what
    return parse


@dataclasses.dataclass(frozen=True, slots=True)
class Values:
    """A kind of value: its unit in ``--help`` (``metavar``), its check and what the check expects."""

    metavar: str | None
    convert: Callable[[str], Any]
    expected: str

    def shown_as(self, metavar: str) -> Values:
        """The same values under another unit (``BYTES`` for a count of bytes)."""
        return dataclasses.replace(self, metavar=metavar)


def at_least(low: float, kind: Callable[[str], float]) -> Callable[[str], Any]:
    def convert(text: str) -> float:
        value = kind(text)
        if not (math.isfinite(value) and value >= low):
            raise ValueError(text)
        return value

    return convert


def port_number(text: str) -> int:
    port = int(text)
    if not 0 <= port <= MAX_PORT:
        raise ValueError(text)
    return port


def host_port(text: str) -> str:
    host, colon, port = text.rpartition(":")
    if not colon or not host or not port.isdigit():
        raise ValueError(text)
    port_number(port)
    return text


def _chosen(allowed: tuple[str, ...], normalise: Callable[[str], str], text: str) -> str:
    return one_of(allowed)(normalise(text))


def one_of(allowed: tuple[str, ...]) -> Callable[[str], str]:
    def convert(text: str) -> str:
        if text not in allowed:
            raise ValueError(text)
        return text

    return convert


def usage_error(message: str) -> SystemExit:
    """A bad combination of settings: said on standard error, exit status 2 (as argparse's own)."""
    print(f"dizhu serve: error: {message}", file=sys.stderr)  # noqa: T201 -- a command line's message
    return SystemExit(2)


def fraction(text: str) -> float:
    value = float(text)
    if not 0 <= value < 1:
        raise ValueError(text)
    return value


def _path(text: str) -> Path:
    return Path(text)


#: The kinds of value most settings take.
COUNT = Values("N", at_least(1, int), "a whole number of at least 1")
SOME = Values("N", at_least(0, int), "a whole number, at least 0")
WHOLE_SECONDS = Values("SECONDS", at_least(1, int), "a whole number of seconds, at least 1")
SECONDS_OR_NONE = Values("SECONDS", at_least(0, float), "a number of seconds, at least 0")
SECONDS = Values("SECONDS", at_least(0.001, float), "a number of seconds above 0")
HOST_PORT = Values("HOST:PORT", host_port, "a host:port address (port 0..65535)")
PORT = Values("PORT", port_number, "a port number 0..65535")
FRACTION = Values("FRACTION", fraction, "a fraction from 0 up to 1")
FILE = Values("FILE", _path, "a file's path")
DIR = Values("DIR", _path, "a directory's path")
