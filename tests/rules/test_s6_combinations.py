"""docs/rules.md section 6: the combinations, for both variants, including every Decision.

Hands are written in notation and double as test ids, kickers apart: ``333444-5-6`` is the
airplane ``333444`` with single wings ``5`` and ``6``.

``TestOneReading`` is the proof the section 7 Decision promises: ``strategies.readings``
enumerates every card set the table allows, type by type, without using the code under
test, and the tests check that no set has two readings, that ``classify`` finds exactly that
reading, that ``legal_moves`` on the whole deck lists exactly those sets, and that every other
small set is refused. docs/combinations.md records the counts this enumeration finds.
"""

import collections
import itertools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from dizhu.rules import (
    FOUR_PLAYER,
    THREE_PLAYER,
    CombinationKind,
    NotACombination,
    Variant,
    classify,
    explain,
    format_ranks,
    legal_moves,
    make_deck,
    parse_cards,
    parse_ranks,
    try_classify,
)
from tests.support.rule_strategies import (
    ALL_RANKS,
    VARIANT_LIST,
    Counts,
    catalogue,
    counts_of,
    deck_limit,
    hands,
    ranks_of,
    readings,
    variants,
)

# Once per rules engine: combinations are read by each engine.
pytestmark = pytest.mark.usefixtures("each_engine")

K = CombinationKind
DOCS = Path(__file__).resolve().parents[2] / "docs" / "combinations.md"


def hand(text: str, *values: object) -> object:
    """A table row whose id is the hand, kicker groups joined by ``-``."""
    return pytest.param(text, *values, id=text.replace(" ", "-") or "empty")


def read(text: str, variant: Variant) -> tuple[CombinationKind, str, int]:
    """The reading of a hand: type, main rank symbol, size."""
    combination = classify(parse_ranks(text), variant)
    return combination.kind, combination.main_rank.symbol, combination.size


def assert_refused(text: str, variant: Variant) -> str:
    """Assert ``text`` is no combination; return the reason ``explain`` gives."""
    reason = explain(parse_ranks(text), variant)
    assert reason, f"{text} should be no combination in {variant}"
    assert try_classify(parse_ranks(text), variant) is None
    return reason


class TestSingle:
    @pytest.mark.parametrize(
        ("text", "main"), [hand("3", "3"), hand("T", "T"), hand("2", "2"), hand("BJ", "BJ"), hand("RJ", "RJ")]
    )
    def test_any_card_is_a_single(self, variant: Variant, text: str, main: str) -> None:
        assert read(text, variant) == (K.SINGLE, main, 1)


class TestPair:
    @pytest.mark.parametrize(("text", "main"), [hand("33", "3"), hand("TT", "T"), hand("22", "2")])
    def test_two_cards_of_one_rank_are_a_pair(self, variant: Variant, text: str, main: str) -> None:
        assert read(text, variant) == (K.PAIR, main, 2)

    @pytest.mark.parametrize(("text", "main"), [hand("BJ BJ", "BJ"), hand("RJ RJ", "RJ")])
    def test_four_player_same_colour_jokers_are_a_pair(self, text: str, main: str) -> None:
        assert read(text, FOUR_PLAYER) == (K.PAIR, main, 2)

    def test_four_player_red_joker_pair_is_higher_than_black_joker_pair(self) -> None:
        assert (
            classify(parse_ranks("RJ RJ"), FOUR_PLAYER).main_rank
            > classify(parse_ranks("BJ BJ"), FOUR_PLAYER).main_rank
        )

    def test_four_player_black_and_red_joker_are_no_pair_and_no_rocket(self) -> None:
        assert_refused("BJ RJ", FOUR_PLAYER)

    def test_three_player_black_and_red_joker_are_the_rocket_not_a_pair(self) -> None:
        assert read("BJ RJ", THREE_PLAYER) == (K.ROCKET, "RJ", 2)

    def test_three_player_has_no_joker_pair(self) -> None:
        assert "holds only 1 BJ" in assert_refused("BJ BJ", THREE_PLAYER)

    def test_two_cards_of_two_ranks_are_no_pair(self, variant: Variant) -> None:
        assert_refused("34", variant)


