"""Each setting of ``dizhu serve`` is declared once: the flags, the configuration and the docs' tables agree."""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import os
import re
from pathlib import Path

import pytest

from dizhu.config import ServerConfig, add_server_arguments, config_from_args
from dizhu.config.declaration import declared_settings
from dizhu.config.docs_table import BEGIN, END, settings_tables
from dizhu.config.settings import GROUPS
from dizhu.store import TableStore

ROOT = Path(__file__).resolve().parents[2]


def _declared() -> list[str]:
    return [declared.name for group in GROUPS for declared in declared_settings(group)]


def _said(value: object) -> set[str]:
    """The ways the docs' prose writes a default: as it is, with thousands separators, in hours or days."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return {str(value)}
    said = {f"{value:g}", f"{value:,g}", f"{value:.2f}", f"{value:g} s"}
    for unit, seconds in (("hours", 3600), ("days", 86400)):
        if value >= seconds and value % seconds == 0:
            said.add(f"{value / seconds:g} {unit}")
    return said


class TestSettingsDeclaredOnce:
    def test_the_docs_tables_are_the_declarations(self) -> None:
        text = (ROOT / "docs/operations.md").read_text()
        assert BEGIN in text, f"docs/operations.md lacks the line {BEGIN}"
        held = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
        assert held == settings_tables(), "docs/operations.md's settings drifted: python -m dizhu.config.docs_table"

    def test_every_setting_of_the_configuration_is_declared_once_with_a_flag_and_a_variable(self) -> None:
        declared = [declared for group in GROUPS for declared in declared_settings(group)]
        assert sorted(_declared()) == sorted(field.name for field in dataclasses.fields(ServerConfig))
        assert len({entry.flag for entry in declared}) == len(declared)
        assert len({entry.env for entry in declared}) == len(declared)
        parser = argparse.ArgumentParser()
        add_server_arguments(parser)
        flags = {flag: action.help or "" for action in parser._actions for flag in action.option_strings}
        for entry in declared:
            assert entry.env in flags[entry.flag], entry.flag

    def test_the_flags_defaults_are_the_declared_defaults(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        for name in os.environ:
            if name.startswith("DIZHU_") or name == "REDIS_URL":
                monkeypatch.delenv(name)
        monkeypatch.chdir(tmp_path)  # the embedded Redis's default data directory holds a signing key
        parser = argparse.ArgumentParser()
        add_server_arguments(parser)
        config = config_from_args(parser.parse_args([]))
        made_up = {"signing_key"}  # made on first start, in the data directory
        for name in set(_declared()) - made_up:
            assert getattr(config, name) == getattr(ServerConfig(), name), name
        assert config.signing_key.startswith(b"-----BEGIN PRIVATE KEY-----")

    def test_the_stores_own_defaults_are_the_declared_ones(self) -> None:
        """The store stands below the settings (it cannot read them): its defaults are checked against them."""
        defaults = ServerConfig()
        parameters = inspect.signature(TableStore).parameters
        for name in ("key_prefix", "finished_ttl_s", "answer_ttl_s", "events_maxlen", "answers_per_table"):
            parameter = parameters["prefix" if name == "key_prefix" else name]
            assert parameter.default == getattr(defaults, name), name
        assert parameters["replicas"].default == defaults.store_replicas
        assert parameters["replica_timeout_ms"].default == int(defaults.replica_timeout_s * 1000)

    def test_the_prose_tables_of_limits_name_each_flag_with_its_variable_and_default(self) -> None:
        """docs/security.md explains each limit in its own words; its flag, variable and default are declared."""
        by_flag = {declared.flag: declared for group in GROUPS for declared in declared_settings(group)}
        rows = [line for line in (ROOT / "docs/security.md").read_text().splitlines() if line.startswith("| ")]
        checked = 0
        for row in rows:
            for flag, env in re.findall(r"`(--[a-z-]+)`(?: \([^)]*\))? / `([A-Z_]+)`", row):
                declared = by_flag[flag]
                assert env == declared.env, f"{flag}: the docs say ${env}, the declaration ${declared.env}"
                if row.count(" / `") == 1 and declared.default is not None:
                    assert any(said in row for said in _said(declared.default)), row
                checked += 1
        assert checked >= 15
