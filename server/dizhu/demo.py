"""``dizhu demo``: a referee with an embedded Redis, bundled bots playing through gRPC, a narrator.

Everything runs in this process and its event loop: :func:`dizhu.process.local_referee`
starts the gRPC referee on a free port of 127.0.0.1 with a throw-away embedded Redis; the
demo creates a table (``NEXT_ROUND_WHEN_ALL_SETTLED``, so every round's result is shown
before the next deal), and one :class:`~dizhu.client.BotRunner` per seat plays it over
gRPC exactly as a remote bot would, each following the table through its own
``WatchTable`` stream. The narrator is a spectator with a stream of its own (no token: it
never sees a hand) and tells the table's events as they come: the auction, every play,
and, once a deal is over, the deal's reveal -- the seed, checked against the commitment
published before the auction, and every hand as dealt.

With ``--seed`` the whole game is reproducible: round 1 uses the seed, round *n* > 1 the
seed ``SHA-256("dizhu-demo" || seed || u32be(n))``, and the random bots draw from the seed.
"""

from __future__ import annotations

import asyncio
import hashlib
import struct
from collections.abc import Callable, Sequence

from dizhu.client import BotRunner, TableClient
from dizhu.client.bots import BOT_KINDS
from dizhu.client.cards import format_card, format_cards
from dizhu.process import local_referee
from dizhu.rules.variants import FOUR_PLAYER, THREE_PLAYER, Variant
from dizhu.v1 import cards_pb2, events_pb2, table_pb2

__all__ = ["Narrator", "bot_kinds", "demo_seeds", "run_demo"]

_NAMES = ("Ann", "Bob", "Cyd", "Dee")
_VARIANTS: dict[int, Variant] = {
    cards_pb2.VARIANT_THREE_PLAYER: THREE_PLAYER,
    cards_pb2.VARIANT_FOUR_PLAYER: FOUR_PLAYER,
}
_OUTCOME = {
    table_pb2.ROUND_OUTCOME_LANDLORD_WON: "the landlord wins",
    table_pb2.ROUND_OUTCOME_FARMERS_WON: "the farmers win",
    table_pb2.ROUND_OUTCOME_VOID: "every deal was thrown in: the round is void",
    table_pb2.ROUND_OUTCOME_ABANDONED: "the round was abandoned",
}


def demo_seeds(seed: bytes, rounds: int) -> list[bytes]:
    """The round seeds of a reproducible demo: ``seed``, then ``SHA-256("dizhu-demo" || seed || u32be(n))``."""
    return [seed] + [hashlib.sha256(b"dizhu-demo" + seed + struct.pack(">I", n)).digest() for n in range(2, rounds + 1)]


def bot_kinds(variant: str, bots: Sequence[str] | None) -> list[str]:
    """The bot of each seat (all heuristic by default); ValueError naming the choices if wrong."""
    players = 4 if variant == "4p" else 3
    kinds = list(bots) if bots else ["heuristic"] * players
    if len(kinds) != players or any(kind not in BOT_KINDS for kind in kinds):
        raise ValueError(f"--bots needs {players} names among {', '.join(sorted(BOT_KINDS))}")
    return kinds


def _kind(combination: cards_pb2.Combination) -> str:
    name = cards_pb2.CombinationKind.Name(combination.kind)
    return name.removeprefix("COMBINATION_KIND_").lower().replace("_", " ")


def _late(timed_out: bool) -> str:
    """What a decision the clock made for its seat says of it (the web table's words)."""
    return " (time ran out)" if timed_out else ""


