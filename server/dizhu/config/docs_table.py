"""docs/operations.md's tables of settings, written from their declarations.

``python -m dizhu.config.docs_table`` prints them; the docs hold them between two marker
lines (:data:`BEGIN`, :data:`END`) and a test checks that they are what this prints.
"""

from __future__ import annotations

import sys
from pathlib import Path

from dizhu.config.declaration import Declared, declared_settings
from dizhu.config.settings import GROUPS

__all__ = ["BEGIN", "END", "settings_tables"]

BEGIN = "<!-- settings: written by `python -m dizhu.config.docs_table` from the declarations; do not edit -->"
END = "<!-- end of settings -->"
_HEADER = "| flag | environment | default | meaning |\n|---|---|---|---|"


def settings_tables() -> str:
    """One Markdown table per group of settings, each under its heading, as docs/operations.md holds them."""
    parts = []
    for group in GROUPS:
        rows = "\n".join(_row(declared) for declared in declared_settings(group))
        parts.append(f"{group.DOCS_HEADING}:\n\n{_HEADER}\n{rows}")
    return "\n\n".join(parts)


def _row(declared: Declared) -> str:
    setting = declared.setting
    flag = declared.flag
    if setting.choices:
        flag += " {" + ",".join(setting.choices) + "}"
    elif setting.values is not None and setting.form != "switch":
        flag += f" {setting.values.metavar}"
    env = f"`{declared.env}`"
    if setting.form == "list":
        env += " (comma-separated)"
    elif setting.form == "switch":
        env += " (`1`)"
    meaning = _markdown(setting.help)
    if setting.docs:
        meaning += setting.docs if setting.docs[0] in ",;" else " " + setting.docs
    return f"| `{flag}` | {env} | {_default(declared)} | {meaning} |"


def _default(declared: Declared) -> str:
    value = declared.default
    shown = f"{value:g}" if isinstance(value, float) else str(value)
    if declared.setting.default_text != "%(default)s":
        return _markdown(declared.setting.default_text % {"default": shown})
    return f"`{shown}`" if isinstance(value, str | Path) else shown


def _markdown(text: str) -> str:
    """Plain text as a table cell shows it: no emphasis, no column break."""
    return text.replace("|", "\\|").replace("*", "\\*")


if __name__ == "__main__":
    sys.stdout.write(f"{BEGIN}\n\n{settings_tables()}\n\n{END}\n")
