"""RulesService: Classify, ListLegalMoves, Compare, and what they refuse."""

from __future__ import annotations

import pytest

from dizhu.v1 import cards_pb2
from dizhu.v1 import rules_service_pb2 as rpb
from tests.support.grpc_calls import FOUR, THREE, RulesStub, card, cards_in, invalid

R = cards_pb2
K = cards_pb2


def _ranks(*ranks: int) -> cards_pb2.CardSet:
    return cards_pb2.CardSet(ranks=list(ranks))  # type: ignore[arg-type]


def _cards(*cards: cards_pb2.Card) -> cards_pb2.CardSet:
    return cards_pb2.CardSet(cards=list(cards))


class TestClassify:
    async def test_a_trio_with_a_single_reads_as_exactly_one_combination(self, rules: RulesStub) -> None:
        cards = _cards(
            card(R.RANK_THREE, R.SUIT_CLUBS),
            card(R.RANK_THREE, R.SUIT_HEARTS),
            card(R.RANK_FOUR, R.SUIT_SPADES),
            card(R.RANK_THREE, R.SUIT_DIAMONDS),
        )
        response = await rules.Classify(rpb.ClassifyRequest(variant=THREE, cards=cards))
        (combination,) = response.classification.combinations
        assert combination.kind == K.COMBINATION_KIND_TRIO_WITH_SINGLE
        assert combination.main_rank == R.RANK_THREE
        assert combination.size == 4
        assert list(combination.ranks) == [R.RANK_THREE] * 3 + [R.RANK_FOUR]
        assert response.classification.reason == ""

    @pytest.mark.parametrize(
        ("variant", "ranks", "kind", "main"),
        [
            (THREE, (R.RANK_BLACK_JOKER, R.RANK_RED_JOKER), K.COMBINATION_KIND_ROCKET, R.RANK_RED_JOKER),
            (FOUR, (R.RANK_BLACK_JOKER, R.RANK_BLACK_JOKER), K.COMBINATION_KIND_PAIR, R.RANK_BLACK_JOKER),
            (FOUR, (R.RANK_ACE,) * 6, K.COMBINATION_KIND_BOMB, R.RANK_ACE),
            (
                THREE,
                (R.RANK_TEN, R.RANK_JACK, R.RANK_QUEEN, R.RANK_KING, R.RANK_ACE),
                K.COMBINATION_KIND_STRAIGHT,
                R.RANK_ACE,
            ),
        ],
        ids=["rocket-3p", "black-joker-pair-4p", "six-ace-bomb-4p", "straight-to-ace"],
    )
    async def test_ranks_read_as_their_combination(
        self, rules: RulesStub, variant: cards_pb2.Variant, ranks: tuple[int, ...], kind: int, main: int
    ) -> None:
        response = await rules.Classify(rpb.ClassifyRequest(variant=variant, cards=_ranks(*ranks)))
        (combination,) = response.classification.combinations
        assert (combination.kind, combination.main_rank, combination.size) == (kind, main, len(ranks))

    @pytest.mark.parametrize(
        ("variant", "ranks", "reason"),
        [
            (THREE, (R.RANK_THREE, R.RANK_FIVE), "NOT_A_COMBINATION"),
            (THREE, (R.RANK_JACK, R.RANK_QUEEN, R.RANK_KING, R.RANK_ACE, R.RANK_TWO), "NOT_A_COMBINATION"),
            (FOUR, (R.RANK_NINE,) * 3 + (R.RANK_FOUR,), "NOT_IN_VARIANT"),
            (THREE, (), "EMPTY"),
        ],
        ids=["two-ranks", "straight-through-two", "trio-with-single-4p", "empty"],
    )
    async def test_a_set_that_is_no_combination_says_why(
        self, rules: RulesStub, variant: cards_pb2.Variant, ranks: tuple[int, ...], reason: str
    ) -> None:
        response = await rules.Classify(rpb.ClassifyRequest(variant=variant, cards=_ranks(*ranks)))
        assert not response.classification.combinations
        assert response.classification.reason == reason


