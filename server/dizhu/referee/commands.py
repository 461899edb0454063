"""The referee's commands: pure functions from a table (and a caller) to the next table.

Each command checks who may do what, applies the rules core, carries the table on (a round
that ends is settled and booked; a thrown-in deal is redealt; the next round is dealt as the
table's settings say) and returns an ``Outcome``: the new table, one version higher, and the
events the change produced. A refusal raises a ``RefereeError`` and changes nothing.

Decisions made here (documented in ``docs/tables.md``):

* a table deals its first round as soon as every seat is taken;
* the first dealer is the creator's choice, else derived from the first preset seed (so a
  seeded table is reproducible), else random;
* round n's first deal uses preset seed n; its k-th redeal ``derive_seed(seed, "redeal", k)``;
  without a preset seed every deal gets a fresh random seed;
* leaving during play forfeits the round (the leaver's side loses the current stake);
  leaving during the auction, or the creator closing a table mid-round, abandons the round
  (nothing is settled); a free seat can be taken by anyone with JoinTable, and the next
  round starts once the table is full again.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Sequence

from dizhu.referee import events as ev
from dizhu.referee.auth import Principal, hash_token, new_token
from dizhu.referee.errors import (
    InvalidArgument,
    SeatTaken,
    StaleState,
    TableClosed,
    TableFull,
    WrongPhase,
    from_refusal,
)
from dizhu.referee.table import (
    CloseReason,
    NextRound,
    Reveal,
    RoundResult,
    RoundResultKind,
    Seat,
    TableSettings,
    TableState,
    TableStatus,
)
from dizhu.rules import (
    SEED_SIZE,
    Action,
    Bid,
    Card,
    IllegalAction,
    MatchState,
    Phase,
    Play,
    Rank,
    Refusal,
    RoundState,
    Settlement,
    Variant,
    apply,
    book_settlement,
    deal,
    derive_seed,
    explain,
    forfeit,
    new_match,
    new_seed,
    record_round,
    settle,
    standings,
    start_round,
)
from dizhu.rules import BidMade as RulesBidMade
from dizhu.rules import CardsPlayed as RulesCardsPlayed
from dizhu.rules import LandlordChosen as RulesLandlordChosen
from dizhu.rules import TrickClosed as RulesTrickClosed

__all__ = [
    "MAX_NAME_LENGTH",
    "Context",
    "Created",
    "Joined",
    "Outcome",
    "bid",
    "classify_reason",
    "close",
    "create_table",
    "join",
    "leave",
    "play",
    "settle_round",
    "table_standings",
]

MAX_NAME_LENGTH = 32
Events = list[ev.TableEvent]


@dataclasses.dataclass(frozen=True, slots=True)
class Context:
    """What a command knows about its request besides the table."""

    principal: Principal
    now_ms: int
    #: The version the caller last saw; 0 means "don't check".
    expected_version: int = 0


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


def _check_name(field: str, name: str) -> str:
    if not 1 <= len(name) <= MAX_NAME_LENGTH or not name.isprintable():
        raise InvalidArgument(field, f"a player name is 1..{MAX_NAME_LENGTH} printable characters")
    return name


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
) -> Created:
    """A new table; pre-assigned players are seated with tokens that go back to the creator."""
    variant = settings.variant
    for index, seed in enumerate(seeds):
        if len(seed) != SEED_SIZE:
            raise InvalidArgument(f"seeds[{index}]", f"a round seed is {SEED_SIZE} bytes, not {len(seed)}")
    if len(player_names) > variant.players:
        raise InvalidArgument("player_names", f"{variant.name} has only {variant.players} seats")
    if settings.first_dealer is not None and not 0 <= settings.first_dealer < variant.players:
        raise InvalidArgument("settings.first_dealer", f"{variant.name} has no seat {settings.first_dealer}")
    creator_token = new_token()
    seat_tokens = []
    seats = []
    for index in range(variant.players):
        if index < len(player_names):
            name = _check_name(f"player_names[{index}]", player_names[index])
            token = new_token()
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
    )
    events: Events = [ev.SeatJoined(seat, name) for seat, name, _ in seat_tokens]
    if table.is_full:
        table = _deal_next(table, events)
    return Created(Outcome(table, tuple(events)), creator_token, tuple(seat_tokens))


def _bump(before: TableState, after: TableState, events: Events, now_ms: int) -> Outcome:
    return Outcome(dataclasses.replace(after, version=before.version + 1, updated_ms=now_ms), tuple(events))


def _open(table: TableState) -> None:
    if table.status is TableStatus.CLOSED:
        raise TableClosed("the table is closed", metadata={"table_id": table.table_id})


def join(table: TableState, ctx: Context, name: str, seat: int | None) -> Joined:
    """Take a free seat (``seat``, or the first free one) and get its token."""
    _check_name("player_name", name)
    _open(table)
    _fresh(table, ctx)
    players = table.variant.players
    if seat is not None:
        if not 0 <= seat < players:
            raise InvalidArgument("seat", f"{table.variant.name} has no seat {seat}")
        if table.seats[seat].occupied:
            raise SeatTaken(f"seat {seat} is taken", metadata={"table_id": table.table_id, "seat": str(seat)})
        chosen = seat
    else:
        free = [index for index, s in enumerate(table.seats) if not s.occupied]
        if not free:
            raise TableFull("every seat is taken", metadata={"table_id": table.table_id})
        chosen = free[0]
    token = new_token()
    seats = list(table.seats)
    seats[chosen] = Seat(name, hash_token(token))
    after = dataclasses.replace(table, seats=tuple(seats))
    events: Events = [ev.SeatJoined(chosen, name)]
    after = _maybe_start(after, events)
    return Joined(_bump(table, after, events, ctx.now_ms), chosen, token)


def _maybe_start(table: TableState, events: Events) -> TableState:
    """Deal the next round if the table is full and nothing holds it back."""
    if not table.is_full or table.match.is_over:
        return table
    if table.status is TableStatus.WAITING or (table.status is TableStatus.ROUND_OVER and not table.awaiting_settle):
        return _deal_next(table, events)
    return table


def _round_seed(table: TableState) -> bytes:
    match = table.match
    if match.rounds_played >= len(table.seeds):
        return new_seed()
    seed = table.seeds[match.rounds_played]
    return seed if match.redeals == 0 else derive_seed(seed, "redeal", match.redeals)


def _deal_next(table: TableState, events: Events) -> TableState:
    match = table.match
    dealt = deal(_round_seed(table), table.variant, match.dealer)
    events.append(
        ev.DealStarted(
            round=table.round_number,
            deal_number=match.redeals + 1,
            dealer=dealt.dealer,
            face_up=dealt.face_up,
            face_up_seat=dealt.face_up_seat,
            commitment=dealt.commitment,
            hands=dealt.hands,
        )
    )
    return dataclasses.replace(
        table,
        round=start_round(dealt, table.settings.house_rules),
        deal_number=match.redeals + 1,
        status=TableStatus.IN_ROUND,
        awaiting_settle=frozenset(),
    )


def _reveal(table: TableState, state: RoundState) -> Reveal:
    dealt = state.deal
    return Reveal(table.round_number, table.deal_number, dealt.seed, dealt.hands, dealt.kitty)


def table_standings(table: TableState) -> tuple[ev.Standing, ...]:
    return tuple(
        ev.Standing(place, seat, table.seats[seat].name, balance) for place, seat, balance in standings(table.match)
    )


def _conclude(table: TableState, match: MatchState, result: RoundResult, events: Events) -> TableState:
    """Book a round that ended: result, balances, then close, deal on, or wait."""
    after = dataclasses.replace(table, match=match, last_result=result)
    events.append(ev.RoundEnded(result, match.balances))
    if match.is_over:
        after = dataclasses.replace(after, status=TableStatus.CLOSED, close_reason=CloseReason.ROUND_LIMIT)
        events.append(ev.TableClosed(CloseReason.ROUND_LIMIT, table_standings(after)))
        return after
    if table.settings.next_round is NextRound.WHEN_ALL_SETTLED:
        seated = frozenset(index for index, seat in enumerate(after.seats) if seat.occupied)
        return dataclasses.replace(after, status=TableStatus.ROUND_OVER, awaiting_settle=seated)
    after = dataclasses.replace(after, status=TableStatus.WAITING)
    return _maybe_start(after, events)


def _result(
    table: TableState, state: RoundState, settlement: Settlement, kind: RoundResultKind, **extra: int | None
) -> RoundResult:
    return RoundResult(
        round=table.round_number,
        kind=kind,
        settlement=settlement,
        reveal=_reveal(table, state),
        bid=state.bid,
        **extra,
    )


def _after_deal(table: TableState, state: RoundState, events: Events) -> TableState:
    """Carry the table on once the running deal's state is ``state``."""
    table = dataclasses.replace(table, round=state)
    if state.phase is Phase.FINISHED:
        settlement = settle(state)
        kind = RoundResultKind.LANDLORD_WON if settlement.landlord_won else RoundResultKind.FARMERS_WON
        outcome = record_round(table.match, state)
        return _conclude(table, outcome.match, _result(table, state, settlement, kind, winner=state.winner), events)
    if state.phase is Phase.THROWN_IN:
        outcome = record_round(table.match, state)
        events.append(ev.DealThrownIn(_reveal(table, state), round_void=outcome.void))
        if outcome.redeal:
            return _deal_next(dataclasses.replace(table, match=outcome.match), events)
        result = _result(table, state, outcome.settlement, RoundResultKind.VOID)
        return _conclude(table, outcome.match, result, events)
    return table


