"""The tournament files the docs and examples name (docs/bots/*.toml, examples/*.toml) load as they are."""

from __future__ import annotations

from pathlib import Path

import pytest

from dizhu.tournament import load_config

ROOT = Path(__file__).parents[2]
FILES = sorted([*ROOT.glob("docs/bots/*.toml"), *ROOT.glob("examples/*.toml")])


def test_there_are_the_files_the_docs_name() -> None:
    names = {path.name for path in FILES}
    assert {"learned-3p.toml", "learned-4p.toml", "imitation-tournament.toml", "table-3p.toml"} <= names


@pytest.mark.parametrize("path", FILES, ids=[path.name for path in FILES])
def test_each_loads_and_names_its_own_output(path: Path) -> None:
    config = load_config(path)
    assert len(config.entrants) >= 3
    assert str(config.output).endswith(f"tournament-results/{config.name}")
