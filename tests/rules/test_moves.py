"""Legal-move generation (docs/rules.md sections 5, 6 and 7): ``legal_moves`` and ``pick_cards``.

Examples first; then ``legal_moves`` is checked against two brute forces that share no code
with it: the independent catalogue of every valid play (``strategies.catalogue``) filtered
by "the hand holds it and it beats the play to beat" (``strategies.spec_beats``), and, for
small hands, every sub-multiset of the hand run through ``classify``.
"""

import functools
import itertools

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from dizhu.rules import (
    FOUR_PLAYER,
    THREE_PLAYER,
    Card,
    Combination,
    CombinationKind,
    Variant,
    beats,
    classify,
    legal_moves,
    make_deck,
    parse_cards,
    parse_ranks,
    pick_cards,
    try_classify,
)
from tests.support.rule_strategies import (
    Counts,
    Play,
    Reading,
    catalogue,
    counts_of,
    hands_holding_a_play,
    is_subset,
    ranks_of,
    spec_beats,
    variant_hand_and_play,
    variants,
)

# Once per rules engine: legal moves are computed by each engine.
pytestmark = pytest.mark.usefixtures("each_engine")

K = CombinationKind


def play(text: str, variant: Variant) -> Combination:
    return classify(parse_ranks(text), variant)


def moves(hand: str, to_beat: str | None, variant: Variant) -> list[str]:
    """``legal_moves`` for a hand in notation, each move spelled compactly: ``"3334"``."""
    beaten = None if to_beat is None else play(to_beat, variant)
    return [
        "".join(rank.symbol for rank in move.ranks)
        for move in legal_moves(parse_cards(hand, variant.decks), beaten, variant)
    ]


def reading_of(combination: Combination) -> Reading:
    return Reading(combination.kind, int(combination.main_rank), combination.size)


@functools.cache
def _indexed(variant: Variant) -> tuple[tuple[int, tuple[tuple[int, int], ...], Play], ...]:
    """The catalogue with each play's non-zero (rank, count) parts, for a fast subset test."""
    return tuple(
        (sum(each.counts), tuple((rank, count) for rank, count in enumerate(each.counts) if count), each)
        for each in catalogue(variant)
    )


def brute_force_from_catalogue(hand: Counts, to_beat: Play | None, variant: Variant) -> set[tuple[int, ...]]:
    """Every valid play the hand holds that beats ``to_beat``, from the independent catalogue."""
    size = sum(hand)
    return {
        each.ranks
        for play_size, parts, each in _indexed(variant)
        if play_size <= size
        and all(hand[rank] >= count for rank, count in parts)
        and (to_beat is None or spec_beats(each.reading, to_beat.reading, variant))
    }


def brute_force_from_sub_multisets(hand: Counts, to_beat: Play | None, variant: Variant) -> set[tuple[int, ...]]:
    """Every sub-multiset of the hand that ``classify`` accepts and that beats ``to_beat``."""
    found = set()
    for counts in itertools.product(*(range(count + 1) for count in hand)):
        if not any(counts):
            continue
        combination = try_classify(ranks_of(counts), variant)
        if combination is not None and (
            to_beat is None or spec_beats(reading_of(combination), to_beat.reading, variant)
        ):
            found.add(ranks_of(counts))
    return found


class TestLeading:
    def test_lists_every_kicker_choice_as_its_own_play(self) -> None:
        trios = [move for move in moves("333 4 5 BJ", None, THREE_PLAYER) if len(move) > 3]
        assert trios == ["3334", "3335", "333BJ"]

    def test_four_player_lists_every_pair_choice_for_a_trio(self) -> None:
        with_pair = [
            move for move in moves("333 44 55 BJ BJ", None, FOUR_PLAYER) if move.startswith("333") and len(move) > 3
        ]
        assert sorted(with_pair) == ["33344", "33355", "333BJBJ"]

    def test_lists_every_airplane_wing_choice(self) -> None:
        airplanes = [m for m in moves("333444 55 66 77", None, THREE_PLAYER) if m.startswith("333444") and len(m) > 6]
        singles = {"33344456", "33344457", "33344467"}
        pairs = {"3334445566", "3334445577", "3334446677"}
        assert set(airplanes) == singles | pairs
        assert len(airplanes) == len(set(airplanes))

    def test_two_singles_of_different_ranks_give_just_the_singles(self, variant: Variant) -> None:
        assert moves("3 4", None, variant) == ["3", "4"]

    def test_whole_three_player_deck_offers_the_rocket_once(self) -> None:
        leads = legal_moves(make_deck(1), None, THREE_PLAYER)
        assert [move.kind for move in leads].count(K.ROCKET) == 1

    def test_three_player_never_offers_both_jokers_as_kickers(self) -> None:
        leads = moves("3333 444555 BJ RJ", None, THREE_PLAYER)
        assert "3333BJRJ" not in leads
        assert "444555BJRJ" not in leads
        assert "BJRJ" in leads


