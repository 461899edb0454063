"""The tables of plays move generation looks up (``dizhu.rules.tables``), and the reading cache.

``legal_moves`` is checked against brute force in test_moves.py; here each table is checked
on its own: every play it holds reads as itself, and the run tables equal a brute force over
every mask of chainable ranks.
"""

import dataclasses
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dizhu import engine
from dizhu.rules import (
    FOUR_PLAYER,
    THREE_PLAYER,
    Combination,
    CombinationKind,
    legal_moves,
    make_deck,
    parse_ranks,
    try_classify,
)
from dizhu.rules.combinations import read_ranks
from dizhu.rules.tables import (
    ACE,
    AIRPLANES,
    CHAIN_KINDS,
    CHAIN_LEADS,
    CHAINS,
    QUADS,
    ROCKETS,
    RUNS,
    SETS,
    TRIOS_WITH,
    TWO,
    Table,
    chain_mask,
)
from tests.support.rule_strategies import catalogue

# Once per rules engine: the play tables are built by each engine.
pytestmark = pytest.mark.usefixtures("each_engine")

K = CombinationKind
MASKS = range(1 << (ACE + 1))


def brute_force_runs(mask: int, min_links: int) -> list[tuple[int, int]]:
    """Every ``(low, links)`` whose ranks are all in ``mask``, by low then length."""
    return [
        (low, links)
        for low in range(ACE + 1)
        for links in range(min_links, ACE + 2 - low)
        if all(mask >> rank & 1 for rank in range(low, low + links))
    ]


#: Each variant as if one hand could hold its whole deck: the tables, filled by leading with
#: whole decks, also hold plays longer than any hand, which classify refuses for their length
#: alone (rules.md section 6, "Decision (larger than a hand)"); here each must read as itself.
WHOLE_DECK_HANDS = tuple(
    dataclasses.replace(variant, hand_size=len(make_deck(variant.decks)) - variant.kitty_size)
    for variant in (THREE_PLAYER, FOUR_PLAYER)
)


def reads_as_itself(play: Combination) -> bool:
    """Whether ``play`` is what its ranks classify as, in a variant whose deck holds it."""
    return play in {try_classify(play.ranks, variant) for variant in WHOLE_DECK_HANDS}


def built_plays() -> Iterator[Combination]:
    """Every play the tables hold once both whole decks have been led with (which fills them all:
    the pure core's move generation fills them, the native engine has tables of its own)."""
    with engine.using("python"):
        for variant in (THREE_PLAYER, FOUR_PLAYER):
            legal_moves(make_deck(variant.decks), None, variant)
    yield from (play for width in (1, 2) for play in SETS[width])
    yield from (play for width in range(3, 9) for play in SETS[width][: TWO + 1])  # no deck has three jokers
    yield from ROCKETS.values()
    yield from (play for rows in TRIOS_WITH.values() for row in rows for play in row.values())
    yield from (play for rows in CHAINS.values() for row in rows for play in row)
    for tables in (AIRPLANES, QUADS):
        yield from (play for width in (1, 2) for table in tables[width].values() for play in table.values())


class TestPlays:
    def test_every_play_in_the_tables_reads_as_itself(self) -> None:
        plays = list(built_plays())
        assert [play for play in plays if not reads_as_itself(play)] == []

    def test_the_tables_hold_every_play_of_both_variants(self) -> None:
        held = set(built_plays())
        every = {play.combination() for variant in (THREE_PLAYER, FOUR_PLAYER) for play in catalogue(variant)}
        assert every <= held

    def test_three_player_trio_with_single_is_looked_up_by_trio_then_kicker(self) -> None:
        assert TRIOS_WITH[1][0][14] == try_classify(parse_ranks("333 RJ"), THREE_PLAYER)

    def test_four_player_rocket_is_all_four_jokers(self) -> None:
        assert ROCKETS[2] == try_classify(parse_ranks("BJ BJ RJ RJ"), FOUR_PLAYER)

    def test_chains_are_indexed_from_their_fewest_links(self) -> None:
        assert CHAINS[1][0][0] == try_classify(parse_ranks("34567"), THREE_PLAYER)
        assert CHAINS[3][9][1] == try_classify(parse_ranks("QQQ KKK AAA"), THREE_PLAYER)


class TestRuns:
    @pytest.mark.parametrize("min_links", sorted(RUNS))
    def test_runs_of_every_mask_equal_a_brute_force(self, min_links: int) -> None:
        assert all(RUNS[min_links][mask] == tuple(brute_force_runs(mask, min_links)) for mask in MASKS)

    @pytest.mark.parametrize("width", sorted(CHAIN_KINDS))
    def test_chain_leads_of_every_mask_are_the_chains_of_its_runs(self, width: int) -> None:
        kind, min_links = CHAIN_KINDS[width]
        for mask in MASKS:
            leads = CHAIN_LEADS[width][mask]
            assert [(play.kind, play.size) for play in leads] == [
                (kind, width * links) for _, links in brute_force_runs(mask, min_links)
            ]
            assert all(reads_as_itself(play) for play in leads)

    @given(st.sets(st.integers(0, 14)))
    def test_chain_mask_keeps_only_three_to_ace(self, ranks: set[int]) -> None:
        assert chain_mask(ranks) == sum(1 << rank for rank in ranks if rank <= ACE)


class TestTable:
    def test_builds_each_value_once_from_its_key(self) -> None:
        built: list[int] = []

        def build(key: int) -> str:
            built.append(key)
            return str(key)

        table = Table(build)
        assert [table[3], table[4], table[3]] == ["3", "4", "3"]
        assert built == [3, 4]


class TestReadingCache:
    def test_a_variant_of_ones_own_making_is_not_read_as_the_built_in_one(self) -> None:
        ranks = parse_ranks("333 4")
        assert isinstance(read_ranks(ranks, THREE_PLAYER), Combination)  # now remembered for 3p
        without = dataclasses.replace(THREE_PLAYER, kinds=THREE_PLAYER.kinds - {K.TRIO_WITH_SINGLE})
        assert read_ranks(ranks, without) == "trio with a single is not played in this variant"

    def test_a_refusal_is_given_again_with_its_reason(self) -> None:
        ranks = parse_ranks("3 5")
        first = read_ranks(ranks, THREE_PLAYER)
        assert isinstance(first, str)
        assert read_ranks(ranks, THREE_PLAYER) == first
