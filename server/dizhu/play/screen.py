"""How ``dizhu play`` shows the table in a terminal (with ``rich``): seats, trick, hand, legal plays, clock.

Only what the person's seat sees is shown: the view the referee sends that seat.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from dizhu.client.cards import format_card, sorted_cards
from dizhu.v1 import cards_pb2, rules_service_pb2, table_pb2

__all__ = ["HELP", "HELP_4P", "Screen", "seconds_left"]

HELP = """\
How to play:
  auction   1, 2 or 3 to bid; 0 or p to pass
  play      cards in notation: 3 3   T J Q K A   BJ RJ   (suits optional: 5h; 10 or T)
            #4 #5 or #4-6: cards by their position in your hand, as numbered
            m2: the legal play numbered 2;  p: pass (not when you lead)
  after a round: Enter for the next one
  h: this help and every legal play;  q: leave the table"""
#: What the four-player variant adds to the help.
HELP_4P = """Four players, two decks:
  ' marks a card of the second deck (5h' is the second deck's 5 of hearts: alike in play)
  only a rocket or a bomb of 6 or more cards doubles the stake (4- and 5-card bombs do not)"""
_RED = (cards_pb2.SUIT_HEARTS, cards_pb2.SUIT_DIAMONDS)
_KINDS = {
    cards_pb2.COMBINATION_KIND_TRIO_SEQUENCE: "airplane",
}


def _card(card: cards_pb2.Card) -> Text:
    red = card.suit in _RED or card.rank == cards_pb2.RANK_RED_JOKER
    return Text(format_card(card), style="bold red" if red else "bold")


def _cards(cards: Sequence[cards_pb2.Card]) -> Text:
    return Text(" ").join(_card(card) for card in sorted_cards(cards)) if cards else Text("-")


def kind_name(combination: cards_pb2.Combination) -> str:
    """A combination kind in words: ``trio with pair``."""
    if combination.kind in _KINDS:
        return _KINDS[combination.kind]
    return cards_pb2.CombinationKind.Name(combination.kind).removeprefix("COMBINATION_KIND_").lower().replace("_", " ")


def seconds_left(view: table_pb2.TableView, skew_s: float = 0.0) -> int | None:
    """Whole seconds before the turn's deadline (None without a clock)."""
    if not view.HasField("turn_deadline"):
        return None
    left = view.turn_deadline.ToDatetime(tzinfo=dt.UTC) - dt.datetime.now(tz=dt.UTC)
    return max(0, int(left.total_seconds() - skew_s + 0.999))


class Screen:
    """Writes the table to ``console``."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def say(self, text: str, style: str = "") -> None:
        self.console.print(Text(text, style=style))

    def refused(self, reason: str, message: str) -> None:
        self.console.print(Text.assemble(("refused: ", "bold red"), (reason, "bold red"), " ", message))

    def table(self, view: table_pb2.TableView) -> None:
        """The seats (presence, role, cards left, balance, last move) and the trick."""
        last: dict[int, Text] = {}
        if view.phase == table_pb2.PHASE_AUCTION:
            for bid in view.bids:
                last[bid.seat] = Text(f"bid {bid.amount}" if bid.amount else "pass")
        for play in view.trick.plays:
            last[play.seat] = _cards(play.cards) if play.cards else Text("pass", style="italic")
        seats = Table(show_header=True, header_style="bold", box=None, padding=(0, 2))
        for column in ("", "seat", "player", "role", "cards", "balance", "last"):
            seats.add_column(column)
        for seat in view.seats:
            role = ""
            if view.HasField("landlord_seat"):
                role = "landlord" if seat.seat == view.landlord_seat else "farmer"
            here = Text("●", style="green") if seat.connected else Text("○", style="dim")
            turn = "▶" if view.HasField("turn_seat") and view.turn_seat == seat.seat else ""
            name = seat.player_name + (" (you)" if view.HasField("your_seat") and seat.seat == view.your_seat else "")
            seats.add_row(
                Text(turn, style="bold yellow"),
                Text.assemble(here, f" {seat.seat}"),
                name or "(free)",
                role,
                str(seat.cards_left),
                f"{seat.balance:+d}",
                last.get(seat.seat, Text("")),
            )
        self.console.print()
        self.console.print(
            Text(f"Round {view.round}", style="bold"), Text(f"  stake {view.stake}" if view.stake else "")
        )
        self.console.print(seats)
        if view.kitty:
            self.console.print(Text("kitty: "), _cards(view.kitty))

    def hand(self, view: table_pb2.TableView) -> None:
        """The seat's hand, sorted low to high and numbered from 1."""
        line = Text("your hand: ")
        for number, card in enumerate(sorted_cards(view.your_hand), start=1):
            line.append(f"{number}:", style="dim")
            line.append_text(_card(card))
            line.append(" ")
        self.console.print(line)

    def legal(self, legal: Sequence[rules_service_pb2.LegalMove], *, per_kind: int | None = 2) -> None:
        """The legal plays, numbered from 1 (``m<n>`` plays one); ``per_kind`` of each kind (None: all)."""
        if not legal:
            self.console.print(Text("nothing beats it: pass (p)", style="italic"))
            return
        seen: dict[int, int] = {}
        shown = []
        for number, move in enumerate(legal, start=1):
            seen[move.combination.kind] = seen.get(move.combination.kind, 0) + 1
            if per_kind is None or seen[move.combination.kind] <= per_kind:
                shown.append((number, move))
        line = Text("legal plays: ")
        for number, move in shown:
            line.append(f"m{number} ", style="cyan")
            line.append(f"{kind_name(move.combination)} ")
            line.append_text(_cards(move.cards))
            line.append("   ")
        if len(shown) < len(legal):
            line.append(f"and {len(legal) - len(shown)} more (h lists them all)", style="dim")
        self.console.print(line)
