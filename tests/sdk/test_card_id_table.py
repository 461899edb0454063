"""The Python SDK's card ids (``card_id``, ``card_from_id``) against the one table (tests/data/card_ids.json)."""

from __future__ import annotations

from dizhu.client.cards import card_from_id, card_id, format_cards
from dizhu.v1 import cards_pb2
from tests.support.card_ids import CardRow, card_rows


def _proto_card(row: CardRow) -> cards_pb2.Card:
    return cards_pb2.Card(
        rank=cards_pb2.Rank.Value(row["rank"]), suit=cards_pb2.Suit.Value(row["suit"]), copy=row["copy"]
    )


def test_card_id_gives_every_card_the_tables_id() -> None:
    assert [card_id(_proto_card(row)) for row in card_rows()] == [row["id"] for row in card_rows()]


def test_card_from_id_gives_the_tables_card_and_notation() -> None:
    cards = [card_from_id(row["id"]) for row in card_rows()]
    assert cards == [_proto_card(row) for row in card_rows()]
    assert [format_cards([card]) for card in cards] == [row["notation"] for row in card_rows()]