class TestTrio:
    @pytest.mark.parametrize(("text", "main"), [hand("333", "3"), hand("AAA", "A"), hand("222", "2")])
    def test_three_cards_of_one_rank_are_a_trio(self, variant: Variant, text: str, main: str) -> None:
        assert read(text, variant) == (K.TRIO, main, 3)


class TestTrioWithSingle:
    @pytest.mark.parametrize(
        ("text", "main"),
        [hand("333 4", "3"), hand("4 333", "3"), hand("AAA 3", "A"), hand("333 2", "3"), hand("222 A", "2")],
    )
    def test_three_player_trio_plus_one_card_of_another_rank(self, text: str, main: str) -> None:
        assert read(text, THREE_PLAYER) == (K.TRIO_WITH_SINGLE, main, 4)

    @pytest.mark.parametrize("text", [hand("333 BJ"), hand("KKK RJ")])
    def test_three_player_a_single_joker_may_be_the_single(self, text: str) -> None:
        assert read(text, THREE_PLAYER)[0] is K.TRIO_WITH_SINGLE

    def test_four_player_does_not_play_trio_with_single(self) -> None:
        assert "not played in this variant" in assert_refused("333 4", FOUR_PLAYER)

    def test_four_equal_cards_are_a_bomb_never_a_trio_with_single(self, variant: Variant) -> None:
        assert read("3333", variant) == (K.BOMB, "3", 4)


class TestTrioWithPair:
    @pytest.mark.parametrize(
        ("text", "main"), [hand("333 44", "3"), hand("44 333", "3"), hand("333 22", "3"), hand("222 AA", "2")]
    )
    def test_trio_plus_a_pair_of_another_rank(self, variant: Variant, text: str, main: str) -> None:
        assert read(text, variant) == (K.TRIO_WITH_PAIR, main, 5)

    @pytest.mark.parametrize("text", [hand("333 BJ BJ"), hand("333 RJ RJ")])
    def test_four_player_a_same_colour_joker_pair_may_be_the_pair(self, text: str) -> None:
        assert read(text, FOUR_PLAYER) == (K.TRIO_WITH_PAIR, "3", 5)

    @pytest.mark.parametrize("text", [hand("333 BJ RJ"), hand("333 4 5")])
    def test_two_cards_of_two_ranks_are_no_pair_for_a_trio(self, variant: Variant, text: str) -> None:
        assert_refused(text, variant)

    def test_four_player_five_cards_of_a_rank_are_a_bomb_not_trio_with_pair(self) -> None:
        assert read("33333", FOUR_PLAYER) == (K.BOMB, "3", 5)


class TestStraight:
    @pytest.mark.parametrize(
        ("text", "main", "size"),
        [
            hand("34567", "7", 5),
            hand("76543", "7", 5),
            hand("TJQKA", "A", 5),
            hand("10JQKA", "A", 5),
            hand("3456789", "9", 7),
            hand("3456789TJQKA", "A", 12),
        ],
    )
    def test_five_to_twelve_consecutive_ranks_are_a_straight(
        self, variant: Variant, text: str, main: str, size: int
    ) -> None:
        assert read(text, variant) == (K.STRAIGHT, main, size)

    def test_four_consecutive_ranks_are_too_short(self, variant: Variant) -> None:
        assert "at least 5" in assert_refused("3456", variant)

    @pytest.mark.parametrize("text", [hand("TJQKA2"), hand("JQKA2"), hand("A2345"), hand("3456789TJQKA2")])
    def test_may_not_contain_a_two(self, variant: Variant, text: str) -> None:
        assert_refused(text, variant)

    @pytest.mark.parametrize("text", [hand("JQKA BJ"), hand("QKA2 BJ"), hand("KA2 BJ RJ")])
    def test_may_not_contain_a_joker(self, variant: Variant, text: str) -> None:
        assert_refused(text, variant)

    def test_ranks_must_be_consecutive(self, variant: Variant) -> None:
        assert "consecutive" in assert_refused("34568", variant)


