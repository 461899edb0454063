"""docs/rules.md section 1: ranks, suits, decks, card ids and the compact notation."""

import collections

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dizhu.rules import (
    FOUR_PLAYER,
    RANKS,
    THREE_PLAYER,
    Card,
    NotationError,
    Rank,
    Suit,
    Variant,
    card_by_id,
    cards_by_id,
    format_cards,
    format_ranks,
    make_deck,
    parse_cards,
    parse_ranks,
)
from dizhu.rules.cards import sorted_cards
from tests.support.rule_strategies import hands, variants

R = Rank


class TestRank:
    def test_ranks_run_low_to_high_from_three_to_red_joker(self) -> None:
        symbols = [rank.symbol for rank in sorted(Rank)]
        assert symbols == ["3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K", "A", "2", "BJ", "RJ"]

    def test_two_is_above_ace_and_below_the_black_joker(self) -> None:
        assert R.ACE < R.TWO < R.BLACK_JOKER < R.RED_JOKER

    def test_ranks_tuple_is_indexable_by_rank_value(self) -> None:
        assert all(RANKS[rank] is rank for rank in Rank)
        assert len(RANKS) == 15

    @pytest.mark.parametrize("rank", [r for r in Rank if R.THREE <= r <= R.ACE], ids=lambda r: r.symbol)
    def test_three_up_to_ace_are_chainable(self, rank: Rank) -> None:
        assert rank.is_chainable

    @pytest.mark.parametrize("rank", [R.TWO, R.BLACK_JOKER, R.RED_JOKER], ids=lambda r: r.symbol)
    def test_two_and_the_jokers_are_not_chainable(self, rank: Rank) -> None:
        assert not rank.is_chainable

    def test_only_the_two_jokers_are_jokers(self) -> None:
        assert [rank for rank in Rank if rank.is_joker] == [R.BLACK_JOKER, R.RED_JOKER]


class TestDeck:
    @pytest.mark.parametrize(("variant", "size"), [(THREE_PLAYER, 54), (FOUR_PLAYER, 108)], ids=["3p", "4p"])
    def test_deck_has_54_cards_per_deck(self, variant: Variant, size: int) -> None:
        assert variant.deck_size == size
        assert len(make_deck(variant.decks)) == size

    def test_every_card_of_a_deck_is_distinct(self, variant: Variant) -> None:
        deck = make_deck(variant.decks)
        assert len(set(deck)) == len(deck)

    def test_each_normal_rank_has_four_cards_and_each_joker_one_per_deck(self, variant: Variant) -> None:
        counts = collections.Counter(card.rank for card in make_deck(variant.decks))
        for rank in Rank:
            assert counts[rank] == (1 if rank.is_joker else 4) * variant.decks

    def test_four_player_deck_holds_every_rank_and_suit_twice_as_two_copies(self) -> None:
        by_face = collections.defaultdict(list)
        for card in make_deck(2):
            by_face[card.rank, card.suit].append(card.copy)
        assert len(by_face) == 54
        assert all(sorted(copies) == [0, 1] for copies in by_face.values())

    def test_three_player_deck_holds_only_first_copies(self) -> None:
        assert {card.copy for card in make_deck(1)} == {0}

    @pytest.mark.parametrize(
        ("variant", "hand", "kitty", "landlord"), [(THREE_PLAYER, 17, 3, 20), (FOUR_PLAYER, 25, 8, 33)]
    )
    def test_hand_and_kitty_sizes_follow_the_table(
        self, variant: Variant, hand: int, kitty: int, landlord: int
    ) -> None:
        assert (variant.hand_size, variant.kitty_size, variant.landlord_hand_size) == (hand, kitty, landlord)
        assert variant.players * variant.hand_size + variant.kitty_size == variant.deck_size

    def test_jokers_carry_no_suit(self) -> None:
        assert {card.suit for card in make_deck(2) if card.rank.is_joker} == {Suit.NONE}