class TestListLegalMoves:
    async def test_leading_lists_every_combination_in_order_and_cannot_pass(self, rules: RulesStub) -> None:
        hand = _ranks(R.RANK_FOUR, R.RANK_THREE, R.RANK_THREE)
        response = await rules.ListLegalMoves(rpb.ListLegalMovesRequest(variant=THREE, hand=hand))
        assert not response.can_pass
        moves = [(m.combination.kind, m.combination.main_rank) for m in response.moves]
        assert moves == [
            (K.COMBINATION_KIND_SINGLE, R.RANK_THREE),
            (K.COMBINATION_KIND_SINGLE, R.RANK_FOUR),
            (K.COMBINATION_KIND_PAIR, R.RANK_THREE),
        ]
        assert all(not m.cards for m in response.moves), "no cards when the hand is given as ranks"

    async def test_following_lists_what_beats_plus_bombs_and_may_pass(self, rules: RulesStub) -> None:
        hand = _ranks(R.RANK_FOUR, R.RANK_FOUR, R.RANK_FIVE, R.RANK_SIX, R.RANK_SIX, R.RANK_SIX, R.RANK_SIX)
        response = await rules.ListLegalMoves(
            rpb.ListLegalMovesRequest(variant=THREE, hand=hand, to_beat=_ranks(R.RANK_FIVE, R.RANK_FIVE))
        )
        assert response.can_pass
        moves = [(m.combination.kind, m.combination.main_rank) for m in response.moves]
        assert moves == [(K.COMBINATION_KIND_PAIR, R.RANK_SIX), (K.COMBINATION_KIND_BOMB, R.RANK_SIX)]

    async def test_nothing_to_beat_a_rocket_leaves_only_a_pass(self, rules: RulesStub) -> None:
        response = await rules.ListLegalMoves(
            rpb.ListLegalMovesRequest(
                variant=THREE,
                hand=_ranks(R.RANK_TWO, R.RANK_TWO, R.RANK_TWO, R.RANK_TWO),
                to_beat=_ranks(R.RANK_BLACK_JOKER, R.RANK_RED_JOKER),
            )
        )
        assert response.can_pass
        assert not response.moves

    async def test_exact_cards_come_back_as_the_lowest_ids_ready_to_play(self, rules: RulesStub) -> None:
        hand = _cards(
            card(R.RANK_THREE, R.SUIT_SPADES),
            card(R.RANK_THREE, R.SUIT_DIAMONDS),
            card(R.RANK_FOUR, R.SUIT_HEARTS, copy=1),
            card(R.RANK_THREE, R.SUIT_CLUBS, copy=1),
        )
        response = await rules.ListLegalMoves(rpb.ListLegalMovesRequest(variant=FOUR, hand=hand))
        by_move = {(m.combination.kind, m.combination.main_rank): m for m in response.moves}
        pair = by_move[(K.COMBINATION_KIND_PAIR, R.RANK_THREE)]
        assert cards_in(pair.cards) == [
            card_id_of(R.RANK_THREE, R.SUIT_DIAMONDS),
            card_id_of(R.RANK_THREE, R.SUIT_SPADES),
        ]
        assert list(pair.cards) == sorted(pair.cards, key=lambda c: cards_in([c])[0])
        trio = by_move[(K.COMBINATION_KIND_TRIO, R.RANK_THREE)]
        assert len(trio.cards) == 3
        single_four = by_move[(K.COMBINATION_KIND_SINGLE, R.RANK_FOUR)]
        assert list(single_four.cards) == [card(R.RANK_FOUR, R.SUIT_HEARTS, copy=1)]
        assert all(len(m.cards) == m.combination.size for m in response.moves)


def card_id_of(rank: int, suit: int, copy: int = 0) -> int:
    return cards_in([card(rank, suit, copy)])[0]


class TestCompare:
    async def test_a_higher_pair_beats_a_lower_one_but_not_the_reverse(self, rules: RulesStub) -> None:
        low, high = _ranks(R.RANK_THREE, R.RANK_THREE), _ranks(R.RANK_KING, R.RANK_KING)
        forward = await rules.Compare(rpb.CompareRequest(variant=THREE, a=low, b=high))
        assert forward.beats
        assert forward.a.combinations[0].kind == K.COMBINATION_KIND_PAIR
        assert forward.b.combinations[0].main_rank == R.RANK_KING
        backward = await rules.Compare(rpb.CompareRequest(variant=THREE, a=high, b=low))
        assert not backward.beats

    async def test_a_bomb_beats_a_longer_combination_of_another_kind(self, rules: RulesStub) -> None:
        straight = _ranks(R.RANK_THREE, R.RANK_FOUR, R.RANK_FIVE, R.RANK_SIX, R.RANK_SEVEN, R.RANK_EIGHT)
        bomb = _ranks(*(R.RANK_FOUR,) * 4)
        assert (await rules.Compare(rpb.CompareRequest(variant=THREE, a=straight, b=bomb))).beats

    async def test_different_kinds_do_not_beat_and_no_combination_never_beats(self, rules: RulesStub) -> None:
        single, pair = _ranks(R.RANK_THREE), _ranks(R.RANK_ACE, R.RANK_ACE)
        assert not (await rules.Compare(rpb.CompareRequest(variant=THREE, a=single, b=pair))).beats
        junk = _ranks(R.RANK_THREE, R.RANK_FIVE)
        response = await rules.Compare(rpb.CompareRequest(variant=THREE, a=single, b=junk))
        assert not response.beats
        assert response.b.reason == "NOT_A_COMBINATION"
        assert not response.b.combinations


