"""How a table carries on between commands: dealing, turn clocks, ending and recording rounds.

Pure functions over a ``TableState`` that append the events they cause to ``events``; the
commands (``dizhu.referee.commands``) call them after checking who may do what. Decisions
honoured here (``docs/tables.md``): round n's first deal uses preset seed n and its k-th
redeal ``derive_seed(seed, "redeal", k)``, else a fresh random seed; a deal's first bid and a
round's opening lead get the longer first-decision time; a round that ends is settled,
booked, recorded as a replay, and followed by the next deal, a wait, or the table's close.
"""

from __future__ import annotations

import dataclasses

from dizhu.referee import events as ev
from dizhu.referee.replay import DealRecord, replay_json
from dizhu.referee.table import (
    CloseReason,
    NextRound,
    Reveal,
    RoundResult,
    RoundResultKind,
    TableState,
    TableStatus,
    TurnClock,
    evolve,
)
from dizhu.rules import (
    MatchState,
    Phase,
    RoundState,
    Settlement,
    abandon,
    book_settlement,
    deal,
    derive_seed,
    forfeit,
    new_seed,
    record_round,
    settle,
    standings,
    start_round,
)

__all__ = [
    "Events",
    "after_deal",
    "allowance_ms",
    "close_table",
    "conclude",
    "deal_next",
    "forfeit_round",
    "maybe_start",
    "result_of",
    "reveal_of",
    "round_replay",
    "start_turn",
    "table_standings",
]

#: The events a change produced so far, appended to as the table carries on.
Events = list[ev.TableEvent]


def maybe_start(table: TableState, events: Events, now_ms: int) -> TableState:
    """Deal the next round if the table is full and nothing holds it back.

    A table no seat's Settle holds back any more waits for players if a seat is free.
    """
    if table.status is TableStatus.ROUND_OVER and not table.awaiting_settle:
        table = evolve(table, status=TableStatus.WAITING)
    if not table.is_full or table.match.is_over:
        return table
    if table.status is TableStatus.WAITING:
        return deal_next(table, events, now_ms)
    return table


def _round_seed(table: TableState) -> bytes:
    match = table.match
    if match.rounds_played >= len(table.seeds):
        return new_seed()
    seed = table.seeds[match.rounds_played]
    return seed if match.redeals == 0 else derive_seed(seed, "redeal", match.redeals)


def deal_next(table: TableState, events: Events, now_ms: int) -> TableState:
    match = table.match
    dealt = deal(_round_seed(table), table.variant, match.dealer)
    state = start_round(dealt, table.settings.house_rules)
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
    bank = table.settings.clock.bank_ms
    started = evolve(
        table,
        round=state,
        deal_number=match.redeals + 1,
        status=TableStatus.IN_ROUND,
        awaiting_settle=frozenset(),
        turn=dataclasses.replace(table.turn, banks_ms=(bank,) * table.variant.players),
        timings=(),
        # A redeal goes on with the same round; a new round has seen no decision yet.
        upkeep=dataclasses.replace(table.upkeep, attended=table.upkeep.attended and match.redeals > 0),
    )
    return start_turn(started, state, events, now_ms)


def allowance_ms(table: TableState, state: RoundState) -> int:
    """Time for the decision now due: longer for a deal's first bid and a round's opening lead."""
    clock = table.settings.clock
    first = not state.history or (state.phase is Phase.PLAY and not any(state.plays_made))
    return clock.first_decision_ms if first else clock.decision_ms


def start_turn(table: TableState, state: RoundState, events: Events, now_ms: int) -> TableState:
    """The seat to act gets its turn now: set its deadline (with a clock) and announce it."""
    turn = table.turn
    if not table.settings.clock.decision_ms:
        return evolve(table, turn=TurnClock(now_ms, 0, turn.banks_ms, turn.timeouts))
    bank = turn.banks_ms[state.turn]
    deadline = now_ms + allowance_ms(table, state) + bank
    events.append(ev.TurnDeadline(state.turn, deadline, bank))
    return evolve(table, turn=TurnClock(now_ms, deadline, turn.banks_ms, turn.timeouts))


def reveal_of(table: TableState, state: RoundState, deal_number: int | None = None) -> Reveal:
    """The secrets of ``state``'s deal: the running deal's unless ``deal_number`` says which of the round's."""
    dealt = state.deal
    number = table.deal_number if deal_number is None else deal_number
    return Reveal(table.round_number, number, dealt.seed, dealt.hands, dealt.kitty)


def table_standings(table: TableState) -> tuple[ev.Standing, ...]:
    return tuple(
        ev.Standing(place, seat, table.seats[seat].name, balance) for place, seat, balance in standings(table.match)
    )


def round_replay(table: TableState, state: RoundState, result: RoundResult, balances: tuple[int, ...]) -> str:
    """The finished round's record (see ``dizhu.referee.replay``)."""
    settlement = result.settlement
    deals = (*table.earlier_deals, DealRecord(table.deal_number, state, table.timings))
    return replay_json(
        table_id=table.table_id,
        variant=table.variant,
        house_rules=table.settings.house_rules,
        round_number=result.round,
        deals=deals,
        result={
            "outcome": result.kind.value,
            "landlord": settlement.landlord,
            "winner": result.winner,
            "forfeited_by": result.forfeited_by,
            "forfeit_cause": result.forfeit_cause,
            "bid": result.bid,
            "doublings": settlement.doublings,
            "spring": settlement.spring,
            "stake": settlement.stake,
            "changes": list(settlement.deltas),
        },
        balances=balances,
        timeout_policy=table.settings.clock.policy.value if table.settings.clock.decision_ms else None,
    )


