"""The tournament files the docs and examples name (docs/bots/*.toml, examples/*.toml) load as they are."""

from __future__ import annotations

from pathlib import Path

import pytest

from dizhu.tournament import load_config
from dizhu.tournament.config import BUNDLED_BOTS

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


@pytest.mark.parametrize("variant", ["3p", "4p"])
def test_the_strength_tables_seat_every_bundled_bot(variant: str) -> None:
    config = load_config(ROOT / "docs" / "bots" / f"table-{variant}.toml")
    bots = {entrant.bot for entrant in config.entrants}
    assert set(BUNDLED_BOTS) <= bots, f"docs/bots.md's {variant} strength table leaves out {set(BUNDLED_BOTS) - bots}"
    if variant == "3p":
        assert "linear_baseline:TrainedBot" in bots, "the shipped learning baseline plays 3p"
