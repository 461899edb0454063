"""ListLegalMoves answers byte for byte the same whichever rules engine writes them.

With the native engine the answer's wire bytes are written by the engine; with the pure core,
by ``_legal_moves_response`` from the plays. One referee over a real port answers the same
requests under each engine in turn, and the raw bytes it sends are compared.
"""

from __future__ import annotations

import random

import grpc

from dizhu import engine
from dizhu.rules import FOUR_PLAYER, THREE_PLAYER, Variant, legal_moves, make_deck
from dizhu.v1 import cards_pb2
from dizhu.v1 import rules_service_pb2 as rpb
from tests.support.grpc_calls import card

_LIST_LEGAL_MOVES = "/dizhu.v1.RulesService/ListLegalMoves"
_VARIANTS = ((THREE_PLAYER, cards_pb2.VARIANT_THREE_PLAYER), (FOUR_PLAYER, cards_pb2.VARIANT_FOUR_PLAYER))
_HANDS_PER_VARIANT = 40


def _requests(
    variant: Variant, proto_variant: cards_pb2.Variant, rng: random.Random
) -> list[rpb.ListLegalMovesRequest]:
    """Leads and follows of random hands of every size, as exact cards and as bare ranks."""
    deck = make_deck(variant.decks)
    requests = []
    for _ in range(_HANDS_PER_VARIANT):
        hand = rng.sample(deck, rng.randint(1, variant.landlord_hand_size))
        as_cards = cards_pb2.CardSet(cards=[card(c.rank + 1, c.suit + 1, c.copy) for c in hand])
        as_ranks = cards_pb2.CardSet(ranks=[c.rank + 1 for c in hand])  # type: ignore[misc]
        other = rng.sample(deck, rng.randint(1, variant.landlord_hand_size))
        to_beat = rng.choice(legal_moves(other, None, variant))
        beat_set = cards_pb2.CardSet(ranks=[rank + 1 for rank in to_beat.ranks])  # type: ignore[misc]
        for card_set in (as_cards, as_ranks):
            requests.append(rpb.ListLegalMovesRequest(variant=proto_variant, hand=card_set))
            requests.append(rpb.ListLegalMovesRequest(variant=proto_variant, hand=card_set, to_beat=beat_set))
    return requests


async def test_both_engines_send_the_same_bytes_for_every_request(channel: grpc.aio.Channel) -> None:
    raw = channel.unary_unary(_LIST_LEGAL_MOVES, request_serializer=rpb.ListLegalMovesRequest.SerializeToString)
    rng = random.Random(21)
    requests = [request for variant, proto in _VARIANTS for request in _requests(variant, proto, rng)]
    answers: dict[str, list[bytes]] = {}
    for name in engine.BACKENDS:
        with engine.using(name):
            answers[name] = [await raw(request) for request in requests]
    native, pure = answers["native"], answers["python"]
    mismatches = [index for index, (a, b) in enumerate(zip(native, pure, strict=True)) if a != b]
    assert mismatches == [], f"{len(mismatches)} of {len(requests)} answers differ, first: {requests[mismatches[0]]}"
    # The comparison covers real answers: follows that pass, leads of hundreds of moves.
    parsed = [rpb.ListLegalMovesResponse.FromString(answer) for answer in pure]
    assert any(answer.can_pass for answer in parsed)
    assert any(not answer.can_pass for answer in parsed)
    assert max(len(answer.moves) for answer in parsed) > 300
    assert any(answer.moves and answer.moves[0].cards for answer in parsed)
    assert any(answer.moves and not answer.moves[0].cards for answer in parsed)
