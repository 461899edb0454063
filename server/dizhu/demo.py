"""``dizhu demo``: a referee with an embedded Redis, bundled bots playing through gRPC, a narrator.

Everything runs in this process and its event loop: :func:`dizhu.testing.local_referee`
starts the gRPC referee on a free port of 127.0.0.1 with a throw-away embedded Redis; the
demo creates a table (``NEXT_ROUND_WHEN_ALL_SETTLED``, so every round's result is shown
before the next deal), and one :class:`~dizhu.client.BotRunner` per seat plays it over
gRPC exactly as a remote bot would. The narrator is a spectator: it reads the public
views the referee answers each bot with (never a hand) and, once a deal is over, the
deal's reveal -- the seed, checked against the commitment published before the auction,
and every hand as dealt.

With ``--seed`` the whole game is reproducible: round 1 uses the seed, round *n* > 1 the
seed ``SHA-256("dizhu-demo" || seed || u32be(n))``, and the random bots draw from the seed.
"""

from __future__ import annotations

import asyncio
import hashlib
import struct
from collections.abc import Callable, Sequence

from dizhu.client import Bot, BotRunner, Decision, HeuristicBot, RandomBot, TableClient
from dizhu.client.cards import format_card, format_cards
from dizhu.testing import local_referee
from dizhu.v1 import cards_pb2, table_pb2

__all__ = ["BOT_KINDS", "Narrator", "bot_kinds", "demo_seeds", "run_demo"]

#: The bundled bots by name, each made from a per-seat seed.
BOT_KINDS: dict[str, Callable[[bytes], Bot]] = {"heuristic": HeuristicBot, "random": RandomBot}
_NAMES = ("Ann", "Bob", "Cyd", "Dee")
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