class TestPairSequence:
    @pytest.mark.parametrize(
        ("text", "main", "size"),
        [hand("334455", "5", 6), hand("QQKKAA", "A", 6), hand("33445566778899TTJJQQ", "Q", 20)],
    )
    def test_three_or_more_consecutive_pairs_are_a_pair_sequence(
        self, variant: Variant, text: str, main: str, size: int
    ) -> None:
        assert read(text, variant) == (K.PAIR_SEQUENCE, main, size)

    def test_four_player_twelve_pairs_from_three_to_ace(self) -> None:
        assert read("33445566778899TTJJQQKKAA", FOUR_PLAYER) == (K.PAIR_SEQUENCE, "A", 24)

    def test_two_pairs_are_too_short(self, variant: Variant) -> None:
        assert "at least 3" in assert_refused("3344", variant)

    def test_may_not_contain_a_two(self, variant: Variant) -> None:
        assert "2 or a joker" in assert_refused("KKAA22", variant)

    def test_four_player_may_not_contain_a_joker_pair(self) -> None:
        assert "2 or a joker" in assert_refused("QQKKAA BJ BJ", FOUR_PLAYER)

    def test_pairs_must_be_consecutive(self, variant: Variant) -> None:
        assert "consecutive" in assert_refused("334466", variant)


class TestTrioSequence:
    @pytest.mark.parametrize(
        ("text", "main", "size"),
        [hand("333444", "4", 6), hand("KKKAAA", "A", 6), hand("333444555", "5", 9), hand("333444555666", "6", 12)],
    )
    def test_two_or_more_consecutive_trios_are_a_trio_sequence(
        self, variant: Variant, text: str, main: str, size: int
    ) -> None:
        assert read(text, variant) == (K.TRIO_SEQUENCE, main, size)

    def test_four_consecutive_trios_are_a_trio_sequence_of_four_not_an_airplane_with_singles(self) -> None:
        assert read("333444555666", THREE_PLAYER) == (K.TRIO_SEQUENCE, "6", 12)

    def test_four_player_eleven_trios_fill_the_landlords_hand(self) -> None:
        assert read("333444555666777888999TTTJJJQQQKKK", FOUR_PLAYER) == (K.TRIO_SEQUENCE, "K", 33)

    def test_may_not_contain_a_two(self, variant: Variant) -> None:
        assert "2 or a joker" in assert_refused("AAA222", variant)

    def test_trios_must_be_consecutive(self, variant: Variant) -> None:
        assert "consecutive" in assert_refused("333555", variant)


class TestAirplaneWithSingles:
    @pytest.mark.parametrize(
        ("text", "main", "size"),
        [
            hand("333444 5 6", "4", 8),
            hand("3 444555 6", "5", 8),
            hand("KKKAAA 2 BJ", "A", 8),
            hand("333444555 6 7 8", "5", 12),
            hand("333444555666777 8 9 T J Q", "7", 20),
        ],
    )
    def test_three_player_k_trios_plus_k_singles_of_other_ranks(self, text: str, main: str, size: int) -> None:
        assert read(text, THREE_PLAYER) == (K.AIRPLANE_WITH_SINGLES, main, size)

    def test_three_player_black_and_red_joker_may_not_both_be_wings(self) -> None:
        assert "both jokers" in assert_refused("333444 BJ RJ", THREE_PLAYER)

    def test_three_player_wings_must_be_of_different_ranks(self) -> None:
        assert_refused("333444 5 5", THREE_PLAYER)

    def test_three_player_a_wing_may_not_be_of_a_trio_rank(self) -> None:
        assert_refused("333444 3 5", THREE_PLAYER)

    def test_three_trios_plus_a_separate_trio_are_no_combination(self, variant: Variant) -> None:
        assert_refused("333444555 777", variant)

    def test_four_player_does_not_play_airplane_with_singles(self) -> None:
        assert "not played in this variant" in assert_refused("333444 5 6", FOUR_PLAYER)


