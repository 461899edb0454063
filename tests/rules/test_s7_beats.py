"""docs/rules.md section 7: what beats what, clause by clause, for both variants.

Examples first, then exhaustive checks against ``strategies.spec_beats`` (section 7 written
out on readings, independently of ``dizhu.rules.beats``) over the whole catalogue of plays.
"""

import functools

import pytest
from hypothesis import given
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
    make_deck,
    parse_cards,
    parse_ranks,
)
from tests.support.rule_strategies import Play, catalogue, plays, spec_beats, variants

K = CombinationKind


def play(text: str, variant: Variant) -> Combination:
    return classify(parse_ranks(text), variant)


def pair(b: str, a: str) -> object:
    """A row ``(b, a)``: does ``b`` beat ``a``? The id reads ``b-over-a``."""
    return pytest.param(b, a, id=f"{b}-over-{a}".replace(" ", "_"))


@functools.cache
def representatives(variant: Variant) -> tuple[Play, ...]:
    """One play per (type, size, main rank): the plays that differ only in kickers, once each."""
    seen: dict[tuple[CombinationKind, int, int], Play] = {}
    for each in catalogue(variant):
        seen.setdefault((each.reading.kind, each.reading.size, each.reading.main_rank), each)
    return tuple(seen.values())


def the_rocket(variant: Variant) -> Combination:
    return play("BJ RJ" if variant.decks == 1 else "BJ BJ RJ RJ", variant)


class TestRocket:
    def test_beats_every_other_play(self, variant: Variant) -> None:
        rocket = the_rocket(variant)
        assert all(
            beats(rocket, each.combination()) for each in catalogue(variant) if each.reading.kind is not K.ROCKET
        )

    def test_nothing_beats_a_rocket(self, variant: Variant) -> None:
        rocket = the_rocket(variant)
        assert not any(beats(each.combination(), rocket) for each in catalogue(variant))

    def test_four_player_rocket_beats_the_biggest_bomb(self) -> None:
        assert beats(the_rocket(FOUR_PLAYER), play("22222222", FOUR_PLAYER))


class TestBombOverOtherTypes:
    def test_every_bomb_beats_every_play_that_is_neither_bomb_nor_rocket(self, variant: Variant) -> None:
        bombs = [each.combination() for each in catalogue(variant) if each.reading.kind is K.BOMB]
        others = [each.combination() for each in catalogue(variant) if not each.combination().is_bomb_like]
        assert all(beats(bomb, other) for bomb in bombs for other in others)
        assert not any(beats(other, bomb) for bomb in bombs for other in others)

    @pytest.mark.parametrize(
        ("b", "a"),
        [
            pair("3333", "2"),
            pair("3333", "RJ"),
            pair("3333", "22"),
            pair("3333", "3456789TJQKA"),
            pair("3333", "AAA KK"),
        ],
    )
    def test_smallest_bomb_beats_a_high_play_of_another_type(self, variant: Variant, b: str, a: str) -> None:
        assert beats(play(b, variant), play(a, variant))

    def test_three_player_a_bomb_beats_a_quad_with_two(self) -> None:
        assert beats(play("3333", THREE_PLAYER), play("2222 A K", THREE_PLAYER))
        assert not beats(play("2222 A K", THREE_PLAYER), play("3333", THREE_PLAYER))

    def test_four_player_a_four_card_bomb_beats_the_red_joker_pair(self) -> None:
        assert beats(play("3333", FOUR_PLAYER), play("RJ RJ", FOUR_PLAYER))


class TestBombOverBomb:
    @pytest.mark.parametrize(("b", "a"), [pair("4444", "3333"), pair("2222", "AAAA"), pair("AAAA", "KKKK")])
    def test_three_player_higher_rank_beats(self, b: str, a: str) -> None:
        assert beats(play(b, THREE_PLAYER), play(a, THREE_PLAYER))
        assert not beats(play(a, THREE_PLAYER), play(b, THREE_PLAYER))

    @pytest.mark.parametrize(
        ("b", "a"), [pair("33333", "7777"), pair("333333", "22222"), pair("33333333", "2222222"), pair("8888", "7777")]
    )
    def test_four_player_more_cards_beat_then_higher_rank(self, b: str, a: str) -> None:
        assert beats(play(b, FOUR_PLAYER), play(a, FOUR_PLAYER))
        assert not beats(play(a, FOUR_PLAYER), play(b, FOUR_PLAYER))

    def test_four_player_same_size_same_rank_does_not_beat(self) -> None:
        assert not beats(play("55555", FOUR_PLAYER), play("55555", FOUR_PLAYER))

    def test_four_player_larger_bomb_of_the_same_rank_beats(self) -> None:
        assert beats(play("555555", FOUR_PLAYER), play("55555", FOUR_PLAYER))

    def test_every_pair_of_bombs_compares_as_section_7_says(self, variant: Variant) -> None:
        bombs = [each for each in catalogue(variant) if each.reading.kind is K.BOMB]
        for b in bombs:
            for a in bombs:
                assert beats(b.combination(), a.combination()) == spec_beats(b.reading, a.reading, variant), (b, a)


