"""``dizhu.v1.RulesService``: the rules core's helpers for bot authors, stateless."""

from __future__ import annotations

from collections import Counter

from dizhu.referee.errors import InvalidArgument
from dizhu.referee.refusals import classify_reason
from dizhu.rules import Card, Combination, Rank, Variant, beats, legal_moves, pick_cards, try_classify
from dizhu.service import convert
from dizhu.service.errors import ServicerContext, guarded
from dizhu.v1 import cards_pb2, rules_service_pb2, rules_service_pb2_grpc

__all__ = ["RulesServicer"]

_MAX_CARDS = 108


def _card_set(card_set: cards_pb2.CardSet, variant: Variant, field: str) -> tuple[Card, ...] | tuple[Rank, ...]:
    if card_set.cards and card_set.ranks:
        raise InvalidArgument(field, "give cards or ranks, not both")
    if len(card_set.cards) + len(card_set.ranks) > _MAX_CARDS:
        raise InvalidArgument(field, f"at most {_MAX_CARDS} cards")
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
    ) -> rules_service_pb2.ListLegalMovesResponse:
        variant = convert.variant_from_proto(request.variant)
        hand = _card_set(request.hand, variant, "hand")
        to_beat = None
        if request.HasField("to_beat") and (request.to_beat.cards or request.to_beat.ranks):
            to_beat = try_classify(_card_set(request.to_beat, variant, "to_beat"), variant)
            if to_beat is None:
                raise InvalidArgument("to_beat", "the play to beat is no combination of this variant")
        response = rules_service_pb2.ListLegalMovesResponse(can_pass=to_beat is not None)
        exact = bool(request.hand.cards)
        for move in legal_moves(hand, to_beat, variant):
            entry = rules_service_pb2.LegalMove(combination=convert.combination_to_proto(move))
            if exact:
                entry.cards.extend(convert.cards_to_proto(pick_cards(hand, move)))  # type: ignore[arg-type]
            response.moves.append(entry)
        return response

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