class TestAirplaneWithPairs:
    @pytest.mark.parametrize(
        ("text", "main", "size"),
        [
            hand("333444 55 66", "4", 10),
            hand("33 444555 66", "5", 10),
            hand("KKKAAA 22 33", "A", 10),
            hand("333444555 66 77 22", "5", 15),
            hand("333444555666 77 88 99 TT", "6", 20),
        ],
    )
    def test_k_trios_plus_k_pairs_of_other_ranks(self, variant: Variant, text: str, main: str, size: int) -> None:
        assert read(text, variant) == (K.AIRPLANE_WITH_PAIRS, main, size)

    @pytest.mark.parametrize("text", [hand("333444 BJ BJ 55"), hand("333444 RJ RJ 22")])
    def test_four_player_one_same_colour_joker_pair_may_be_a_wing(self, text: str) -> None:
        assert read(text, FOUR_PLAYER) == (K.AIRPLANE_WITH_PAIRS, "4", 10)

    def test_four_player_both_joker_pairs_may_not_be_wings(self) -> None:
        assert "both joker pairs" in assert_refused("333444 BJ BJ RJ RJ", FOUR_PLAYER)

    def test_four_player_six_trios_with_six_pairs_is_the_longest(self) -> None:
        assert read("333444555666777888 99 TT JJ QQ KK AA", FOUR_PLAYER) == (K.AIRPLANE_WITH_PAIRS, "8", 30)

    @pytest.mark.parametrize("text", [hand("333444 55 55"), hand("333444 55"), hand("333444 55 6")])
    def test_wings_must_be_as_many_pairs_as_trios_of_different_ranks(self, variant: Variant, text: str) -> None:
        assert_refused(text, variant)


class TestBomb:
    @pytest.mark.parametrize(("text", "main"), [hand("3333", "3"), hand("AAAA", "A"), hand("2222", "2")])
    def test_four_cards_of_one_rank_are_a_bomb(self, variant: Variant, text: str, main: str) -> None:
        assert read(text, variant) == (K.BOMB, main, 4)

    @pytest.mark.parametrize("size", [4, 5, 6, 7, 8])
    def test_four_player_bombs_have_four_to_eight_cards(self, size: int) -> None:
        assert read("7" * size, FOUR_PLAYER) == (K.BOMB, "7", size)

    def test_three_player_has_no_five_card_bomb(self) -> None:
        assert "holds only 4" in assert_refused("33333", THREE_PLAYER)

    def test_four_player_has_no_nine_card_bomb(self) -> None:
        assert "holds only 8" in assert_refused("333333333", FOUR_PLAYER)

    def test_jokers_never_form_a_bomb(self) -> None:
        assert read("BJ BJ", FOUR_PLAYER)[0] is K.PAIR
        assert read("RJ RJ", FOUR_PLAYER)[0] is K.PAIR


class TestRocket:
    def test_three_player_rocket_is_black_and_red_joker(self) -> None:
        assert read("BJ RJ", THREE_PLAYER) == (K.ROCKET, "RJ", 2)

    def test_four_player_rocket_is_all_four_jokers(self) -> None:
        assert read("BJ BJ RJ RJ", FOUR_PLAYER) == (K.ROCKET, "RJ", 4)

    @pytest.mark.parametrize("text", [hand("BJ RJ"), hand("BJ BJ RJ"), hand("BJ RJ RJ")])
    def test_four_player_fewer_than_four_jokers_are_no_rocket(self, text: str) -> None:
        assert_refused(text, FOUR_PLAYER)


class TestQuadWithTwo:
    @pytest.mark.parametrize(
        ("text", "main"), [hand("3333 4 5", "3"), hand("4 5 AAAA", "A"), hand("2222 A BJ", "2"), hand("3333 2 RJ", "3")]
    )
    def test_three_player_quad_plus_two_singles_of_two_other_ranks(self, text: str, main: str) -> None:
        assert read(text, THREE_PLAYER) == (K.QUAD_WITH_TWO_SINGLES, main, 6)

    @pytest.mark.parametrize(
        ("text", "main"), [hand("3333 44 55", "3"), hand("2222 AA KK", "2"), hand("AA 3333 22", "3")]
    )
    def test_three_player_quad_plus_two_pairs_of_two_other_ranks(self, text: str, main: str) -> None:
        assert read(text, THREE_PLAYER) == (K.QUAD_WITH_TWO_PAIRS, main, 8)

    def test_three_player_two_singles_and_two_pairs_are_different_types(self) -> None:
        assert read("3333 4 5", THREE_PLAYER)[0] is not read("3333 44 55", THREE_PLAYER)[0]

    def test_three_player_black_and_red_joker_may_not_both_be_kickers(self) -> None:
        assert "both jokers" in assert_refused("3333 BJ RJ", THREE_PLAYER)

    @pytest.mark.parametrize("text", [hand("4444 55"), hand("4444 5555"), hand("3333 4 55"), hand("3333 4 5 6")])
    def test_three_player_kickers_must_be_two_singles_or_two_pairs_of_two_ranks(self, text: str) -> None:
        assert_refused(text, THREE_PLAYER)

    @pytest.mark.parametrize("text", [hand("3333 4 5"), hand("3333 44 55")])
    def test_four_player_does_not_play_quad_with_two(self, text: str) -> None:
        assert "not played in this variant" in assert_refused(text, FOUR_PLAYER)

    def test_four_player_two_quads_are_no_combination(self) -> None:
        assert_refused("4444 5555", FOUR_PLAYER)