class Narrator:
    """Turns the bots' accepted decisions into lines of text, in the order the table changed.

    Decisions come from several bots' tasks; each is keyed by the version its change
    produced and printed once every earlier change has been, so the story is in table
    order even if a bot's task resumes late.
    """

    def __init__(self, view: table_pb2.TableView, kinds: Sequence[str], write: Callable[[str], None]) -> None:
        self.write = write
        self.kinds = list(kinds)
        self.names = [seat.player_name for seat in view.seats]
        self.version = view.version
        self._pending: dict[int, Decision] = {}
        self._shown_deal = 0
        self._commitments: dict[int, bytes] = {}
        self._landlord: int | None = None
        self._deal_header(view)

    def who(self, seat: int, *, role: bool = True) -> str:
        label = f"{self.names[seat]} (seat {seat}"
        if role and self._landlord is not None:
            label += ", landlord" if seat == self._landlord else ", farmer"
        return label + ")"

    def _deal_header(self, view: table_pb2.TableView) -> None:
        """The new deal, if ``view`` shows one not narrated yet."""
        if view.deal_number <= self._shown_deal or view.phase != table_pb2.PHASE_AUCTION:
            return
        self._shown_deal = view.deal_number
        self._commitments[view.deal_number] = view.seed_commitment
        self._landlord = None
        redeal = f", redeal {view.redeals}" if view.redeals else ""
        self.write("")
        self.write(f"=== Round {view.round} (deal {view.deal_number}{redeal}) ===")
        self.write(f"{self.who(view.dealer_seat)} deals {view.seats[0].cards_left} cards to each seat.")
        self.write(
            f"{self.who(view.face_up_seat)} drew the face-up card {format_card(view.face_up_card)} and bids first."
        )
        self.write(f"Seed commitment sha256(seed) = {view.seed_commitment.hex()[:32]}...")
        self.write("Auction:")

    def add(self, decision: Decision) -> None:
        """Take one decision; print it and every buffered one that now follows in order."""
        if decision.after.version <= self.version:
            return  # a call that changed nothing (Settle on an automatic table)
        self._pending[decision.after.version] = decision
        while self.version + 1 in self._pending:
            self.version += 1
            self._narrate(self._pending.pop(self.version))

    def flush(self) -> None:
        """Print whatever is still buffered (nothing, when every change was seen)."""
        for version in sorted(self._pending):
            self._narrate(self._pending.pop(version))

    def _narrate(self, d: Decision) -> None:
        before, after = d.before, d.after
        if d.action == "bid":
            self.write(f"  {self.who(d.seat)} " + ("passes" if d.amount == 0 else f"bids {d.amount}"))
            if after.HasField("landlord_seat") and after.deal_number == before.deal_number:
                self._landlord = after.landlord_seat
                self.write(
                    f"{self.who(after.landlord_seat)} is the landlord at {after.highest_bid} and takes the kitty"
                    f" {format_cards(after.kitty)} ({after.seats[after.landlord_seat].cards_left} cards)."
                )
                self.write("Play:")
            elif after.deal_number > before.deal_number:
                self.write("Everybody passed: the cards are thrown in and dealt again.")
                self._reveal(after)
        elif d.action == "play":
            self._play(d)
        self._deal_header(after)

    def _play(self, d: Decision) -> None:
        before, after = d.before, d.after
        if not d.cards:
            self.write(f"    {self.who(d.seat)} passes")
        else:
            round_over = after.round != before.round or after.phase in (
                table_pb2.PHASE_ROUND_OVER,
                table_pb2.PHASE_CLOSED,
            )
            left = 0 if round_over else after.seats[d.seat].cards_left
            doubled = "  -- the stake doubles!" if after.doublings > before.doublings else ""
            self.write(
                f"    {self.who(d.seat)} plays {_kind(d.combination)}: {format_cards(d.cards)}  ({left} left){doubled}"
            )
        if after.last_settlement.round > before.last_settlement.round:
            self._round_over(after)
        elif after.tricks_completed > before.tricks_completed:
            # A fresh trick has no plays yet, so its leader is the seat to act.
            self.write(f"  -- trick to {self.who(after.turn_seat)}, who leads next")

    def _round_over(self, view: table_pb2.TableView) -> None:
        s = view.last_settlement
        if s.HasField("winner_seat"):
            self.write(f"{self.who(s.winner_seat)} is out of cards: {_OUTCOME.get(s.outcome, 'the round is over')}.")
        else:
            self.write(f"Round over: {_OUTCOME.get(s.outcome, 'the round is over')}.")
        extras = [f"bid {s.bid}", f"{s.doublings} doubling(s)"]
        if s.spring:
            extras.append("spring")
        changes = ", ".join(f"{self.names[seat]} {delta:+d}" for seat, delta in enumerate(s.balance_changes))
        self.write(f"Settlement of round {s.round}: stake {s.stake} ({', '.join(extras)}): {changes}.")
        self.write("Balances: " + ", ".join(f"{self.names[seat.seat]} {seat.balance:+d}" for seat in view.seats))
        self._reveal(view)

    def _reveal(self, view: table_pb2.TableView) -> None:
        reveal = view.last_reveal
        commitment = self._commitments.get(reveal.deal_number)
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
    write: Callable[[str], None],
) -> int:
    """Play and narrate a demonstration table; 0 when it closed with balances summing to zero."""
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
        )
        write(
            f"Table {created.table_id}: {players} players, {rounds} round(s). Players: "
            + ", ".join(f"{name} ({kind} bot)" for name, kind in zip(names, kinds, strict=True))
            + "."
        )
        narrator = Narrator(created.table, kinds, write)
        base = seed or b""
        runners = [
            BotRunner(
                BOT_KINDS[kind](base + struct.pack(">I", seat)),
                creator.for_seat(token.token),
                on_decision=narrator.add,
            )
            for seat, (kind, token) in enumerate(zip(kinds, created.seat_tokens, strict=True))
        ]
        await asyncio.gather(*(runner.run() for runner in runners))
        narrator.flush()
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