def close_table(table: TableState, reason: CloseReason, events: Events) -> TableState:
    """Close the table; a deal still running is abandoned (the round settles nothing, but keeps
    the landlord and bid the auction already chose)."""
    after = table
    if table.status is TableStatus.IN_ROUND and table.round is not None:
        result = result_of(table, table.round, abandon(table.round), RoundResultKind.ABANDONED)
        balances = table.match.balances
        events.append(ev.RoundEnded(result, balances, round_replay(table, table.round, result, balances)))
        after = evolve(table, last_result=result, turn=dataclasses.replace(table.turn, deadline_ms=0))
    after = evolve(after, status=TableStatus.CLOSED, close_reason=reason)
    events.append(ev.TableClosed(reason, table_standings(after)))
    return after


def conclude(
    table: TableState, state: RoundState, match: MatchState, result: RoundResult, events: Events, now_ms: int
) -> TableState:
    """Book a round that ended with ``state``: record, balances, then close, deal on, or wait.

    A round in which the clock made every decision is unattended; after the table's
    ``unattended_limit`` of those in a row, the table closes as abandoned.
    """
    events.append(ev.RoundEnded(result, match.balances, round_replay(table, state, result, match.balances)))
    upkeep = table.upkeep
    unattended = 0 if upkeep.attended else upkeep.unattended_rounds + 1
    after = evolve(
        table,
        match=match,
        last_result=result,
        earlier_deals=(),
        timings=(),
        turn=dataclasses.replace(table.turn, deadline_ms=0),
        upkeep=dataclasses.replace(upkeep, unattended_rounds=unattended),
        status=TableStatus.WAITING if table.status is TableStatus.IN_ROUND else table.status,
    )
    if match.is_over:
        return close_table(after, CloseReason.ROUND_LIMIT, events)
    if upkeep.unattended_limit and unattended >= upkeep.unattended_limit:
        return close_table(after, CloseReason.ABANDONED, events)
    if table.settings.next_round is NextRound.WHEN_ALL_SETTLED:
        seated = frozenset(index for index, seat in enumerate(after.seats) if seat.occupied)
        return evolve(after, status=TableStatus.ROUND_OVER, awaiting_settle=seated)
    after = evolve(after, status=TableStatus.WAITING)
    return maybe_start(after, events, now_ms)


def result_of(
    table: TableState,
    state: RoundState,
    settlement: Settlement,
    kind: RoundResultKind,
    *,
    winner: int | None = None,
    forfeited_by: int | None = None,
    forfeit_cause: str | None = None,
) -> RoundResult:
    return RoundResult(
        round=table.round_number,
        kind=kind,
        settlement=settlement,
        reveal=reveal_of(table, state),
        bid=state.bid if settlement.landlord is not None else 0,  # no landlord, no winning bid
        winner=winner,
        forfeited_by=forfeited_by,
        forfeit_cause=forfeit_cause,
    )


def after_deal(table: TableState, state: RoundState, events: Events, now_ms: int) -> TableState:
    """Carry the table on once the running deal's state is ``state``."""
    table = evolve(table, round=state)
    if state.phase is Phase.FINISHED:
        settlement = settle(state)
        kind = RoundResultKind.LANDLORD_WON if settlement.landlord_won else RoundResultKind.FARMERS_WON
        outcome = record_round(table.match, state)
        result = result_of(table, state, settlement, kind, winner=state.winner)
        return conclude(table, state, outcome.match, result, events, now_ms)
    if state.phase is Phase.THROWN_IN:
        outcome = record_round(table.match, state)
        events.append(ev.DealThrownIn(reveal_of(table, state), round_void=outcome.void))
        if outcome.redeal:
            thrown = DealRecord(table.deal_number, state, table.timings)
            table = evolve(table, match=outcome.match, earlier_deals=(*table.earlier_deals, thrown))
            return deal_next(table, events, now_ms)
        result = result_of(table, state, outcome.settlement, RoundResultKind.VOID)
        return conclude(table, state, outcome.match, result, events, now_ms)
    return start_turn(table, state, events, now_ms)


def forfeit_round(table: TableState, seat: int, cause: str, events: Events, now_ms: int) -> TableState:
    """``seat`` forfeits the running round: its side loses the current stake (nothing in the auction).

    ``cause``: ``"left"`` (the seat left the table) or ``"timeout"`` (its time ran out), as recorded.
    """
    state = table.round
    assert state is not None
    settlement = forfeit(state, seat)
    if settlement.landlord_won is None:
        kind = RoundResultKind.ABANDONED
    else:
        kind = RoundResultKind.LANDLORD_WON if settlement.landlord_won else RoundResultKind.FARMERS_WON
    result = result_of(table, state, settlement, kind, forfeited_by=seat, forfeit_cause=cause)
    return conclude(table, state, book_settlement(table.match, settlement), result, events, now_ms)
