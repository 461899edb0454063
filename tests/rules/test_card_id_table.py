"""The rules core's card ids, and the referee's cards on the wire, against the one table (tests/data/card_ids.json)."""

from __future__ import annotations

import pytest

from dizhu.rules import FOUR_PLAYER, THREE_PLAYER, make_deck
from dizhu.rules.cards import Card, Rank, Suit, card_by_id
from dizhu.service.convert.cards import card_to_proto
from dizhu.v1 import cards_pb2
from tests.support.card_ids import CardRow, card_rows, deck_rows

VARIANTS = {"3p": THREE_PLAYER, "4p": FOUR_PLAYER}


def _core_card(row: CardRow) -> Card:
    suit = Suit.NONE if row["suit"] == "SUIT_JOKER" else Suit[row["suit"].removeprefix("SUIT_")]
    return Card(Rank[row["rank"].removeprefix("RANK_")], suit, row["copy"])


@pytest.mark.parametrize("variant", ["3p", "4p"])
def test_each_deck_is_the_tables_cards_in_id_order(variant: str) -> None:
    deck = make_deck(VARIANTS[variant].decks)
    rows = deck_rows(variant)
    assert [(card.id, card) for card in deck] == [(row["id"], _core_card(row)) for row in rows]
    assert [str(card) for card in deck] == [row["notation"] for row in rows]


def test_every_id_names_the_tables_card() -> None:
    assert [card_by_id(row["id"]) for row in card_rows()] == [_core_card(row) for row in card_rows()]


def test_the_referee_sends_each_card_with_the_tables_rank_suit_and_copy() -> None:
    sent = [card_to_proto(_core_card(row)) for row in card_rows()]
    assert [(cards_pb2.Rank.Name(card.rank), cards_pb2.Suit.Name(card.suit), card.copy) for card in sent] == [
        (row["rank"], row["suit"], row["copy"]) for row in card_rows()
    ]
