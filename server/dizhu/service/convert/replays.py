"""A replay's JSON record (``dizhu.replay/v1``) as the contract's ``Replay`` message."""

from __future__ import annotations

import datetime
import json

from dizhu.rules import (
    VARIANTS,
    parse_cards,
)
from dizhu.service.convert.cards import cards_to_proto, variant_to_proto
from dizhu.service.convert.results import OUTCOMES
from dizhu.service.convert.settings import TIMEOUT_POLICIES_TO_PROTO
from dizhu.v1 import cards_pb2, replay_pb2, table_pb2

__all__ = ["replay_from_json"]

_OUTCOME_NAMES = {kind.value: outcome for kind, outcome in OUTCOMES.items()}
_TIMEOUT_POLICIES = {policy.value: number for policy, number in TIMEOUT_POLICIES_TO_PROTO.items()}


def replay_from_json(text: str) -> replay_pb2.Replay:
    """A replay's JSON record (``dizhu.replay/v1``, written by the referee) as a message."""
    document = json.loads(text)
    variant = VARIANTS[document["variant"]]

    def cards(notation: str) -> list[cards_pb2.Card]:
        return cards_to_proto(parse_cards(notation, variant.decks))

    replay = replay_pb2.Replay(
        schema=document["schema"],
        table_id=document["table_id"],
        variant=variant_to_proto(variant),
        house_rules=table_pb2.HouseRules(spring=document["house_rules"]["spring"]),
        round=document["round"],
        balances=document["balances"],
        timeout_policy=_TIMEOUT_POLICIES.get(document.get("timeout_policy"), table_pb2.TIMEOUT_POLICY_UNSPECIFIED),
    )
    for entry in document["deals"]:
        dealt = replay.deals.add(
            deal_number=entry["deal_number"],
            dealer_seat=entry["dealer"],
            seed=bytes.fromhex(entry["seed"] or ""),
            seed_commitment=bytes.fromhex(entry["commitment"] or ""),
            face_up_card=cards(entry["face_up"])[0],
            face_up_seat=entry["face_up_seat"],
            hands=[table_pb2.DealtHand(seat=seat, cards=cards(hand)) for seat, hand in enumerate(entry["hands"])],
            kitty=cards(entry["kitty"]),
        )
        for action in entry["actions"]:
            recorded = dealt.actions.add(seat=action["seat"], timed_out=action["timed_out"])
            if "bid" in action:
                recorded.kind = replay_pb2.ACTION_KIND_BID
                recorded.bid = action["bid"]
            else:
                recorded.kind = replay_pb2.ACTION_KIND_PLAY
                recorded.cards.extend(cards(action["play"]))
            recorded.time.FromDatetime(datetime.datetime.fromisoformat(action["time"].replace("Z", "+00:00")))
            recorded.took.FromMilliseconds(action["took_ms"])
    result = document["result"]
    settlement = replay.settlement
    settlement.round = document["round"]
    settlement.outcome = _OUTCOME_NAMES[result["outcome"]]
    settlement.bid = result["bid"]
    settlement.doublings = result["doublings"]
    settlement.spring = result["spring"]
    settlement.stake = result["stake"]
    settlement.balance_changes.extend(result["changes"])
    for field in ("landlord", "winner", "forfeited_by"):
        if result[field] is not None:
            setattr(
                settlement,
                {"landlord": "landlord_seat", "winner": "winner_seat"}.get(field, "forfeited_seat"),
                result[field],
            )
    return replay