class TestCardId:
    def test_ids_are_the_positions_in_canonical_deck_order(self) -> None:
        assert [card.id for card in make_deck(2)] == list(range(108))

    def test_id_is_fifty_four_times_copy_plus_four_times_rank_plus_suit(self) -> None:
        assert Card(R.THREE, Suit.CLUBS).id == 0
        assert Card(R.TEN, Suit.HEARTS).id == 4 * 7 + 2
        assert Card(R.TWO, Suit.SPADES).id == 51
        assert Card(R.FIVE, Suit.DIAMONDS, copy=1).id == 54 + 4 * 2 + 1

    def test_jokers_have_ids_52_and_53_in_each_deck(self) -> None:
        assert [Card(R.BLACK_JOKER, Suit.NONE).id, Card(R.RED_JOKER, Suit.NONE).id] == [52, 53]
        assert [Card(R.BLACK_JOKER, Suit.NONE, 1).id, Card(R.RED_JOKER, Suit.NONE, 1).id] == [106, 107]

    def test_card_by_id_inverts_id(self) -> None:
        assert all(card_by_id(card.id) == card for card in make_deck(2))

    def test_cards_by_id_keeps_the_order_given(self) -> None:
        assert cards_by_id([53, 0, 107]) == (
            Card(R.RED_JOKER, Suit.NONE),
            Card(R.THREE, Suit.CLUBS),
            Card(R.RED_JOKER, Suit.NONE, 1),
        )

    @given(st.lists(st.integers(0, 107), unique=True))
    def test_sorted_cards_sorts_ids_as_cards_sort_rank_then_suit_then_copy(self, card_ids: list[int]) -> None:
        assert sorted_cards(card_ids) == tuple(sorted(cards_by_id(card_ids)))

    def test_sorted_cards_puts_both_copies_of_a_card_together(self) -> None:
        assert [card.id for card in sorted_cards([54, 1, 0])] == [0, 54, 1]

    @pytest.mark.parametrize("card_id", [-1, 108, 1000])
    def test_card_by_id_refuses_an_id_outside_the_two_decks(self, card_id: int) -> None:
        with pytest.raises(ValueError, match=str(card_id)):
            card_by_id(card_id)


class TestParseRanks:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("33344", [R.THREE] * 3 + [R.FOUR] * 2),
            ("3 3 3 4 4", [R.THREE] * 3 + [R.FOUR] * 2),
            ("3c3d3h4s4c", [R.THREE] * 3 + [R.FOUR] * 2),
            ("3,3,3,4,4", [R.THREE] * 3 + [R.FOUR] * 2),
            ("10JQKA", [R.TEN, R.JACK, R.QUEEN, R.KING, R.ACE]),
            ("TJQKA", [R.TEN, R.JACK, R.QUEEN, R.KING, R.ACE]),
            ("tjqka", [R.TEN, R.JACK, R.QUEEN, R.KING, R.ACE]),
            ("2BJRJ", [R.TWO, R.BLACK_JOKER, R.RED_JOKER]),
            ("bj rj", [R.BLACK_JOKER, R.RED_JOKER]),
            ("RJ BJ 2", [R.TWO, R.BLACK_JOKER, R.RED_JOKER]),
            ("Th' 3", [R.THREE, R.TEN]),
            ("", []),
        ],
        ids=lambda value: value if isinstance(value, str) else None,
    )
    def test_parses_compact_spaced_suited_and_ten_spellings_sorted_low_to_high(
        self, text: str, expected: list[Rank]
    ) -> None:
        assert parse_ranks(text) == tuple(expected)

    def test_ignores_deck_limits_because_ranks_are_not_cards(self) -> None:
        assert parse_ranks("33333") == (R.THREE,) * 5

    @given(st.lists(st.sampled_from(RANKS), max_size=40))
    def test_format_then_parse_round_trips(self, ranks: list[Rank]) -> None:
        assert parse_ranks(format_ranks(ranks)) == tuple(sorted(ranks))

    def test_format_ranks_is_space_separated_low_to_high(self) -> None:
        assert format_ranks([R.RED_JOKER, R.TEN, R.THREE, R.THREE]) == "3 3 T RJ"