class TestSplitting:
    """A player may play fewer cards of a rank than they hold; only a whole one-rank play of 4+ is a bomb."""

    def test_three_of_four_may_be_played_as_a_trio_with_a_kicker(self, variant: Variant) -> None:
        cards = parse_cards("3333 44 5", decks=variant.decks)
        moves = {(move.kind, tuple(move.ranks)) for move in legal_moves(cards, None, variant)}
        assert (K.TRIO_WITH_PAIR, parse_ranks("33344")) in moves
        assert (K.TRIO, parse_ranks("333")) in moves
        assert (K.PAIR, parse_ranks("33")) in moves
        assert (K.BOMB, parse_ranks("3333")) in moves

    def test_three_player_three_of_four_with_a_single(self) -> None:
        moves = legal_moves(parse_cards("3333 5"), None, THREE_PLAYER)
        assert classify(parse_ranks("333 5"), THREE_PLAYER) in moves
        assert classify(parse_ranks("333 3"), THREE_PLAYER).kind is K.BOMB

    def test_four_player_a_held_bomb_of_eight_may_be_played_as_any_smaller_bomb(self) -> None:
        moves = legal_moves(parse_cards("33333333", decks=2), None, FOUR_PLAYER)
        assert sorted(move.size for move in moves if move.kind is K.BOMB) == [4, 5, 6, 7, 8]

    def test_a_quad_may_lend_a_pair_to_a_pair_sequence(self, variant: Variant) -> None:
        assert classify(parse_ranks("334455"), variant) in legal_moves(
            parse_cards("3333 44 55", decks=variant.decks), None, variant
        )


QUAD_KICKERS = "four of a rank take two singles or two pairs, of two other ranks"
#: In 4p four of a rank never takes kickers: the refusal says so rather than name kickers.
NO_QUAD_KICKERS = "four of a rank take no kickers in this variant: alone they are a bomb"