def _running_deal(table: TableState, ctx: Context, doing: str) -> RoundState:
    _open(table)
    _fresh(table, ctx)
    if table.status is not TableStatus.IN_ROUND or table.round is None:
        raise WrongPhase(
            f"cannot {doing}: no deal is running",
            metadata={"table_id": table.table_id, "phase": table.phase_name},
        )
    return table.round


def _refusal_metadata(table: TableState, state: RoundState, refusal: IllegalAction, action: Action) -> dict[str, str]:
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


def _act(table: TableState, action: Action, now_ms: int) -> Outcome:
    state = table.round
    assert state is not None
    try:
        transition = apply(state, action)
    except IllegalAction as refusal:
        raise from_refusal(refusal, _refusal_metadata(table, state, refusal, action)) from None
    after = transition.state
    events: Events = []
    trick_closed = any(isinstance(event, RulesTrickClosed) for event in transition.events)
    for event in transition.events:
        if isinstance(event, RulesBidMade):
            events.append(ev.BidMade(event.seat, event.amount))
        elif isinstance(event, RulesLandlordChosen):
            events.append(ev.LandlordChosen(event.seat, event.bid, event.kitty))
        elif isinstance(event, RulesCardsPlayed):
            events.append(
                ev.CardsPlayed(
                    seat=event.seat,
                    cards=event.cards,
                    combination=event.combination,
                    cards_left=len(after.hands[event.seat]),
                    stake=after.stake,
                    trick_closed=trick_closed,
                )
            )
    return _bump(table, _after_deal(table, after, events), events, now_ms)


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
    after = dataclasses.replace(table, seats=tuple(seats), awaiting_settle=table.awaiting_settle - {seat})
    if table.status is TableStatus.IN_ROUND and table.round is not None:
        state = table.round
        settlement = forfeit(state, seat)
        if settlement.landlord_won is None:
            kind = RoundResultKind.ABANDONED
        else:
            kind = RoundResultKind.LANDLORD_WON if settlement.landlord_won else RoundResultKind.FARMERS_WON
        result = _result(table, state, settlement, kind, forfeited_by=seat)
        after = _conclude(
            dataclasses.replace(after, status=TableStatus.WAITING),
            book_settlement(table.match, settlement),
            result,
            events,
        )
    return _bump(table, after, events, ctx.now_ms)


