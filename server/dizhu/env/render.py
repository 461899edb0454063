"""The environments' rendering: the table as its seat to act sees it (hands of others stay hidden).

``"ansi"`` returns the text, ``"human"`` prints it; every environment offers both.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from dizhu.rules import Phase, format_cards

if TYPE_CHECKING:
    from dizhu.env.game import Game
    from dizhu.env.native import NativeGame

__all__ = ["RENDER_MODES", "check_render_mode", "render_text", "rendered"]

#: The render modes: ``"ansi"`` returns the table as text, ``"human"`` prints it.
RENDER_MODES = ("ansi", "human")


def check_render_mode(render_mode: str | None) -> None:
    """Refuse a mode no environment offers, naming those offered."""
    if render_mode not in (None, *RENDER_MODES):
        raise ValueError(f"render_mode {render_mode!r}: expected one of {', '.join(RENDER_MODES)} or None")


def rendered(game: Game | NativeGame, render_mode: str | None) -> str | None:
    """``render()`` of an environment in ``render_mode``: the text (``"ansi"``), or None."""
    if render_mode is None:
        return None
    text = render_text(game)
    if render_mode == "human":
        sys.stdout.write(text)
        return None
    return text


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
