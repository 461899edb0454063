"""Between the contract (``dizhu.v1`` messages) and the referee's domain values.

Inbound conversions validate and raise ``InvalidArgument`` naming the offending field.
Outbound, ``table_view`` (:mod:`dizhu.service.convert.views`) is the single place a table
becomes what one caller may see. By what they convert: :mod:`~dizhu.service.convert.cards`,
:mod:`~dizhu.service.convert.settings`, :mod:`~dizhu.service.convert.results`,
:mod:`~dizhu.service.convert.views`, :mod:`~dizhu.service.convert.events`,
:mod:`~dizhu.service.convert.replays`.
"""

from dizhu.service.convert.cards import (
    card_to_proto,
    cards_from_proto,
    cards_of_variant,
    cards_to_proto,
    combination_to_proto,
    ranks_from_proto,
    variant_from_proto,
    variant_to_proto,
)
from dizhu.service.convert.events import event_to_proto
from dizhu.service.convert.replays import replay_from_json
from dizhu.service.convert.results import reveal_to_proto, settlement_to_proto, standings_to_proto
from dizhu.service.convert.settings import settings_from_proto, settings_to_proto
from dizhu.service.convert.views import table_summary, table_view

__all__ = [
    "card_to_proto",
    "cards_from_proto",
    "cards_of_variant",
    "cards_to_proto",
    "combination_to_proto",
    "event_to_proto",
    "ranks_from_proto",
    "replay_from_json",
    "reveal_to_proto",
    "settings_from_proto",
    "settings_to_proto",
    "settlement_to_proto",
    "standings_to_proto",
    "table_summary",
    "table_view",
    "variant_from_proto",
    "variant_to_proto",
]
