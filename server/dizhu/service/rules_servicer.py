"""``dizhu.v1.RulesService``: the rules core's helpers for bot authors, stateless.

Every card set is at most a hand: the variant's landlord hand (20 cards in 3p, 33 in 4p), so
that no call costs more than a real position can. The largest answer, every move of a 33-card
hand, has about 1,800 moves; it is written straight as bytes (see ``_legal_moves_response``),
and counts against its client's rate limit as one call per ``MOVES_PER_CALL`` moves listed.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence

from dizhu.referee.errors import InvalidArgument
from dizhu.referee.refusals import classify_reason
from dizhu.rules import Card, Combination, Rank, Variant, beats, legal_moves, try_classify
from dizhu.rules.cards import cards_by_id
from dizhu.rules.engines import native_rules
from dizhu.rules.moves import play_of_key
from dizhu.service import convert
from dizhu.service.admission import Admission, AdmissionLimits
from dizhu.service.errors import ServicerContext, guarded
from dizhu.service.registration import Encoded
from dizhu.v1 import cards_pb2, rules_service_pb2, rules_service_pb2_grpc

__all__ = ["MOVES_PER_CALL", "RulesServicer", "keep_legal_moves_of"]

#: A ListLegalMoves answer counts as one more call for every this many moves it lists.
MOVES_PER_CALL = 50


def _card_set(card_set: cards_pb2.CardSet, variant: Variant, field: str) -> tuple[Card, ...] | tuple[Rank, ...]:
    if card_set.cards and card_set.ranks:
        raise InvalidArgument(field, "give cards or ranks, not both")
    most = variant.landlord_hand_size
    if len(card_set.cards) + len(card_set.ranks) > most:
        raise InvalidArgument(field, f"at most {most} cards in the {variant.name} variant (a landlord's hand)")
    if card_set.cards:
        cards = convert.cards_from_proto(card_set.cards, variant, f"{field}.cards")
        if len(set(cards)) != len(cards):
            raise InvalidArgument(f"{field}.cards", "a card is listed twice")
        return cards
    ranks = convert.ranks_from_proto(card_set.ranks, f"{field}.ranks")
    counts = Counter(ranks)
    for rank, count in counts.items():
        if count > variant.copies(rank):
            raise InvalidArgument(f"{field}.ranks", f"more cards of rank {rank.name} than the {variant.name} deck has")
    return ranks


def _classification(
    items: tuple[Card, ...] | tuple[Rank, ...], combination: Combination | None, variant: Variant
) -> rules_service_pb2.Classification:
    """Every reading of ``items`` (at most one, by the one-reading Decision), or why there is none."""
    if combination is not None:
        return rules_service_pb2.Classification(combinations=[convert.combination_to_proto(combination)])
    return rules_service_pb2.Classification(reason=classify_reason(items, variant))


class RulesServicer(rules_service_pb2_grpc.RulesServiceServicer):
    """Classify, list legal moves, compare: the same rules core the referee enforces."""

    def __init__(self, admission: Admission | None = None) -> None:
        self._admission = admission or Admission(AdmissionLimits.of())

    @guarded
    async def Classify(
        self, request: rules_service_pb2.ClassifyRequest, context: ServicerContext
    ) -> rules_service_pb2.ClassifyResponse:
        variant = convert.variant_from_proto(request.variant)
        items = _card_set(request.cards, variant, "cards")
        classification = _classification(items, try_classify(items, variant), variant)
        return rules_service_pb2.ClassifyResponse(classification=classification)

    @guarded
    async def ListLegalMoves(
        self, request: rules_service_pb2.ListLegalMovesRequest, context: ServicerContext
    ) -> rules_service_pb2.ListLegalMovesResponse | Encoded:
        variant = convert.variant_from_proto(request.variant)
        hand = _card_set(request.hand, variant, "hand")
        to_beat = None
        if request.HasField("to_beat") and (request.to_beat.cards or request.to_beat.ranks):
            to_beat = try_classify(_card_set(request.to_beat, variant, "to_beat"), variant)
            if to_beat is None:
                raise InvalidArgument("to_beat", "the play to beat is no combination of this variant")
        exact = tuple(card for card in hand if isinstance(card, Card))
        native = native_rules(variant)
        if native is not None:
            message, count = native.legal_moves_message(
                hand,
                to_beat,
                sorted(card.id for card in exact),
                _CARD_ENTRIES,
                _combination_entry_of_key,
                _CAN_PASS if to_beat is not None else b"",
            )
            self._admission.charge(context, count // MOVES_PER_CALL)
            return Encoded(rules_service_pb2.ListLegalMovesResponse, message)
        moves = legal_moves(hand, to_beat, variant)
        self._admission.charge(context, len(moves) // MOVES_PER_CALL)
        return _legal_moves_response(moves, exact, can_pass=to_beat is not None)

    @guarded
    async def Compare(
        self, request: rules_service_pb2.CompareRequest, context: ServicerContext
    ) -> rules_service_pb2.CompareResponse:
        variant = convert.variant_from_proto(request.variant)
        a_items = _card_set(request.a, variant, "a")
        b_items = _card_set(request.b, variant, "b")
        a = try_classify(a_items, variant)
        b = try_classify(b_items, variant)
        return rules_service_pb2.CompareResponse(
            beats=a is not None and b is not None and beats(b, a),
            a=_classification(a_items, a, variant),
            b=_classification(b_items, b, variant),
        )


# -- ListLegalMovesResponse, written as bytes ------------------------------------------------
# Building ~1,800 LegalMove messages (tens of thousands of Card messages) field by field costs
# tens of milliseconds; their wire form, from cached pieces, costs a few, and one parse makes
# the message. Field numbers: ListLegalMovesResponse.moves = 1, .can_pass = 2;
# LegalMove.combination = 1, .cards = 2.


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(tag: int, payload: bytes) -> bytes:
    return bytes((tag,)) + _varint(len(payload)) + payload


_MOVE_TAG = 0x0A  # field 1, length-delimited (moves; and LegalMove.combination)
_CARD_TAG = 0x12  # field 2, length-delimited (LegalMove.cards)
_CAN_PASS = b"\x10\x01"  # field 2, varint 1
#: A LegalMove.cards entry for every card id of either variant.
_CARD_ENTRIES = tuple(
    _field(_CARD_TAG, convert.card_to_proto(card).SerializeToString()) for card in cards_by_id(range(108))
)


def _encoded_combination(move: Combination) -> bytes:
    return _field(_MOVE_TAG, convert.combination_to_proto(move).SerializeToString())


_combination_entry = functools.lru_cache(maxsize=1 << 14)(_encoded_combination)


def keep_legal_moves_of(moves: int) -> None:
    """Keep at most ``moves`` encoded legal moves in this process (16,384 unless set); those kept are forgotten."""
    global _combination_entry  # noqa: PLW0603 -- the process's one cache, resized
    _combination_entry = functools.lru_cache(maxsize=moves)(_encoded_combination)


def _combination_entry_of_key(key: int) -> bytes:
    """A play's ``LegalMove.combination`` field, for the native engine that names plays by key."""
    return _combination_entry(play_of_key(key))