def close(table: TableState, ctx: Context) -> Outcome:
    """The creator closes the table; a running round is abandoned."""
    ctx.principal.require_creator("close the table")
    _open(table)
    _fresh(table, ctx)
    events: Events = []
    after = table
    if table.status is TableStatus.IN_ROUND and table.round is not None:
        nothing = Settlement.nothing(table.variant.players)
        result = _result(table, table.round, nothing, RoundResultKind.ABANDONED)
        after = dataclasses.replace(table, last_result=result)
        events.append(ev.RoundEnded(result, table.match.balances))
    after = dataclasses.replace(after, status=TableStatus.CLOSED, close_reason=CloseReason.CLOSED_BY_CREATOR)
    events.append(ev.TableClosed(CloseReason.CLOSED_BY_CREATOR, table_standings(after)))
    return _bump(table, after, events, ctx.now_ms)


def settle_round(table: TableState, ctx: Context) -> Outcome:
    """The caller acknowledges the last round's settlement (which deals on once all have)."""
    seat = ctx.principal.require_seat("settle")
    if table.last_result is None:
        raise WrongPhase("no round has ended yet", metadata={"table_id": table.table_id, "phase": table.phase_name})
    if table.status is not TableStatus.ROUND_OVER or seat not in table.awaiting_settle:
        return Outcome(table, (), changed=False)
    _fresh(table, ctx)
    events: Events = [ev.SeatSettled(seat, table.last_result.round)]
    after = dataclasses.replace(table, awaiting_settle=table.awaiting_settle - {seat})
    after = _maybe_start(after, events)
    return _bump(table, after, events, ctx.now_ms)