class TestMalformedRulesRequests:
    async def test_an_unspecified_variant_is_invalid(self, rules: RulesStub) -> None:
        await invalid(rules.Classify(rpb.ClassifyRequest(cards=_ranks(R.RANK_THREE))), "variant")
        await invalid(rules.ListLegalMoves(rpb.ListLegalMovesRequest(variant=7, hand=_ranks(R.RANK_THREE))), "variant")  # type: ignore[arg-type]

    async def test_cards_and_ranks_together_are_invalid(self, rules: RulesStub) -> None:
        both = cards_pb2.CardSet(cards=[card(R.RANK_THREE, R.SUIT_CLUBS)], ranks=[R.RANK_FOUR])
        await invalid(rules.Classify(rpb.ClassifyRequest(variant=THREE, cards=both)), "cards")

    async def test_a_card_listed_twice_is_invalid(self, rules: RulesStub) -> None:
        twice = _cards(card(R.RANK_THREE, R.SUIT_CLUBS), card(R.RANK_THREE, R.SUIT_CLUBS))
        await invalid(rules.Classify(rpb.ClassifyRequest(variant=THREE, cards=twice)), "cards.cards")

    @pytest.mark.parametrize(
        ("bad", "field"),
        [
            (card(R.RANK_UNSPECIFIED, R.SUIT_CLUBS), "hand.cards[1].rank"),
            (card(R.RANK_RED_JOKER, R.SUIT_SPADES), "hand.cards[1].suit"),
            (card(R.RANK_NINE, R.SUIT_SPADES, copy=1), "hand.cards[1].copy"),
        ],
        ids=["rank-0", "joker-with-spades", "copy-1-in-3p"],
    )
    async def test_a_non_canonical_card_names_its_field(
        self, rules: RulesStub, bad: cards_pb2.Card, field: str
    ) -> None:
        hand = _cards(card(R.RANK_THREE, R.SUIT_CLUBS), bad)
        await invalid(rules.ListLegalMoves(rpb.ListLegalMovesRequest(variant=THREE, hand=hand)), field)

    async def test_an_unknown_rank_number_is_invalid(self, rules: RulesStub) -> None:
        await invalid(
            rules.Classify(rpb.ClassifyRequest(variant=THREE, cards=_ranks(R.RANK_THREE, 99))), "cards.ranks[1]"
        )

    async def test_more_of_a_rank_than_the_deck_holds_is_invalid(self, rules: RulesStub) -> None:
        await invalid(
            rules.Classify(rpb.ClassifyRequest(variant=THREE, cards=_ranks(*(R.RANK_ACE,) * 5))), "cards.ranks"
        )
        await invalid(
            rules.Compare(rpb.CompareRequest(variant=FOUR, a=_ranks(R.RANK_THREE), b=_ranks(*(R.RANK_RED_JOKER,) * 3))),
            "b.ranks",
        )
        ok = await rules.Classify(rpb.ClassifyRequest(variant=FOUR, cards=_ranks(*(R.RANK_ACE,) * 8)))
        assert ok.classification.combinations[0].kind == K.COMBINATION_KIND_BOMB

    async def test_a_to_beat_that_is_no_combination_is_invalid(self, rules: RulesStub) -> None:
        await invalid(
            rules.ListLegalMoves(
                rpb.ListLegalMovesRequest(
                    variant=THREE, hand=_ranks(R.RANK_ACE), to_beat=_ranks(R.RANK_THREE, R.RANK_FOUR)
                )
            ),
            "to_beat",
        )

    async def test_too_many_cards_are_invalid_and_the_error_is_rich(self, rules: RulesStub) -> None:
        violations = await invalid(
            rules.Classify(rpb.ClassifyRequest(variant=FOUR, cards=_ranks(*(R.RANK_THREE,) * 109))), "cards"
        )
        (violation,) = violations.field_violations
        assert "33" in violation.description, violation.description  # the limit: a 4p landlord's hand
