"""Each table of a vector environment has a random stream of its own, shared with no table of
any other seed: two runs with different seeds never train on the same deals."""

from __future__ import annotations

import numpy as np
import pytest

from dizhu.env import VectorDouDizhuEnv
from dizhu.rules import SEED_SIZE

TABLES = 8


def first_deals(seed: int, workers: int = 0) -> list[bytes]:
    """The first observation of every table (the hand and the auction's start), one per table."""
    with VectorDouDizhuEnv(TABLES, encoding="compact", seed=seed, workers=workers, engine="python") as tables:
        return [row.tobytes() for row in tables.observation]


def test_no_table_of_one_seed_deals_what_a_table_of_the_next_seed_deals() -> None:
    zero, one = first_deals(0), first_deals(1)
    assert len(set(zero)) == TABLES
    shared = set(zero) & set(one)
    assert not shared, [(zero.index(row), one.index(row)) for row in shared]


def test_the_streams_of_nearby_seeds_and_tables_are_all_different() -> None:
    from dizhu.env.vector import table_generator

    drawn = {table_generator(seed, table).bytes(SEED_SIZE) for seed in range(6) for table in range(6)}
    assert len(drawn) == 36


def test_a_seed_gives_the_same_tables_every_time() -> None:
    assert first_deals(3) == first_deals(3)


@pytest.mark.parametrize("seed", [-1, 2**64])
def test_a_seed_out_of_range_is_refused(seed: int) -> None:
    from dizhu.env.vector import table_generator

    with pytest.raises(ValueError, match="seed"):
        table_generator(seed, 0)


def test_rounds_after_the_first_share_nothing_across_seeds() -> None:
    """Every round start of a few hundred steps, of seeds 0 and 1: no deal of one is a deal of the other."""

    def round_starts(seed: int) -> set[bytes]:
        starts: set[bytes] = set()
        rng = np.random.default_rng(0)
        with VectorDouDizhuEnv(TABLES, encoding="compact", seed=seed, engine="python") as tables:
            starts.update(row.tobytes() for row in tables.observation)
            for _ in range(300):
                masks = tables.action_mask
                tables.send([int(rng.choice(np.flatnonzero(mask))) for mask in masks])
                out = tables.recv()
                starts.update(out["observation"][i].tobytes() for i in np.flatnonzero(out["terminated"]))
        return starts

    zero, one = round_starts(0), round_starts(1)
    assert len(zero) > TABLES
    assert not zero & one