class TestParseCards:
    def test_a_card_without_suit_takes_the_lowest_free_card_of_its_rank(self) -> None:
        assert [str(card) for card in parse_cards("333")] == ["3c", "3d", "3h"]

    def test_explicit_suits_are_kept_and_bare_ranks_fill_around_them(self) -> None:
        assert [str(card) for card in parse_cards("3 3c 3d")] == ["3c", "3d", "3h"]

    def test_four_player_bare_ranks_continue_into_the_second_deck(self) -> None:
        assert {str(card) for card in parse_cards("33333", decks=2)} == {"3c", "3d", "3h", "3s", "3c'"}

    def test_second_deck_marker_names_the_second_copy(self) -> None:
        assert parse_cards("Th'", decks=2) == (Card(R.TEN, Suit.HEARTS, 1),)

    def test_second_deck_marker_on_a_joker_names_the_second_joker(self) -> None:
        assert parse_cards("BJ' RJ'", decks=2) == (Card(R.BLACK_JOKER, Suit.NONE, 1), Card(R.RED_JOKER, Suit.NONE, 1))

    def test_four_player_holds_two_black_and_two_red_jokers(self) -> None:
        cards = parse_cards("BJ BJ RJ RJ", decks=2)
        assert len(set(cards)) == 4
        assert sorted(card.copy for card in cards) == [0, 0, 1, 1]

    def test_second_deck_marker_without_suit_names_a_second_deck_card(self) -> None:
        (card,) = parse_cards("3'", decks=2)
        assert card.rank is R.THREE
        assert card.copy == 1

    @given(st.data())
    def test_format_then_parse_round_trips_with_suits_and_copies(self, data: st.DataObject) -> None:
        variant = data.draw(variants())
        cards = data.draw(hands(variant, max_size=variant.deck_size))
        assert parse_cards(format_cards(cards), decks=variant.decks) == tuple(sorted(cards))

    def test_format_cards_writes_suits_and_second_deck_marks(self) -> None:
        cards = [Card(R.RED_JOKER, Suit.NONE, 1), Card(R.TEN, Suit.HEARTS, 1), Card(R.THREE, Suit.CLUBS)]
        assert format_cards(cards) == "3c Th' RJ'"

    @pytest.mark.parametrize("decks", [1, 2])
    def test_a_whole_deck_parses_from_bare_ranks(self, decks: int) -> None:
        text = " ".join(card.rank.symbol for card in make_deck(decks))
        assert parse_cards(text, decks=decks) == tuple(sorted(make_deck(decks)))


class TestNotationError:
    """Bad notation raises ``NotationError`` (a ``ValueError``) whose message names the text and the fault."""

    @pytest.mark.parametrize(
        ("text", "fragment"),
        [
            ("3x4", "'x' at position 1 is not a rank"),
            ("1", "'1' at position 0 is not a rank"),
            ("B", "'B' at position 0 is not a rank"),
            ("33 Z", "'Z' at position 3 is not a rank"),
        ],
        ids=["3x4", "1", "B", "33-Z"],
    )
    def test_a_bad_character_is_named_with_its_position(self, text: str, fragment: str) -> None:
        with pytest.raises(NotationError, match=fragment) as caught:
            parse_ranks(text)
        assert repr(text) in str(caught.value)

    @pytest.mark.parametrize("text", ["BJc", "RJs", "3 bjh"])
    def test_a_joker_with_a_suit_is_refused(self, text: str) -> None:
        with pytest.raises(NotationError, match="a joker has no suit"):
            parse_cards(text, decks=2)

    @pytest.mark.parametrize(
        ("text", "decks", "rank"),
        [("33333", 1, "3"), ("BJ BJ", 1, "BJ"), ("RJ RJ RJ", 2, "RJ"), ("222222222", 2, "2"), ("3c3d3h3s3", 1, "3")],
    )
    def test_more_cards_of_a_rank_than_the_decks_hold_is_refused(self, text: str, decks: int, rank: str) -> None:
        with pytest.raises(NotationError, match=rf"{decks} deck\(s\) hold no further {rank}"):
            parse_cards(text, decks=decks)

    @pytest.mark.parametrize("text", ["3c 3c", "Th' Th'", "BJ' BJ'"])
    def test_a_card_listed_twice_is_refused(self, text: str) -> None:
        with pytest.raises(NotationError, match="is listed twice"):
            parse_cards(text, decks=2)

    @pytest.mark.parametrize("text", ["3c'", "BJ'", "3'"])
    def test_a_second_deck_card_in_one_deck_is_refused(self, text: str) -> None:
        with pytest.raises(NotationError, match="needs a second deck"):
            parse_cards(text, decks=1)

    def test_notation_error_is_a_value_error(self) -> None:
        assert issubclass(NotationError, ValueError)
