"""The referee's commands: pure functions from a table (and a caller) to the next table.

Each command checks who may do what, applies the rules core, carries the table on (a round
that ends is settled and booked; a thrown-in deal is redealt; the next round is dealt as the
table's settings say) and returns an ``Outcome``: the new table, one version higher, and the
events the change produced. A refusal raises a ``RefereeError`` and changes nothing.

Decisions made here (documented in ``docs/tables.md``; how a table carries on between
commands -- dealing, clocks, ending rounds -- is in ``dizhu.referee.flow``):

* a table deals its first round as soon as every seat is taken;
* the first dealer is the creator's choice, else derived from the first preset seed (so a
  seeded table is reproducible), else random;
* leaving during play forfeits the round (the leaver's side loses the current stake);
  leaving during the auction, or the creator closing a table mid-round, abandons the round
  (nothing is settled); a free seat can be taken by anyone with JoinTable, and the next
  round starts once the table is full again.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Callable, Sequence

from dizhu.referee import events as ev
from dizhu.referee.auth import Principal, hash_token
from dizhu.referee.errors import (
    InvalidArgument,
    SeatTaken,
    StaleState,
    TableClosed,
    TableFull,
    WrongPhase,
    from_refusal,
)
from dizhu.referee.flow import (
    Events,
    after_deal,
    allowance_ms,
    close_table,
    deal_next,
    forfeit_round,
    maybe_start,
)
from dizhu.referee.limits import check_name, check_seeds, check_settings
from dizhu.referee.refusals import refusal_metadata
from dizhu.referee.replay import Timing
from dizhu.referee.table import (
    CloseReason,
    Seat,
    TableSettings,
    TableState,
    TableStatus,
    TimeoutPolicy,
    TurnClock,
    Upkeep,
    evolve,
)
from dizhu.referee.timeouts import auto_action
from dizhu.rules import (
    Action,
    Bid,
    Card,
    IllegalAction,
    LandlordChosen,
    Phase,
    Play,
    RoundState,
    apply,
    derive_seed,
    new_match,
)
from dizhu.rules import BidMade as RulesBidMade
from dizhu.rules import CardsPlayed as RulesCardsPlayed
from dizhu.rules import TrickClosed as RulesTrickClosed

__all__ = [
    "Context",
    "Created",
    "Joined",
    "Mint",
    "Outcome",
    "abandon",
    "bid",
    "check_name",
    "close",
    "create_table",
    "join",
    "leave",
    "play",
    "settle_round",
    "timeout",
]

#: Makes a fresh bearer token (the service derives them from its secret: ``dizhu.referee.tokens``).
Mint = Callable[[], str]


def _mints_nothing() -> str:
    raise AssertionError("this request mints no token")


@dataclasses.dataclass(frozen=True, slots=True)
class Context:
    """What a command knows about its request besides the table."""

    principal: Principal
    now_ms: int
    #: The version the caller last saw; 0 means "don't check".
    expected_version: int = 0
    #: Makes the tokens the command hands out (JoinTable's seat token).
    mint: Mint = _mints_nothing


def _fresh(table: TableState, ctx: Context) -> None:
    """STALE_STATE unless the caller saw the current version (0 skips the check)."""
    if ctx.expected_version and ctx.expected_version != table.version:
        raise StaleState(
            f"the table is at version {table.version}, not {ctx.expected_version}",
            metadata={"table_id": table.table_id, "current_version": str(table.version)},
        )


@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    """A command's result. ``changed`` is False for a command that changed nothing (a repeated Settle)."""

    table: TableState
    events: tuple[ev.TableEvent, ...]
    changed: bool = True


@dataclasses.dataclass(frozen=True, slots=True)
class Created:
    outcome: Outcome
    creator_token: str
    #: ``(seat, name, token)`` for every pre-assigned player.
    seat_tokens: tuple[tuple[int, str, str], ...]


@dataclasses.dataclass(frozen=True, slots=True)
class Joined:
    outcome: Outcome
    seat: int
    token: str


def _first_dealer(settings: TableSettings, seeds: Sequence[bytes]) -> int:
    players = settings.variant.players
    if settings.first_dealer is not None:
        return settings.first_dealer
    if seeds:
        return int.from_bytes(derive_seed(seeds[0], "first-dealer", 0)[:4], "big") % players
    return secrets.randbelow(players)