class TestSameTypeAndSize:
    @pytest.mark.parametrize(
        ("b", "a"),
        [
            pair("4", "3"),
            pair("RJ", "BJ"),
            pair("BJ", "2"),
            pair("22", "AA"),
            pair("444", "333"),
            pair("45678", "34567"),
            pair("TJQKA", "9TJQK"),
            pair("445566", "334455"),
            pair("444555", "333444"),
        ],
    )
    def test_higher_main_rank_beats(self, variant: Variant, b: str, a: str) -> None:
        assert beats(play(b, variant), play(a, variant))
        assert not beats(play(a, variant), play(b, variant))

    def test_four_player_red_joker_pair_beats_black_joker_pair_which_beats_twos(self) -> None:
        assert beats(play("RJ RJ", FOUR_PLAYER), play("BJ BJ", FOUR_PLAYER))
        assert beats(play("BJ BJ", FOUR_PLAYER), play("22", FOUR_PLAYER))

    @pytest.mark.parametrize("text", ["3", "77", "34567", "333 44", "3333"])
    def test_an_equal_play_does_not_beat(self, variant: Variant, text: str) -> None:
        assert not beats(play(text, variant), play(text, variant))

    @pytest.mark.parametrize(
        ("b", "a"),
        [
            pair("456789", "34567"),
            pair("45678", "3456789"),
            pair("55667788", "334455"),
            pair("555666777", "333444"),
            pair("AA", "333"),
            pair("44", "3"),
        ],
    )
    def test_a_different_size_does_not_beat(self, variant: Variant, b: str, a: str) -> None:
        assert not beats(play(b, variant), play(a, variant))

    @pytest.mark.parametrize(
        ("b", "a"),
        [pair("222 A", "333 44"), pair("222 AA", "333 4"), pair("222 A", "3333 4 5"), pair("2222 AA KK", "3333 4 5")],
    )
    def test_three_player_kicker_kinds_are_different_types(self, b: str, a: str) -> None:
        assert not beats(play(b, THREE_PLAYER), play(a, THREE_PLAYER))
        assert not beats(play(a, THREE_PLAYER), play(b, THREE_PLAYER))

    @pytest.mark.parametrize(
        ("b", "a"),
        [
            pair("333444 55 66", "3344556677"),
            pair("3456789TJQ", "3344556677"),
            pair("AAA KK", "34567"),
            pair("KKKAAA", "334455"),
        ],
    )
    def test_plays_of_different_types_and_the_same_size_do_not_beat_each_other(
        self, variant: Variant, b: str, a: str
    ) -> None:
        assert not beats(play(b, variant), play(a, variant))
        assert not beats(play(a, variant), play(b, variant))

    def test_every_pair_of_plays_differing_in_more_than_kickers_compares_as_section_7_says(
        self, variant: Variant
    ) -> None:
        reps = representatives(variant)
        wrong = [
            (b, a)
            for b in reps
            for a in reps
            if beats(b.combination(), a.combination()) != spec_beats(b.reading, a.reading, variant)
        ]
        assert not wrong


class TestKickersNeverMatter:
    @pytest.mark.parametrize(
        ("b", "a"),
        [
            pair("444 3", "333 2"),
            pair("444 3", "333 RJ"),
            pair("444555 3 6", "333444 2 BJ"),
            pair("5555 3 4", "4444 2 RJ"),
        ],
    )
    def test_three_player_a_higher_trio_or_quad_beats_whatever_the_kickers(self, b: str, a: str) -> None:
        assert beats(play(b, THREE_PLAYER), play(a, THREE_PLAYER))

    @pytest.mark.parametrize(("b", "a"), [pair("444 33", "333 22"), pair("444555 33 66", "333444 22 AA")])
    def test_a_higher_trio_beats_whatever_the_pairs(self, variant: Variant, b: str, a: str) -> None:
        assert beats(play(b, variant), play(a, variant))

    def test_four_player_joker_pair_wings_do_not_help(self) -> None:
        low_with_jokers, high = play("333444 BJ BJ 22", FOUR_PLAYER), play("444555 33 66", FOUR_PLAYER)
        assert not beats(low_with_jokers, high)
        assert beats(high, low_with_jokers)

    @given(st.data())
    def test_only_type_size_and_main_rank_decide(self, data: st.DataObject) -> None:
        variant = data.draw(variants())
        b, a = data.draw(plays(variant)), data.draw(plays(variant))
        assert beats(b.combination(), a.combination()) == spec_beats(b.reading, a.reading, variant)


class TestCardOrderNeverMatters:
    @pytest.mark.parametrize("text", ["333 4", "4 333", "3 4 3 3", "43 33"])
    def test_listing_order_gives_the_same_play(self, text: str) -> None:
        assert classify(parse_ranks(text), THREE_PLAYER) == play("3334", THREE_PLAYER)

    @given(st.data())
    def test_any_shuffle_of_any_suits_classifies_to_the_same_play(self, data: st.DataObject) -> None:
        variant = data.draw(variants())
        chosen = data.draw(plays(variant))
        deck = data.draw(st.permutations(make_deck(variant.decks)))
        cards: list[Card] = []
        for rank in chosen.ranks:
            card = next(card for card in deck if card.rank == rank and card not in cards)
            cards.append(card)
        shuffled = data.draw(st.permutations(cards))
        assert classify(shuffled, variant) == chosen.combination()
        assert classify(shuffled, variant) == classify(
            parse_cards(" ".join(str(card) for card in shuffled), variant.decks), variant
        )