class Narrator:
    """Turns the table's public events (``WatchTable``, as a spectator) into lines of text.

    Built from the stream's first message, the snapshot; then :meth:`on_event` takes each
    event in the table's order. It sees what any spectator sees -- never a hand before
    its deal is over -- and checks each revealed seed against the commitment published
    before the auction.
    """

    def __init__(self, view: table_pb2.TableView, kinds: Sequence[str], write: Callable[[str], None]) -> None:
        self.write = write
        self.kinds = list(kinds)
        self.names = [seat.player_name for seat in view.seats]
        variant = _VARIANTS.get(view.settings.variant, THREE_PLAYER)
        self._hand_size = variant.hand_size
        #: Whether the table_closed event has been seen.
        self.closed = view.phase == table_pb2.PHASE_CLOSED
        #: The latest deal narrated, as (round, deal number): deal numbers count within a round.
        self._shown_deal = (0, 0)
        self._commitments: dict[tuple[int, int], bytes] = {}
        self._landlord: int | None = view.landlord_seat if view.HasField("landlord_seat") else None
        #: The decisions (bids, plays, passes) narrated in the deal of ``_shown_deal``.
        self._decisions = 0
        #: The latest round whose end was narrated.
        self._ended_round = view.last_settlement.round
        if view.phase == table_pb2.PHASE_PLAY:
            self._shown_deal = (view.round, view.deal_number)
            self._commitments[self._shown_deal] = view.seed_commitment
        if view.phase == table_pb2.PHASE_AUCTION:
            self._deal_header(
                view.round,
                view.deal_number,
                view.redeals,
                view.dealer_seat,
                view.face_up_seat,
                view.face_up_card,
                view.seed_commitment,
            )
            for bid in view.bids:  # made before the snapshot: told, so that the auction reads whole
                self.write(f"  {self.who(bid.seat)} " + ("passes" if bid.amount == 0 else f"bids {bid.amount}"))
        if view.phase in (table_pb2.PHASE_AUCTION, table_pb2.PHASE_PLAY):  # what the snapshot's deal saw so far
            self._decisions = sum(1 for action in view.history if action.deal_number == view.deal_number)

    def who(self, seat: int, *, role: bool = True) -> str:
        """``Ann (seat 0, landlord)``; a name ending in a parenthesis shares it: ``Bob (random bot, seat 1)``."""
        facts = f"seat {seat}"
        if role and self._landlord is not None:
            facts += ", landlord" if seat == self._landlord else ", farmer"
        name = self.names[seat]
        if name.endswith(")") and "(" in name:
            return f"{name[:-1]}, {facts})"
        return f"{name} ({facts})"

    def _deal_header(
        self,
        round_number: int,
        deal_number: int,
        redeals: int,
        dealer: int,
        face_up_seat: int,
        face_up_card: cards_pb2.Card,
        commitment: bytes,
    ) -> None:
        """A new deal, unless it was narrated already."""
        if (round_number, deal_number) <= self._shown_deal:
            return
        self._shown_deal = (round_number, deal_number)
        self._commitments[round_number, deal_number] = commitment
        self._landlord = None
        self._decisions = 0
        redeal = f", redeal {redeals}" if redeals else ""
        self.write("")
        self.write(f"=== Round {round_number} (deal {deal_number}{redeal}) ===")
        self.write(f"{self.who(dealer)} deals {self._hand_size} cards to each seat.")
        self.write(f"{self.who(face_up_seat)} drew the face-up card {format_card(face_up_card)} and bids first.")
        self.write(f"Seed commitment sha256(seed) = {commitment.hex()[:32]}...")
        self.write("Auction:")

    def on_event(self, event: events_pb2.TableEvent) -> None:
        """Narrate one event (snapshots, heartbeats, settles and clock events say nothing)."""
        kind = event.WhichOneof("payload")
        if kind == "deal_started":
            deal = event.deal_started
            self._deal_header(
                deal.round,
                deal.deal_number,
                deal.deal_number - 1,
                deal.dealer_seat,
                deal.face_up_seat,
                deal.face_up_card,
                deal.seed_commitment,
            )
        elif kind == "seat_joined":
            joined = event.seat_joined
            self.names[joined.seat] = joined.player_name
            self.write(f"{self.who(joined.seat, role=False)} takes a seat.")
        elif kind == "seat_left":
            self.write(f"{self.who(event.seat_left.seat, role=False)} leaves the table.")
        elif kind == "bid_made":
            bid = event.bid_made
            self._decisions += 1
            said = "passes" if bid.amount == 0 else f"bids {bid.amount}"
            self.write(f"  {self.who(bid.seat)} {said}{_late(bid.timed_out)}")
        elif kind == "landlord_chosen":
            chosen = event.landlord_chosen
            self._landlord = chosen.landlord_seat
            self.write(
                f"{self.who(chosen.landlord_seat)} is the landlord at {chosen.bid} and takes the kitty"
                f" {format_cards(chosen.kitty)} ({self._hand_size + len(chosen.kitty)} cards)."
            )
            self.write("Play:")
        elif kind == "deal_thrown_in":
            thrown = event.deal_thrown_in
            if thrown.round_void:
                self.write("Everybody passed again: the cards are thrown in and the round is void.")
            else:
                self.write("Everybody passed: the cards are thrown in and dealt again.")
            self._reveal(thrown.reveal)
        elif kind == "cards_played":
            self._play(event.cards_played)
        elif kind == "round_ended":
            self._round_over(event.round_ended)
        elif kind == "table_closed":
            self.closed = True

    def _play(self, played: events_pb2.CardsPlayed) -> None:
        self._decisions += 1
        if not played.cards:
            self.write(f"    {self.who(played.seat)} passes{_late(played.timed_out)}")
            if played.trick_closed and played.HasField("next_seat"):
                self.write(f"  -- trick to {self.who(played.next_seat)}, who leads next")
            return
        # The referee says whether the play doubled the stake (the 4p rule counts a bomb's size).
        doubled = "  -- the stake doubles!" if played.doubling != table_pb2.DOUBLING_CAUSE_UNSPECIFIED else ""
        self.write(
            f"    {self.who(played.seat)} plays {_kind(played.combination)}: {format_cards(played.cards)}"
            f"  ({played.cards_left} left){_late(played.timed_out)}{doubled}"
        )

    def _round_over(self, ended: events_pb2.RoundEnded) -> None:
        s = ended.settlement
        self._ended_round = max(self._ended_round, s.round)
        if s.HasField("winner_seat"):
            self.write(f"{self.who(s.winner_seat)} is out of cards: {_OUTCOME.get(s.outcome, 'the round is over')}.")
        else:
            self.write(f"Round over: {_OUTCOME.get(s.outcome, 'the round is over')}.")
        extras = [f"bid {s.bid}", f"{s.doublings} doubling(s)"]
        if s.spring:
            extras.append("spring")
        changes = ", ".join(f"{self.names[seat]} {delta:+d}" for seat, delta in enumerate(s.balance_changes))
        self.write(f"Settlement of round {s.round}: stake {s.stake} ({', '.join(extras)}): {changes}.")
        self.write("Balances: " + ", ".join(f"{self.names[seat]} {b:+d}" for seat, b in enumerate(ended.balances)))
        if ended.HasField("reveal"):  # a void round's last deal was revealed when it was thrown in
            self._reveal(ended.reveal)

    def has_told(self, view: table_pb2.TableView) -> bool:
        """Whether everything ``view`` shows was narrated: its deal, every decision of it, the
        landlord, the end of its round, the table's close (what a change's later events tell
        arrives after its first one, with the same version)."""
        if view.phase == table_pb2.PHASE_CLOSED:
            return self.closed
        if view.phase == table_pb2.PHASE_ROUND_OVER:
            return self._ended_round >= view.last_settlement.round
        if view.phase in (table_pb2.PHASE_AUCTION, table_pb2.PHASE_PLAY):
            if self._shown_deal != (view.round, view.deal_number):
                return False
            if view.phase == table_pb2.PHASE_PLAY and self._landlord is None:
                return False
            return self._decisions >= sum(1 for action in view.history if action.deal_number == view.deal_number)
        return True

    def _reveal(self, reveal: table_pb2.DealReveal) -> None:
        commitment = self._commitments.get((reveal.round, reveal.deal_number))
        digest = hashlib.sha256(reveal.seed).digest()
        if commitment is None:
            check = "(commitment not seen)"
        elif digest == commitment:
            check = "sha256(seed) == commitment ✓"
        else:
            check = "sha256(seed) != commitment ✗ MISMATCH"
        self.write(f"Seed revealed: {reveal.seed.hex()}  {check}")
        self.write("Hands as dealt:")
        for hand in reveal.hands:
            self.write(f"  {self.who(hand.seat, role=False):<16} {format_cards(hand.cards)}")
        self.write(f"  {'kitty':<16} {format_cards(reveal.kitty)}")


