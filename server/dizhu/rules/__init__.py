"""The Dou Dizhu rules core: pure, immutable, no I/O (docs/rules.md, every section).

Start a round from a seeded ``deal``, ask for ``legal_bids`` / ``legal_plays``, ``apply``
actions and ``settle`` the result::

    >>> from dizhu.rules import THREE_PLAYER, deal, start_round, classify, parse_ranks
    >>> state = start_round(deal(bytes(32), THREE_PLAYER, dealer=0))
    >>> state.phase.value, len(state.hands[0])
    ('auction', 17)
    >>> str(classify(parse_ranks("3334"), THREE_PLAYER))
    'trio with single [3 3 3 4]'
"""

from dizhu.rules.actions import (
    MAX_BID,
    Action,
    Bid,
    BidMade,
    CardsPlayed,
    Event,
    IllegalAction,
    LandlordChosen,
    Play,
    Refusal,
    RoundFinished,
    ThrownIn,
    TrickClosed,
)
from dizhu.rules.cards import (
    RANKS,
    Card,
    NotationError,
    Rank,
    Suit,
    card_by_id,
    cards_by_id,
    format_cards,
    format_ranks,
    make_deck,
    parse_cards,
    parse_ranks,
)
from dizhu.rules.combinations import Combination, NotACombination, beats, classify, explain, try_classify
from dizhu.rules.deal import SEED_SIZE, Deal, commitment, deal, derive_seed, new_seed
from dizhu.rules.match import MatchState, RoundOutcome, book_settlement, new_match, record_round, standings
from dizhu.rules.moves import legal_moves, pick_cards
from dizhu.rules.round import (
    Phase,
    RoundState,
    Transition,
    apply,
    doubles_stake,
    legal_bids,
    legal_plays,
    start_round,
)
from dizhu.rules.serialization import from_bytes, from_plain, to_bytes, to_plain
from dizhu.rules.settlement import Settlement, abandon, forfeit, settle
from dizhu.rules.variants import FOUR_PLAYER, THREE_PLAYER, VARIANTS, CombinationKind, HouseRules, Variant
from dizhu.rules.visibility import RoundView, view_for

__all__ = [
    "FOUR_PLAYER",
    "MAX_BID",
    "RANKS",
    "SEED_SIZE",
    "THREE_PLAYER",
    "VARIANTS",
    "Action",
    "Bid",
    "BidMade",
    "Card",
    "CardsPlayed",
    "Combination",
    "CombinationKind",
    "Deal",
    "Event",
    "HouseRules",
    "IllegalAction",
    "LandlordChosen",
    "MatchState",
    "NotACombination",
    "NotationError",
    "Phase",
    "Play",
    "Rank",
    "Refusal",
    "RoundFinished",
    "RoundOutcome",
    "RoundState",
    "RoundView",
    "Settlement",
    "Suit",
    "ThrownIn",
    "Transition",
    "TrickClosed",
    "Variant",
    "abandon",
    "apply",
    "beats",
    "book_settlement",
    "card_by_id",
    "cards_by_id",
    "classify",
    "commitment",
    "deal",
    "derive_seed",
    "doubles_stake",
    "explain",
    "forfeit",
    "format_cards",
    "format_ranks",
    "from_bytes",
    "from_plain",
    "legal_bids",
    "legal_moves",
    "legal_plays",
    "make_deck",
    "new_match",
    "new_seed",
    "parse_cards",
    "parse_ranks",
    "pick_cards",
    "record_round",
    "settle",
    "standings",
    "start_round",
    "to_bytes",
    "to_plain",
    "try_classify",
    "view_for",
]
