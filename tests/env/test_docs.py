"""docs/env.md as a reader uses it: every Python block runs as pasted, and does what the text says.

The blocks are taken from the page itself, so that a snippet cannot rot: each runs in a fresh
namespace, and the quick start's round must be played, not voided (a policy that always takes
the first legal action passes every auction, so every deal is thrown in up to the redeal cap).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from dizhu.client import Bot
from dizhu.env.actions import action_table
from dizhu.rules import VARIANTS

ROOT = Path(__file__).parents[2]
PAGE = ROOT / "docs" / "env.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.DOTALL)


def run_block(containing: str) -> dict[str, Any]:
    """The namespace after running the one block of the page that contains ``containing``."""
    found = [block for block in python_blocks() if containing in block]
    assert len(found) == 1, f"docs/env.md has {len(found)} Python blocks containing {containing!r}"
    namespace: dict[str, Any] = {"__name__": "docs_env_snippet"}
    exec(compile(found[0], f"docs/env.md ({containing})", "exec"), namespace)  # the page's own code
    return namespace


def test_every_python_block_of_the_page_is_run_by_a_test_here() -> None:
    markers = ("dou_dizhu_v0.env(", "gymnasium.make(", "VectorDouDizhuEnv(", "PolicyBot(")
    assert [next(marker for marker in markers if marker in block) for block in python_blocks()] == list(markers)


def test_the_quick_start_plays_its_round_to_a_settlement() -> None:
    env = run_block("dou_dizhu_v0.env(")["env"]
    settlement = env.unwrapped.game.settlement
    assert settlement is not None
    assert settlement.landlord is not None, "the round was thrown in to the redeal cap and voided"
    assert any(settlement.deltas)


def test_the_gymnasium_block_gives_masks_to_sample_from() -> None:
    namespace = run_block("gymnasium.make(")
    masks = namespace["masks"]
    assert masks.dtype.kind == "b"
    assert masks.any()
    assert namespace["info"] == {"illegal_action": False}


def test_the_vector_block_runs_every_loop_it_shows() -> None:
    namespace = run_block("VectorDouDizhuEnv(")
    tables = namespace["tables"]
    assert tables.buffers == {}  # the with block closed it
    assert namespace["finished"] > 0


def test_the_policy_bot_block_makes_a_bot() -> None:
    namespace = run_block("PolicyBot(")
    bot = namespace["bot"]
    assert isinstance(bot, Bot)
    assert bot.policy is namespace["my_policy"]


def test_the_action_counts_the_page_states_are_the_tables() -> None:
    sizes = [action_table(VARIANTS[variant]).size for variant in ("3p", "4p")]
    assert "N is {:,} in 3p and {:,} in 4p".format(*sizes) in PAGE.read_text()
