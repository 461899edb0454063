"""Helpers of the conformance kit's tests: a copy of the kit to change, engines that are wrong on purpose."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from dizhu.conformance import CoreEngine, Kit, find_kit

KIT = find_kit()
ROOT = KIT.root.parent


def kit_copy(tmp_path: Path, change: Callable[[Path], None] | None = None) -> Kit:
    """A copy of the kit under ``tmp_path``, changed by ``change`` (given the copy's root)."""
    root = tmp_path / "kit"
    shutil.copytree(KIT.root, root)
    if change is not None:
        change(root)
    return Kit(root)


def edit_json(path: Path, edit: Callable[[Any], None]) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data, indent=1) + "\n")


class TrioWithSingleBlindEngine(CoreEngine):
    """The rules core, except that it never reads trio + single (an engine with 4p's rules at a 3p table)."""

    def __init__(self) -> None:
        super().__init__("trio-blind")

    def answer(self, family: str, query: Mapping[str, Any]) -> dict[str, Any]:
        found = super().answer(family, query)
        if family == "classify" and found.get("kind") == "trio_with_single":
            return {"valid": False}
        return found


class ReversedMovesEngine(CoreEngine):
    """The rules core, listing every legal move, in the opposite order (an engine with its own order)."""

    def __init__(self) -> None:
        super().__init__("reversed")

    def answer(self, family: str, query: Mapping[str, Any]) -> dict[str, Any]:
        found = super().answer(family, query)
        if family == "legal_moves":
            return {**found, "moves": found["moves"][::-1]}
        return found


class StakeAddingEngine(CoreEngine):
    """The rules core, except that doublings add the bid once each instead of doubling the stake.

    One doubling gives the same stake either way (twice the bid); only a round of two or more
    tells them apart, so this engine stands for the mistake the kit must catch there.
    """

    def __init__(self) -> None:
        super().__init__("stake-adding")

    def answer(self, family: str, query: Mapping[str, Any]) -> dict[str, Any]:
        found = super().answer(family, query)
        if family != "settlement" or not found["doublings"]:
            return found
        stake = query["bid"] * (1 + found["doublings"]) * (2 if found["spring"] else 1)
        # Every payment is the stake times a whole number of seats (1, or players - 1).
        deltas = [delta // found["stake"] * stake for delta in found["deltas"]]
        return {**found, "stake": stake, "deltas": deltas}


#: An engine as a module attribute (``--engine conformance_kit:ENGINE_INSTANCE``), not a class.
ENGINE_INSTANCE = ReversedMovesEngine()