def _legal_moves_response(
    moves: Sequence[Combination], hand: tuple[Card, ...], *, can_pass: bool
) -> rules_service_pb2.ListLegalMovesResponse:
    """Every move, with its cards when the hand is exact: for each rank, the lowest card ids.

    Cards are listed by id: every first-deck card (ids below 54, in rank order) before every
    second-deck one, so picking ranks in ascending order into two lists sorts them.
    """
    by_rank: dict[Rank, list[tuple[bool, bytes]]] = {}
    for card in sorted(hand, key=lambda card: card.id):
        by_rank.setdefault(card.rank, []).append((card.copy > 0, _CARD_ENTRIES[card.id]))
    parts = []
    for move in moves:
        entry = _combination_entry(move)
        if hand:
            first: list[bytes] = []
            second: list[bytes] = []
            previous, nth = None, 0
            for rank in move.ranks:  # ascending: the nth card of a rank takes its nth lowest id
                nth = nth + 1 if rank == previous else 0
                previous = rank
                copy, card_entry = by_rank[rank][nth]
                (second if copy else first).append(card_entry)
            entry += b"".join(first) + b"".join(second)
        parts.append(_field(_MOVE_TAG, entry))
    if can_pass:
        parts.append(_CAN_PASS)
    return rules_service_pb2.ListLegalMovesResponse.FromString(b"".join(parts))