class TestReasons:
    """``explain`` says why a card set is no combination; ``classify`` raises ``NotACombination`` with it."""

    @pytest.mark.parametrize(
        ("variant_", "text"),
        [
            pytest.param(THREE_PLAYER, "", id="3p-empty"),
            pytest.param(FOUR_PLAYER, "", id="4p-empty"),
            pytest.param(THREE_PLAYER, "34", id="3p-34"),
            pytest.param(THREE_PLAYER, "333444555 777", id="3p-333444555-777"),
            pytest.param(FOUR_PLAYER, "BJ RJ", id="4p-BJ-RJ"),
            pytest.param(FOUR_PLAYER, "BJ BJ RJ", id="4p-BJ-BJ-RJ"),
            pytest.param(THREE_PLAYER, "44445555", id="3p-44445555"),
            pytest.param(THREE_PLAYER, "3333 444", id="3p-3333-444"),
            pytest.param(FOUR_PLAYER, "33333 44", id="4p-33333-44"),
            pytest.param(FOUR_PLAYER, "333333 444444", id="4p-333333-444444"),
        ],
    )
    def test_classify_raises_with_the_hand_and_the_reason(self, variant_: Variant, text: str) -> None:
        reason = assert_refused(text, variant_)
        with pytest.raises(NotACombination) as caught:
            classify(parse_ranks(text), variant_)
        assert str(caught.value) == f"[{format_ranks(parse_ranks(text))}] is no combination: {reason}"

    @pytest.mark.parametrize(
        ("variant_", "text", "reason"),
        [
            pytest.param(THREE_PLAYER, "4 RJ", "a pair needs two cards of the same rank", id="3p-4-RJ"),
            pytest.param(FOUR_PLAYER, "4 RJ", "a pair needs two cards of the same rank", id="4p-4-RJ"),
            pytest.param(THREE_PLAYER, "3 4", "a pair needs two cards of the same rank", id="3p-3-4"),
            pytest.param(FOUR_PLAYER, "K 2", "a pair needs two cards of the same rank", id="4p-K-2"),
            pytest.param(THREE_PLAYER, "3 3 4", "a trio needs three cards of the same rank", id="3p-33-4"),
            pytest.param(FOUR_PLAYER, "3 7 9", "a trio needs three cards of the same rank", id="4p-3-7-9"),
            pytest.param(THREE_PLAYER, "K A 2", "a trio needs three cards of the same rank", id="3p-K-A-2"),
            pytest.param(FOUR_PLAYER, "BJ RJ", "the rocket is all 4 jokers", id="4p-BJ-RJ"),
            pytest.param(FOUR_PLAYER, "BJ BJ RJ", "the rocket is all 4 jokers", id="4p-BJ-BJ-RJ"),
            pytest.param(THREE_PLAYER, "3 4 5", "a straight needs at least 5 consecutive ranks", id="3p-3-4-5"),
            pytest.param(FOUR_PLAYER, "3 4 5 6", "a straight needs at least 5 consecutive ranks", id="4p-3-4-5-6"),
            pytest.param(THREE_PLAYER, "33 44", "a pair sequence needs at least 3 consecutive ranks", id="3p-33-44"),
            pytest.param(FOUR_PLAYER, "3 5 6 7 8", "a straight needs consecutive ranks", id="4p-3-5-6-7-8"),
            pytest.param(THREE_PLAYER, "6666 3", QUAD_KICKERS, id="3p-6666-3"),
            pytest.param(FOUR_PLAYER, "6666 3", NO_QUAD_KICKERS, id="4p-6666-3"),
            pytest.param(FOUR_PLAYER, "6666 33", NO_QUAD_KICKERS, id="4p-6666-33"),
        ],
    )
    def test_a_refusal_explains_the_reading_most_plausibly_meant(
        self, variant_: Variant, text: str, reason: str
    ) -> None:
        """Two cards read as a pair meant, three as a trio (or a straight when consecutive)."""
        assert assert_refused(text, variant_) == reason

    def test_classify_names_the_cards_in_the_message(self) -> None:
        with pytest.raises(NotACombination, match=r"^\[3 3 3 4 4 4 5 5 5 7 7 7\] is no combination: "):
            classify(parse_ranks("777 333444555"), THREE_PLAYER)

    def test_not_a_combination_is_a_value_error(self) -> None:
        assert issubclass(NotACombination, ValueError)

    def test_explain_is_none_for_a_combination(self, variant: Variant) -> None:
        assert explain(parse_ranks("333 44"), variant) is None

    def test_classify_accepts_cards_as_well_as_ranks(self, variant: Variant) -> None:
        cards = parse_cards("3c 3d' 3h 4s 4s'", decks=2) if variant.decks == 2 else parse_cards("3c 3d 3h 4s 4h")
        assert classify(cards, variant) == classify(parse_ranks("33344"), variant)


# -- the exhaustive one-reading proof --------------------------------------------------------


def small_card_sets(variant: Variant, max_size: int) -> Iterator[Counts]:
    """Every non-empty rank multiset of at most ``max_size`` cards that the deck allows."""
    limits = [deck_limit(rank, variant.decks) for rank in ALL_RANKS]

    def extend(rank: int, room: int) -> Iterator[Counts]:
        if rank == len(limits):
            yield ()
            return
        for count in range(min(limits[rank], room) + 1):
            for rest in extend(rank + 1, room - count):
                yield (count, *rest)

    return (counts for counts in extend(0, max_size) if any(counts))