def create_table(
    table_id: str,
    settings: TableSettings,
    seeds: Sequence[bytes],
    player_names: Sequence[str],
    now_ms: int,
    mint: Mint,
    *,
    owner: str = "",
    unattended_limit: int = 0,
) -> Created:
    """A new table; pre-assigned players are seated with tokens that go back to the creator.

    ``owner`` names the creator for the service's quotas; ``unattended_limit`` closes the table
    once that many rounds in a row were played by the clock alone (0: never).
    """
    variant = settings.variant
    check_seeds(seeds)
    if len(player_names) > variant.players:
        raise InvalidArgument("player_names", f"{variant.name} has only {variant.players} seats")
    check_settings(settings)
    names = [check_name(f"player_names[{index}]", name) for index, name in enumerate(player_names)]
    creator_token = mint()
    seat_tokens = []
    seats = []
    for index in range(variant.players):
        if index < len(names):
            name = names[index]
            token = mint()
            seat_tokens.append((index, name, token))
            seats.append(Seat(name, hash_token(token), reserved=True))
        else:
            seats.append(Seat())
    match = new_match(
        variant,
        _first_dealer(settings, seeds),
        redeal_cap=settings.redeal_cap,
        round_limit=settings.round_limit,
    )
    table = TableState(
        table_id=table_id,
        settings=settings,
        seeds=tuple(seeds),
        creator_hash=hash_token(creator_token),
        seats=tuple(seats),
        match=match,
        created_ms=now_ms,
        updated_ms=now_ms,
        upkeep=Upkeep(active_ms=now_ms, unattended_limit=unattended_limit, owner=owner),
    )
    events: Events = [ev.SeatJoined(seat, name) for seat, name, _ in seat_tokens]
    if table.is_full:
        table = deal_next(table, events, now_ms)
    return Created(Outcome(table, tuple(events)), creator_token, tuple(seat_tokens))


def _bump(before: TableState, after: TableState, events: Events, now_ms: int, *, by_client: bool = True) -> Outcome:
    """The change as a new version; a client's change (not the clock's) also marks the table active."""
    upkeep = after.upkeep.active_at(now_ms) if by_client else after.upkeep
    return Outcome(evolve(after, version=before.version + 1, updated_ms=now_ms, upkeep=upkeep), tuple(events))


def _open(table: TableState) -> None:
    if table.status is TableStatus.CLOSED:
        raise TableClosed("the table is closed", metadata={"table_id": table.table_id})


def join(table: TableState, ctx: Context, name: str, seat: int | None) -> Joined:
    """Take a free seat (``seat``, or the first free one) and get its token."""
    check_name("player_name", name)
    if seat is not None and not 0 <= seat < table.variant.players:
        raise InvalidArgument("seat", f"{table.variant.name} has no seat {seat}")
    _open(table)
    _fresh(table, ctx)
    if seat is not None:
        if table.seats[seat].occupied:
            raise SeatTaken(f"seat {seat} is taken", metadata={"table_id": table.table_id, "seat": str(seat)})
        chosen = seat
    else:
        free = [index for index, s in enumerate(table.seats) if not s.occupied]
        if not free:
            raise TableFull("every seat is taken", metadata={"table_id": table.table_id})
        chosen = free[0]
    token = ctx.mint()
    seats = list(table.seats)
    seats[chosen] = Seat(name, hash_token(token))
    after = evolve(table, seats=tuple(seats))
    events: Events = [ev.SeatJoined(chosen, name)]
    after = maybe_start(after, events, ctx.now_ms)
    return Joined(_bump(table, after, events, ctx.now_ms), chosen, token)


def _running_deal(table: TableState, ctx: Context, doing: str) -> RoundState:
    _open(table)
    _fresh(table, ctx)
    if table.status is not TableStatus.IN_ROUND or table.round is None:
        raise WrongPhase(
            f"cannot {doing}: no deal is running",
            metadata={"table_id": table.table_id, "phase": table.phase_name},
        )
    return table.round


def _act(table: TableState, action: Action, now_ms: int, *, timed_out: bool = False) -> Outcome:
    state = table.round
    assert state is not None
    try:
        transition = apply(state, action)
    except IllegalAction as refusal:
        raise from_refusal(refusal, refusal_metadata(table, state, refusal, action)) from None
    after = transition.state
    turn = table.turn
    took = max(0, now_ms - turn.started_ms)
    banks = list(turn.banks_ms)
    if table.settings.clock.decision_ms:
        overflow = max(0, took - allowance_ms(table, state))
        banks[action.seat] = 0 if timed_out else max(0, banks[action.seat] - overflow)
    table = evolve(
        table,
        turn=TurnClock(turn.started_ms, turn.deadline_ms, tuple(banks), turn.timeouts),
        timings=(*table.timings, Timing(now_ms, took, timed_out)),
        upkeep=table.upkeep if timed_out else table.upkeep.attended_now(),
    )
    events: Events = []
    trick_closed = any(isinstance(event, RulesTrickClosed) for event in transition.events)
    # The seat to act once the move is applied, while the phase the move was made in goes on.
    next_seat = after.turn if after.phase is state.phase else None
    for event in transition.events:
        if isinstance(event, RulesBidMade):
            events.append(
                ev.BidMade(event.seat, event.amount, timed_out, next_seat=next_seat, auction_closed=next_seat is None)
            )
        elif isinstance(event, LandlordChosen):
            events.append(event)
        elif isinstance(event, RulesCardsPlayed):
            events.append(
                ev.CardsPlayed(
                    seat=event.seat,
                    cards=event.cards,
                    combination=event.combination,
                    cards_left=len(after.hands[event.seat]),
                    stake=after.stake,
                    trick_closed=trick_closed,
                    timed_out=timed_out,
                    next_seat=next_seat,
                    doubled=event.doubled,
                )
            )
    return _bump(table, after_deal(table, after, events, now_ms), events, now_ms, by_client=not timed_out)


