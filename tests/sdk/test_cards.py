"""The SDK's card notation (dizhu.client.cards): parsing, formatting, card ids, picking from a hand."""

from __future__ import annotations

import pytest

from dizhu.client.cards import (
    NotationError,
    card_from_id,
    card_id,
    format_cards,
    format_ranks,
    parse_cards,
    parse_ranks,
    pick,
    rank_counts,
)
from dizhu.v1 import cards_pb2


class TestParse:
    def test_bare_ranks_take_the_lowest_free_suits(self) -> None:
        assert format_cards(parse_cards("3 3 4 T J Q K A 2 BJ RJ")) == "3c 3d 4c Tc Jc Qc Kc Ac 2c BJ RJ"

    def test_suits_spaces_and_ten_spellings(self) -> None:
        assert format_cards(parse_cards("3c3h10sTd")) == "3c 3h Td Ts"

    def test_a_suited_card_is_taken_before_bare_ones(self) -> None:
        assert format_cards(parse_cards("3 3c")) == "3c 3d"

    def test_second_deck_marker(self) -> None:
        cards = parse_cards("Th' BJ' BJ", decks=2)
        assert [(c.rank, c.suit, c.copy) for c in cards] == [
            (cards_pb2.RANK_TEN, cards_pb2.SUIT_HEARTS, 1),
            (cards_pb2.RANK_BLACK_JOKER, cards_pb2.SUIT_JOKER, 0),
            (cards_pb2.RANK_BLACK_JOKER, cards_pb2.SUIT_JOKER, 1),
        ]
        assert format_cards(cards) == "Th' BJ BJ'"

    def test_eight_threes_fit_in_two_decks(self) -> None:
        assert len(parse_cards("33333333", decks=2)) == 8

    @pytest.mark.parametrize(
        ("text", "decks"),
        [("X", 1), ("33333", 1), ("3c 3c", 1), ("BJh", 1), ("Th'", 1), ("BJ BJ", 1), ("333333333", 2)],
        ids=["not-a-rank", "five-threes", "listed-twice", "joker-with-suit", "second-deck-in-3p", "two-bj-3p", "9x3"],
    )
    def test_bad_notation_is_refused(self, text: str, decks: int) -> None:
        with pytest.raises(NotationError):
            parse_cards(text, decks=decks)

    def test_ranks_ignore_suits_and_sort(self) -> None:
        assert parse_ranks("2 3h RJ 3") == [
            cards_pb2.RANK_THREE,
            cards_pb2.RANK_THREE,
            cards_pb2.RANK_TWO,
            cards_pb2.RANK_RED_JOKER,
        ]
        assert format_ranks(parse_ranks("K 3 BJ T")) == "3 T K BJ"
        assert rank_counts(parse_cards("3 3 4"))[cards_pb2.RANK_THREE] == 2


class TestCardIds:
    @pytest.mark.parametrize(
        ("text", "decks", "expected"),
        [("3c", 1, 0), ("As", 1, 47), ("BJ", 1, 52), ("RJ", 1, 53), ("2h'", 2, 104), ("RJ'", 2, 107)],
    )
    def test_ids_match_the_api_guide(self, text: str, decks: int, expected: int) -> None:
        (card,) = parse_cards(text, decks=decks)
        assert card_id(card) == expected
        assert card_from_id(expected) == card

    def test_every_id_round_trips(self) -> None:
        assert [card_id(card_from_id(n)) for n in range(108)] == list(range(108))

    def test_every_card_has_the_rules_cores_id(self) -> None:
        """One table of card ids, the rules core's: the SDK's ``card_id`` (which the conformance
        runner and the tests' helpers use too) gives every card of two decks that id."""
        from dizhu.rules import make_deck
        from dizhu.service.convert.cards import card_to_proto

        deck = make_deck(2)
        assert [card_id(card_to_proto(card)) for card in deck] == [card.id for card in deck]

    def test_out_of_range_id(self) -> None:
        with pytest.raises(ValueError, match="no card"):
            card_from_id(108)


class TestPick:
    def test_bare_ranks_pick_the_lowest_ids_of_the_hand(self) -> None:
        hand = parse_cards("3h 3s 4d 5s 5c")
        assert format_cards(pick(hand, "3 5")) == "3h 5c"

    def test_written_suits_are_honoured(self) -> None:
        hand = parse_cards("3h 3s 4d")
        assert format_cards(pick(hand, "3 3h")) == "3h 3s"

    def test_a_card_not_in_the_hand(self) -> None:
        with pytest.raises(NotationError, match="no \\(further\\) 3"):
            pick(parse_cards("3h 4d"), "3 3")