def documented_counts() -> dict[str, dict[CombinationKind, int]]:
    """The per-type counts table of docs/combinations.md, by variant name."""
    counts: dict[str, dict[CombinationKind, int]] = {"3p": {}, "4p": {}}
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        match = re.fullmatch(r"\|\s*(\d+)\s*\|[^|]*\|\s*([\d,]+|—)\s*\|\s*([\d,]+|—)\s*\|", line.strip())
        if match:
            number, *cells = match.groups()
            for name, cell in zip(("3p", "4p"), cells, strict=True):
                if cell != "—":
                    counts[name][K(int(number))] = int(cell.replace(",", ""))
    return counts


class TestOneReading:
    """Decision (one reading per card set), proved by enumerating every valid card set."""

    def test_every_valid_card_set_has_exactly_one_reading(self, variant: Variant) -> None:
        ambiguous = {ranks_of(counts): found for counts, found in readings(variant).items() if len(found) != 1}
        assert not ambiguous

    def test_classify_returns_exactly_that_reading(self, variant: Variant) -> None:
        wrong = []
        for play in catalogue(variant):
            combination = try_classify(play.ranks, variant)
            if combination is None or combination != play.combination():
                wrong.append((play, combination))
        assert not wrong

    def test_legal_moves_from_the_whole_deck_are_exactly_the_valid_card_sets(self, variant: Variant) -> None:
        moves = legal_moves(make_deck(variant.decks), None, variant)
        fitting = [counts_of(move.ranks) for move in moves if move.size <= variant.landlord_hand_size]
        assert len(fitting) == len(set(fitting)), "a play is listed twice"
        assert set(fitting) == set(readings(variant))

    def test_a_trio_sequence_of_four_has_no_airplane_reading(self) -> None:
        (reading,) = readings(THREE_PLAYER)[counts_of(parse_ranks("333444555666"))]
        assert reading.kind is K.TRIO_SEQUENCE

    def test_every_other_card_set_of_up_to_six_cards_is_refused_with_a_reason(self, variant: Variant) -> None:
        valid = readings(variant)
        wrong = []
        for counts in small_card_sets(variant, 6):
            ranks = ranks_of(counts)
            reason = explain(ranks, variant)
            if (counts in valid) != (reason is None) or reason == "":
                wrong.append((ranks, reason))
        assert not wrong

    @given(st.data())
    def test_any_card_set_a_hand_can_hold_is_a_combination_exactly_when_the_table_allows_it(
        self, data: st.DataObject
    ) -> None:
        variant = data.draw(variants())
        cards = data.draw(hands(variant))
        assert (try_classify(cards, variant) is not None) == (counts_of(cards) in readings(variant))

    @given(st.data())
    def test_a_valid_play_with_one_card_more_or_less_is_valid_only_if_the_table_allows_it(
        self, data: st.DataObject
    ) -> None:
        variant = data.draw(variants())
        counts = list(data.draw(st.sampled_from(catalogue(variant))).counts)
        rank = data.draw(st.sampled_from(ALL_RANKS))
        counts[rank] += data.draw(st.sampled_from([-1, 1]))
        assume(0 <= counts[rank] <= deck_limit(rank, variant.decks))
        assume(0 < sum(counts) <= variant.landlord_hand_size)
        changed = tuple(counts)
        assert (try_classify(ranks_of(changed), variant) is not None) == (changed in readings(variant))

    @pytest.mark.parametrize("variant_", VARIANT_LIST, ids=["3p", "4p"])
    def test_counts_per_type_are_those_recorded_in_docs_combinations_md(self, variant_: Variant) -> None:
        counted = collections.Counter(play.reading.kind for play in catalogue(variant_))
        assert documented_counts()[variant_.name] == dict(counted)

    def test_sizes_stay_within_the_landlords_hand_and_the_table_limits(self, variant: Variant) -> None:
        sizes = collections.defaultdict(set)
        for play in catalogue(variant):
            sizes[play.reading.kind].add(play.reading.size)
        assert max(itertools.chain.from_iterable(sizes.values())) <= variant.landlord_hand_size
        assert sizes[K.STRAIGHT] == set(range(5, 13))
        limit = variant.landlord_hand_size
        assert max(sizes[K.PAIR_SEQUENCE]) == min(24, limit - limit % 2)
        assert max(sizes[K.TRIO_SEQUENCE]) == limit - limit % 3
        assert max(sizes[K.AIRPLANE_WITH_PAIRS]) == limit - limit % 5
