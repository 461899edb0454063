"""The published action tables: exactly the rules core's plays, versioned, shipped as data."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from dizhu.env import FIRST_PLAY, PASS, action_table
from dizhu.env.actions import enumerate_plays, write_tables
from dizhu.env.engine import rules
from dizhu.rules import VARIANTS, Bid, Phase, Play, deal, start_round
from dizhu.rules.random_play import random_round

SHIPPED = Path(__file__).parents[2] / "server" / "dizhu" / "env" / "data"


def test_the_shipped_tables_are_what_the_rules_core_writes(tmp_path: Path) -> None:
    for written in write_tables(tmp_path):
        assert written.read_text() == (SHIPPED / written.name).read_text(), f"{written.name} is out of date"


def test_a_table_holds_the_pass_the_bids_and_every_distinct_play_once(variant: str) -> None:
    table = action_table(variant)
    assert table.names[:FIRST_PLAY] == ("pass", "bid 1", "bid 2", "bid 3")
    documented = {"3p": 12_654, "4p": 7_951}[variant]  # docs/combinations.md
    assert table.size == FIRST_PLAY + documented
    plays = enumerate_plays(VARIANTS[variant])
    assert [table.index_of(play) for play in plays] == list(range(FIRST_PLAY, table.size))


def test_the_mask_allows_exactly_the_legal_actions_of_random_rounds(variant: str) -> None:
    table = action_table(variant)
    engine = rules("python")
    rng = random.Random(3)
    for _ in range(30):
        for _action, transition in random_round(VARIANTS[variant], rng):
            state = transition.state
            if state.is_over:
                continue
            legal = table.legal_indices(state, engine)
            mask = table.mask(legal)
            assert mask.dtype == np.int8
            assert mask.sum() == len(legal)
            if state.phase is Phase.AUCTION:
                assert legal == [0, *range(state.bid + 1, 4)]
            else:
                plays = engine.legal_plays(state)
                assert len(legal) == len(plays) + (state.last_play is not None)
                assert (PASS in legal) == (state.last_play is not None)
            for index in legal:
                chosen = table.to_action(state, index, engine)
                engine.apply(state, chosen)  # every masked action is accepted by the rules
                assert isinstance(chosen, Bid if state.phase is Phase.AUCTION else Play)


def test_the_first_auction_mask_offers_the_pass_and_every_bid(variant: str) -> None:
    table = action_table(variant)
    state = start_round(deal(bytes(32), VARIANTS[variant], 0))
    assert table.legal_indices(state, rules("python")) == [0, 1, 2, 3]