async def run_demo(
    *,
    variant: str = "3p",
    rounds: int = 1,
    seed: bytes | None = None,
    bots: Sequence[str] | None = None,
    dealer: int | None = None,
    write: Callable[[str], None],
) -> int:
    """Play and narrate a demonstration table (``dealer``: the first round's dealing seat, default 0); 0 when
    it closed with balances summing to zero."""
    kinds = bot_kinds(variant, bots)
    players = len(kinds)
    names = list(_NAMES[:players])
    async with local_referee() as target, TableClient(target) as creator:
        write(f"A dizhu referee is listening on {target} (with an embedded Redis).")
        created = await creator.create_table(
            variant=variant,
            player_names=names,
            round_limit=rounds,
            seeds=demo_seeds(seed, rounds) if seed is not None else (),
            next_round=table_pb2.NEXT_ROUND_WHEN_ALL_SETTLED,
            first_dealer=dealer,
        )
        write(
            f"Table {created.table_id}: {players} players, {rounds} round(s). Players: "
            + ", ".join(f"{name} ({kind} bot)" for name, kind in zip(names, kinds, strict=True))
            + "."
        )
        # The narrator is a spectator following the table's stream; it starts before the bots.
        spectator = TableClient(creator.channel, table_id=created.table_id)
        events = spectator.watch()
        first = await anext(events)
        narrator = Narrator(first.snapshot if first.HasField("snapshot") else created.table, kinds, write)
        if not first.HasField("snapshot"):
            narrator.on_event(first)
        base = seed or b""
        runners = [
            BotRunner(BOT_KINDS[kind](base + struct.pack(">I", seat)), creator.for_seat(token.token))
            for seat, (kind, token) in enumerate(zip(kinds, created.seat_tokens, strict=True))
        ]

        async def narrate() -> None:
            async for event in events:
                narrator.on_event(event)

        async with asyncio.TaskGroup() as group:
            group.create_task(narrate())
            for runner in runners:
                group.create_task(runner.run())
        final = await creator.get()
    balances = [seat.balance for seat in final.seats]
    write("")
    write(
        f"The table is closed ({table_pb2.CloseReason.Name(final.close_reason).removeprefix('CLOSE_REASON_').lower()})"
        f" after {final.round} round(s), {sum(runner.decisions for runner in runners)} decisions."
    )
    standings = sorted(final.seats, key=lambda seat: -seat.balance)
    write("Final balances: " + ", ".join(f"{seat.player_name} {seat.balance:+d}" for seat in standings))
    return 0 if sum(balances) == 0 and final.phase == table_pb2.PHASE_CLOSED else 1
