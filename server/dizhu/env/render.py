"""The ``"ansi"`` rendering: the table as its seat to act sees it (hands of others stay hidden)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dizhu.rules import Phase, format_cards

if TYPE_CHECKING:
    from dizhu.env.game import Game
    from dizhu.env.native import NativeGame

__all__ = ["render_text"]


def render_text(game: Game | NativeGame) -> str:
    """A few lines: phase, stake, cards left per seat, the last moves, the hand of the seat to act."""
    state = game.state
    lines = [
        f"{game.variant.name} round, {state.phase.value}; dealer seat {state.deal.dealer}, "
        f"landlord {'-' if state.landlord is None else f'seat {state.landlord}'}, bid {state.bid}, "
        f"stake {state.stake}",
        "cards left: " + ", ".join(f"seat {seat} {len(hand)}" for seat, hand in enumerate(state.hands)),
    ]
    lines += [f"  {action}" for action in state.history[-game.variant.players :]]
    if state.phase in (Phase.AUCTION, Phase.PLAY):
        lines.append(f"seat {state.turn} to act, holding {format_cards(state.hands[state.turn])}")
    elif game.settlement is not None:
        lines.append(f"over: {game.settlement.deltas}")
    return "\n".join(lines) + "\n"
