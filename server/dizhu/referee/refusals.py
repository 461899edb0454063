"""The facts a refusal carries for ``google.rpc.ErrorInfo.metadata``, named as the contract names them."""

from __future__ import annotations

from collections.abc import Sequence

from dizhu.referee.table import TableState
from dizhu.rules import Action, Card, IllegalAction, Play, Rank, Refusal, RoundState, Variant, explain

__all__ = ["classify_reason", "refusal_metadata"]


def refusal_metadata(table: TableState, state: RoundState, refusal: IllegalAction, action: Action) -> dict[str, str]:
    metadata = {"table_id": table.table_id}
    reason = refusal.reason
    if reason is Refusal.NOT_YOUR_TURN:
        metadata["turn_seat"] = str(state.turn)
    elif reason is Refusal.BID_TOO_LOW:
        metadata["highest_bid"] = str(state.bid)
    elif reason is Refusal.WRONG_PHASE:
        metadata["phase"] = table.phase_name
    elif reason is Refusal.DOES_NOT_BEAT and state.last_play is not None:
        # The contract's enum value names (dizhu.v1.CombinationKind, dizhu.v1.Rank).
        metadata["to_beat_kind"] = f"COMBINATION_KIND_{state.last_play.kind.name}"
        metadata["to_beat_size"] = str(state.last_play.size)
        metadata["to_beat_main_rank"] = f"RANK_{state.last_play.main_rank.name}"
    elif reason is Refusal.CARDS_NOT_IN_HAND and isinstance(action, Play):
        held = set(state.hands[action.seat])
        seen: set[Card] = set()
        missing = []
        for card in action.cards:
            if card not in held or card in seen:
                missing.append(str(card.id))
            seen.add(card)
        metadata["missing_card_ids"] = ",".join(missing)
    elif reason is Refusal.ILLEGAL_COMBINATION and isinstance(action, Play):
        metadata["classify_reason"] = classify_reason(action.cards, table.variant)
    return metadata


def classify_reason(items: Sequence[Card] | Sequence[Rank], variant: Variant) -> str:
    """Why ``items`` are no combination, as the contract's ``Classification.reason`` says it."""
    if not items:
        return "EMPTY"
    why = explain(items, variant) or ""
    return "NOT_IN_VARIANT" if "not played in this variant" in why else "NOT_A_COMBINATION"