class TestFollowing:
    def test_returns_higher_plays_of_the_same_type_then_bombs_then_the_rocket(self) -> None:
        assert moves("33 44 55 6666 BJ RJ", "44", THREE_PLAYER) == ["55", "66", "6666", "BJRJ"]

    def test_returns_only_straights_of_the_same_length(self, variant: Variant) -> None:
        assert moves("3456789", "34567", variant) == ["45678", "56789"]

    def test_a_longer_straight_does_not_answer_a_short_one(self, variant: Variant) -> None:
        assert moves("456789", "345678", variant) == ["456789"]
        assert moves("45678", "345678", variant) == []

    def test_a_bomb_is_answered_only_by_stronger_bombs_and_the_rocket(self) -> None:
        assert moves("5555 7777 BJ RJ 2", "6666", THREE_PLAYER) == ["7777", "BJRJ"]

    def test_four_player_bombs_answer_by_size_then_rank(self) -> None:
        assert moves("33333 7777 8888 BJ BJ RJ RJ", "7777", FOUR_PLAYER) == ["8888", "33333", "BJBJRJRJ"]

    def test_four_player_red_joker_pair_answers_the_black_joker_pair(self) -> None:
        assert moves("22 BJ BJ RJ RJ", "BJ BJ", FOUR_PLAYER) == ["RJRJ", "BJBJRJRJ"]

    def test_nothing_answers_a_rocket(self, variant: Variant) -> None:
        rocket = play("BJ RJ" if variant.decks == 1 else "BJ BJ RJ RJ", variant)
        assert legal_moves(make_deck(variant.decks), rocket, variant) == []

    def test_kickers_of_the_play_to_beat_do_not_matter(self) -> None:
        assert moves("444 2 RJ", "333 K", THREE_PLAYER) == ["4442", "444RJ"]

    def test_no_answer_gives_an_empty_list_because_passing_is_not_a_play(self, variant: Variant) -> None:
        assert moves("3 4 5", "2", variant) == []


class TestPickCards:
    def test_picks_the_held_cards_of_the_play_lowest_suit_first(self) -> None:
        hand = parse_cards("3s 3h 3d 3c 4d 5h")
        picked = pick_cards(hand, play("333 4", THREE_PLAYER))
        assert [str(card) for card in picked] == ["3c", "3d", "3h", "4d"]

    def test_four_player_picks_across_both_decks(self) -> None:
        hand = parse_cards("3c 3c' BJ BJ' 4h", decks=2)
        assert set(pick_cards(hand, play("33", FOUR_PLAYER))) == set(parse_cards("3c 3c'", decks=2))
        assert set(pick_cards(hand, play("BJ BJ", FOUR_PLAYER))) == set(parse_cards("BJ BJ'", decks=2))

    def test_picked_cards_are_held_and_make_up_the_play(self, variant: Variant) -> None:
        hand = parse_cards("33344 BJ 2", decks=variant.decks)
        for move in legal_moves(hand, None, variant):
            picked = pick_cards(hand, move)
            assert set(picked) <= set(hand)
            assert len(set(picked)) == len(picked)
            assert tuple(sorted(card.rank for card in picked)) == move.ranks

    @pytest.mark.parametrize(("hand", "text"), [("333", "3333"), ("3334", "55"), ("", "3")])
    def test_raises_for_a_play_the_hand_does_not_hold(self, variant: Variant, hand: str, text: str) -> None:
        with pytest.raises(ValueError, match="the hand does not hold"):
            pick_cards(parse_cards(hand, variant.decks), play(text, variant))


class TestAgainstBruteForce:
    @given(variant_hand_and_play())
    def test_equals_every_held_play_of_the_catalogue_that_beats(
        self, case: tuple[Variant, tuple[Card, ...], Play | None]
    ) -> None:
        variant, hand, to_beat = case
        found = legal_moves(hand, None if to_beat is None else to_beat.combination(), variant)
        assert {move.ranks for move in found} == brute_force_from_catalogue(counts_of(hand), to_beat, variant)

    @given(variant_hand_and_play(max_size=10))
    def test_small_hands_equal_every_sub_multiset_that_classifies_and_beats(
        self, case: tuple[Variant, tuple[Card, ...], Play | None]
    ) -> None:
        variant, hand, to_beat = case
        found = legal_moves(hand, None if to_beat is None else to_beat.combination(), variant)
        assert {move.ranks for move in found} == brute_force_from_sub_multisets(counts_of(hand), to_beat, variant)

    @given(variant_hand_and_play())
    def test_lists_no_play_twice_and_every_play_classifies_to_itself_and_beats(
        self, case: tuple[Variant, tuple[Card, ...], Play | None]
    ) -> None:
        variant, hand, to_beat = case
        beaten = None if to_beat is None else to_beat.combination()
        found = legal_moves(hand, beaten, variant)
        assert len({move.ranks for move in found}) == len(found)
        for move in found:
            assert classify(move.ranks, variant) == move
            assert is_subset(counts_of(move.ranks), counts_of(hand))
            assert beaten is None or beats(move, beaten)

    @given(variant_hand_and_play())
    def test_following_lists_the_same_type_lowest_first_then_bombs_weakest_first_then_the_rocket(
        self, case: tuple[Variant, tuple[Card, ...], Play | None]
    ) -> None:
        variant, hand, to_beat = case
        assume(to_beat is not None)
        assert to_beat is not None
        found = legal_moves(hand, to_beat.combination(), variant)
        order = [(move.is_bomb_like, move.kind is K.ROCKET, move.size, move.main_rank) for move in found]
        same_kind = [move.main_rank for move in found if move.kind is to_beat.reading.kind and not move.is_bomb_like]
        assert order == sorted(order)
        assert same_kind == sorted(same_kind)

    @given(variants().flatmap(lambda variant: st.tuples(st.just(variant), hands_holding_a_play(variant))))
    def test_leading_lists_the_types_in_table_order_each_from_its_lowest_rank_then_bombs_then_the_rocket(
        self, case: tuple[Variant, tuple[Card, ...]]
    ) -> None:
        variant, hand = case
        found = legal_moves(hand, None, variant)
        order = [
            (move.kind is K.ROCKET, move.size, move.main_rank)
            if move.is_bomb_like
            else (False, 0, move.kind, move.main_rank - move.chain_length + 1)
            for move in found
        ]
        non_bombs = [key for key in order if len(key) == 4]
        bombs = [key for key in order if len(key) == 3]
        assert order == non_bombs + bombs
        assert non_bombs == sorted(non_bombs)
        assert bombs == sorted(bombs)