def bid(table: TableState, ctx: Context, amount: int) -> Outcome:
    """The caller's seat bids ``amount`` (0 passes)."""
    seat = ctx.principal.require_seat("bid")
    _running_deal(table, ctx, "bid")
    return _act(table, Bid(seat, amount), ctx.now_ms)


def play(table: TableState, ctx: Context, cards: tuple[Card, ...]) -> Outcome:
    """The caller's seat plays ``cards`` (none passes)."""
    seat = ctx.principal.require_seat("play")
    _running_deal(table, ctx, "play")
    return _act(table, Play(seat, cards), ctx.now_ms)


def leave(table: TableState, ctx: Context) -> Outcome:
    """The caller gives up its seat; mid-round that forfeits or abandons the round."""
    seat = ctx.principal.require_seat("leave a table")
    _open(table)
    _fresh(table, ctx)
    seats = list(table.seats)
    events: Events = [ev.SeatLeft(seat, seats[seat].name)]
    seats[seat] = Seat()
    # Leaving is a seat's own act: the round it ends was attended.
    after = evolve(
        table, seats=tuple(seats), awaiting_settle=table.awaiting_settle - {seat}, upkeep=table.upkeep.attended_now()
    )
    if table.status is TableStatus.IN_ROUND and table.round is not None:
        after = forfeit_round(after, seat, "left", events, ctx.now_ms)
    elif table.status is TableStatus.ROUND_OVER:
        after = maybe_start(after, events, ctx.now_ms)  # no longer waits for the leaver's Settle
    return _bump(table, after, events, ctx.now_ms)


def close(table: TableState, ctx: Context) -> Outcome:
    """The creator closes the table; a running round is abandoned."""
    ctx.principal.require_creator("close the table")
    _open(table)
    _fresh(table, ctx)
    events: Events = []
    return _bump(table, close_table(table, CloseReason.CLOSED_BY_CREATOR, events), events, ctx.now_ms)


def abandon(table: TableState, now_ms: int) -> Outcome:
    """Close a table nobody acted at for too long (the service decides when); a running round is abandoned.

    A closed table stays as it is (the outcome changes nothing).
    """
    if table.status is TableStatus.CLOSED:
        return Outcome(table, (), changed=False)
    events: Events = []
    return _bump(table, close_table(table, CloseReason.ABANDONED, events), events, now_ms, by_client=False)


def timeout(table: TableState, now_ms: int) -> Outcome:
    """The clock acts for the seat to act once its time, bank included, has run out.

    Auto-play passes when allowed, else makes the smallest legal play
    (``dizhu.referee.timeouts.auto_action``). Forfeit makes the seat's side
    lose the round at the current stake; in the auction, where there is no stake yet, the
    seat passes. Either way the seat gets a strike. Not due yet: nothing changes.
    """
    state = table.round
    turn = table.turn
    if table.status is not TableStatus.IN_ROUND or state is None or not turn.deadline_ms or now_ms < turn.deadline_ms:
        return Outcome(table, (), changed=False)
    seat = state.turn
    strikes = list(turn.timeouts or (0,) * table.variant.players)
    strikes[seat] += 1
    table = evolve(table, turn=TurnClock(turn.started_ms, turn.deadline_ms, turn.banks_ms, tuple(strikes)))
    if table.settings.clock.policy is TimeoutPolicy.FORFEIT and state.phase is Phase.PLAY:
        events: Events = []
        return _bump(table, forfeit_round(table, seat, "timeout", events, now_ms), events, now_ms, by_client=False)
    return _act(table, auto_action(state), now_ms, timed_out=True)


def settle_round(table: TableState, ctx: Context) -> Outcome:
    """The caller acknowledges the last round's settlement (which deals on once all have)."""
    seat = ctx.principal.require_seat("settle")
    _fresh(table, ctx)
    if table.last_result is None:
        raise WrongPhase("no round has ended yet", metadata={"table_id": table.table_id, "phase": table.phase_name})
    if table.status is not TableStatus.ROUND_OVER or seat not in table.awaiting_settle:
        return Outcome(table, (), changed=False)
    events: Events = [ev.SeatSettled(seat, table.last_result.round)]
    after = evolve(table, awaiting_settle=table.awaiting_settle - {seat})
    after = maybe_start(after, events, ctx.now_ms)
    return _bump(table, after, events, ctx.now_ms)
