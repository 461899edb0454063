"""The referee's commands as the pure functions they are: a table in, the next table (or a refusal) out.

The service tests (``tests/grpc``) show the contract from outside; these show what the
commands promise to the service: the refusal and its metadata for each fault, whatever the
service checks before, and the table each command leaves, version and clocks included.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest

from dizhu.referee import events as ev
from dizhu.referee.auth import Principal, Role, resolve
from dizhu.referee.commands import (
    Context,
    Created,
    abandon,
    bid,
    close,
    create_table,
    join,
    leave,
    play,
    settle_round,
    timeout,
)
from dizhu.referee.errors import (
    Internal,
    InvalidArgument,
    MustLead,
    NotYourTurn,
    PermissionDenied,
    RefereeError,
    SeatTaken,
    StaleState,
    TableClosed,
    TableFull,
    Unauthenticated,
    WrongPhase,
    from_refusal,
)
from dizhu.referee.flow import table_standings
from dizhu.referee.refusals import classify_reason
from dizhu.referee.replay import Timing, verify
from dizhu.referee.table import (
    ClockSettings,
    CloseReason,
    NextRound,
    Seat,
    TableSettings,
    TableState,
    TableStatus,
    TimeoutPolicy,
)
from dizhu.referee.table_codec import decode, encode
from dizhu.rules import VARIANTS, HouseRules, IllegalAction, Rank, Refusal

SEED = bytes(range(32))
T0 = 1_000_000
CREATOR = Principal(Role.CREATOR)
NOBODY = Principal(Role.SPECTATOR)


def _created(
    variant: str = "3p", *, players: int | None = None, unattended_limit: int = 0, **settings: object
) -> Created:
    """A full table (or its first ``players`` seats taken) dealt from SEED with seat 0 dealing:
    seat 0 bids first (3p)."""
    counter = itertools.count()
    return create_table(
        "t-1",
        TableSettings(VARIANTS[variant], first_dealer=0, **settings),  # type: ignore[arg-type]
        [SEED],
        [f"p{seat}" for seat in range(VARIANTS[variant].players if players is None else players)],
        T0,
        lambda: f"token-{next(counter)}",
        unattended_limit=unattended_limit,
    )


def _table(variant: str = "3p", **options: Any) -> TableState:
    """The table of :func:`_created`."""
    return _created(variant, **options).outcome.table


def _run_clock(table: TableState, until: Callable[[TableState], bool]) -> tuple[TableState, list[ev.TableEvent]]:
    """Let the clock make every decision, each at its deadline, until ``until(table)``; the table
    then, and the events of the way there."""
    events: list[ev.TableEvent] = []
    for _ in range(1000):
        if until(table):
            return table, events
        timed = timeout(table, table.turn.deadline_ms)
        events += timed.events
        table = timed.table
    raise AssertionError("the clock never got there")


def _as(seat: int, *, now_ms: int = T0 + 5, version: int = 0) -> Context:
    return Context(Principal(Role.SEAT, seat), now_ms, version)


def _refused(error: type[RefereeError], command: object) -> RefereeError:
    assert callable(command)
    with pytest.raises(error) as caught:
        command()
    return caught.value


class TestRefusalsCarryTheirFacts:
    def test_a_bid_out_of_turn_names_the_table_and_the_seat_to_act(self) -> None:
        table = _table()
        refused = _refused(NotYourTurn, lambda: bid(table, _as(2), 1))
        assert refused.metadata == {"table_id": "t-1", "turn_seat": "0"}

    def test_the_leader_passing_carries_nothing_but_the_table(self) -> None:
        playing = bid(_table(), _as(0), 3).table  # seat 0 takes the kitty and leads
        refused = _refused(MustLead, lambda: play(playing, _as(0), ()))
        assert refused.metadata == {"table_id": "t-1"}

    def test_a_malformed_name_is_refused_by_join_itself(self) -> None:
        table = dataclasses.replace(_table(), seats=(Seat(), *_table().seats[1:]))
        refused = _refused(InvalidArgument, lambda: join(table, _as(0), "", None))
        assert [field for field, _ in refused.violations] == ["player_name"]

    def test_an_invalid_argument_reads_field_colon_description(self) -> None:
        error = InvalidArgument("amount", "0 passes; a bid is 1..3")
        assert (error.message, error.violations) == (
            "amount: 0 passes; a bid is 1..3",
            (("amount", "0 passes; a bid is 1..3"),),
        )

    def test_a_bid_above_three_is_an_invalid_amount_with_the_rules_reason(self) -> None:
        table = _table()
        refused = _refused(InvalidArgument, lambda: bid(table, _as(0), 4))
        assert refused.violations == (("amount", "a bid is 1, 2 or 3, or 0 to pass; not 4"),)
        assert refused.metadata == {"table_id": "t-1"}

    @pytest.mark.parametrize(
        ("ranks", "reason"),
        [
            ((), "EMPTY"),
            ((Rank.THREE, Rank.FOUR), "NOT_A_COMBINATION"),
            ((Rank.THREE,) * 3 + (Rank.FOUR,), "NOT_IN_VARIANT"),
        ],
        ids=["nothing", "two ranks", "a trio with a single in 4p"],
    )
    def test_why_cards_are_no_combination_is_named_as_the_contract_names_it(
        self, ranks: tuple[Rank, ...], reason: str
    ) -> None:
        assert classify_reason(ranks, VARIANTS["4p"]) == reason

    def test_a_refusal_for_a_seat_the_table_does_not_have_is_internal_and_keeps_its_message(self) -> None:
        error = from_refusal(IllegalAction(Refusal.INVALID_SEAT, "3p has no seat 7"), {"table_id": "t-1"})
        assert isinstance(error, Internal)
        assert (error.message, error.metadata) == ("3p has no seat 7", {"table_id": "t-1"})

    @pytest.mark.parametrize(
        ("principal", "error", "message"),
        [
            (Principal(Role.SEAT, 1), PermissionDenied, "only the table's creator can close the table"),
            (NOBODY, Unauthenticated, "close the table needs the creator's token in the authorization metadata"),
        ],
        ids=["a seat", "no token"],
    )
    def test_only_the_creator_closes_and_the_others_are_told_why(
        self, principal: Principal, error: type[RefereeError], message: str
    ) -> None:
        refused = _refused(error, lambda: close(_table(), Context(principal, T0)))
        assert refused.message == message

    @pytest.mark.parametrize(
        ("command", "doing"),
        [
            (lambda t, c: play(t, c, ()), "play"),
            (leave, "leave a table"),
            (settle_round, "settle"),
            (lambda t, c: bid(t, c, 1), "bid"),
        ],
        ids=["play", "leave", "settle", "bid"],
    )
    def test_a_seat_acting_without_its_token_is_told_what_it_needs(self, command: Any, doing: str) -> None:
        creator = _refused(PermissionDenied, lambda: command(_table(), Context(CREATOR, T0)))
        assert creator.message == f"the creator's token cannot {doing}; use a seat token"
        nobody = _refused(Unauthenticated, lambda: command(_table(), Context(NOBODY, T0)))
        assert nobody.message == f"{doing} needs a seat token in the authorization metadata"

    def test_settle_checks_the_version_before_anything_about_the_round(self) -> None:
        table = _table()
        refused = _refused(StaleState, lambda: settle_round(table, _as(1, version=7)))
        assert refused.metadata == {"table_id": "t-1", "current_version": "1"}
        assert refused.message == "the table is at version 1, not 7"
        early = _refused(WrongPhase, lambda: settle_round(table, _as(1, version=1)))
        assert early.message == "no round has ended yet"
        assert early.metadata == {"table_id": "t-1", "phase": "PHASE_AUCTION"}


class TestCreation:
    def test_more_names_than_seats_are_refused(self) -> None:
        settings = TableSettings(VARIANTS["3p"])
        refused = _refused(
            InvalidArgument, lambda: create_table("t-1", settings, [SEED], ["a", "b", "c", "d"], T0, str)
        )
        assert refused.violations == (("player_names", "3p has only 3 seats"),)

    def test_a_new_table_carries_its_creation_time_owner_and_limits(self) -> None:
        settings = TableSettings(VARIANTS["3p"], redeal_cap=2, round_limit=5)
        created = create_table("t-1", settings, [SEED], ["a"], T0, str, owner="alice", unattended_limit=3)
        table = created.outcome.table
        assert (table.created_ms, table.updated_ms, table.upkeep.active_ms) == (T0, T0, T0)
        assert (table.upkeep.owner, table.upkeep.unattended_limit) == ("alice", 3)
        assert (table.match.redeal_cap, table.match.round_limit) == (2, 5)
        assert created.outcome.events == (ev.SeatJoined(0, "a"),)

    def test_the_named_players_seats_are_reserved_the_others_free(self) -> None:
        table = _table(players=2)
        assert [(seat.name, seat.reserved, seat.occupied) for seat in table.seats] == [
            ("p0", True, True),
            ("p1", True, True),
            ("", False, False),
        ]


class TestWhoIsCalling:
    def test_no_token_is_a_spectator_and_a_token_of_another_table_is_refused(self) -> None:
        table = _table()
        assert resolve(table, None) == NOBODY
        refused = _refused(Unauthenticated, lambda: resolve(table, "token-of-elsewhere"))
        assert (refused.message, refused.metadata) == ("the token is not valid for this table", {"table_id": "t-1"})


class TestTheTablesEachCommandLeaves:
    def test_closing_abandons_the_round_and_stamps_the_change(self) -> None:
        table = _table()
        closed = close(table, Context(CREATOR, T0 + 40))
        assert (closed.table.status, closed.table.close_reason) == (TableStatus.CLOSED, CloseReason.CLOSED_BY_CREATOR)
        assert (closed.table.version, closed.table.updated_ms, closed.table.upkeep.active_ms) == (2, T0 + 40, T0 + 40)

    def test_abandoning_closes_an_idle_table_without_counting_as_a_clients_act(self) -> None:
        table = _table()
        abandoned = abandon(table, T0 + 99)
        after = abandoned.table
        assert abandoned.changed
        assert (after.status, after.close_reason, after.version) == (TableStatus.CLOSED, CloseReason.ABANDONED, 2)
        assert (after.updated_ms, after.upkeep.active_ms) == (T0 + 99, table.upkeep.active_ms)
        assert after.last_result is not None
        assert after.last_result.round == 1
        assert [type(event).__name__ for event in abandoned.events][-1] == "TableClosed"

    def test_a_move_at_a_closed_table_is_refused_naming_the_table(self) -> None:
        closed = close(_table(), Context(CREATOR, T0)).table
        refused = _refused(TableClosed, lambda: bid(closed, _as(0), 1))
        assert (refused.message, refused.metadata) == ("the table is closed", {"table_id": "t-1"})

    def test_abandoning_a_closed_table_changes_nothing(self) -> None:
        closed = close(_table(), Context(CREATOR, T0)).table
        again = abandon(closed, T0 + 1)
        assert (again.table, again.events, again.changed) == (closed, (), False)

    def test_a_command_that_mints_without_being_given_a_minter_fails_loudly(self) -> None:
        with pytest.raises(AssertionError, match=r"^this request mints no token$"):
            Context(NOBODY, T0).mint()

    def test_a_move_records_how_long_it_took_and_spends_the_bank_beyond_the_allowance(self) -> None:
        table = _table(clock=ClockSettings(decision_ms=1000, first_decision_ms=1000, bank_ms=5000))
        started = table.turn.started_ms
        late = bid(table, _as(0, now_ms=started + 1300), 1).table
        assert late.timings[-1] == Timing(started + 1300, 1300, False)
        assert late.turn.banks_ms == (4700, 5000, 5000)  # 300 ms beyond its 1000
        at_once = bid(late, _as(1, now_ms=late.turn.started_ms), 2).table
        assert at_once.timings[-1] == Timing(late.turn.started_ms, 0, False)
        assert at_once.turn.banks_ms == late.turn.banks_ms

    def test_a_bid_stamps_the_seats_act(self) -> None:
        after = bid(_table(), _as(0, now_ms=T0 + 7), 1).table
        assert (after.version, after.updated_ms, after.upkeep.active_ms) == (2, T0 + 7, T0 + 7)


def _with_free_seats(*free: int) -> TableState:
    table = _table()
    return dataclasses.replace(table, seats=tuple(Seat() if i in free else s for i, s in enumerate(table.seats)))


def _joining(now_ms: int = T0 + 3, version: int = 0) -> Context:
    return Context(NOBODY, now_ms, version, mint=lambda: "new-token")


class TestJoin:
    def test_a_free_seat_asked_for_is_given_with_the_name(self) -> None:
        joined = join(_with_free_seats(1, 2), _joining(), "zoe", 2)
        assert (joined.seat, joined.token) == (2, "new-token")
        assert (joined.outcome.table.seats[2].name, joined.outcome.table.seats[2].occupied) == ("zoe", True)
        assert not joined.outcome.table.seats[1].occupied
        assert joined.outcome.events == (ev.SeatJoined(2, "zoe"),)
        assert (joined.outcome.table.version, joined.outcome.table.updated_ms) == (2, T0 + 3)

    def test_without_a_seat_asked_for_the_first_free_one_is_given(self) -> None:
        assert join(_with_free_seats(1, 2), _joining(), "zoe", None).seat == 1

    @pytest.mark.parametrize("seat", [3, 4])
    def test_a_seat_the_table_does_not_have_is_refused(self, seat: int) -> None:
        refused = _refused(InvalidArgument, lambda: join(_with_free_seats(1), _joining(), "zoe", seat))
        assert refused.violations == (("seat", f"3p has no seat {seat}"),)

    def test_a_stale_version_is_refused(self) -> None:
        refused = _refused(StaleState, lambda: join(_with_free_seats(1), _joining(version=9), "zoe", None))
        assert refused.metadata == {"table_id": "t-1", "current_version": "1"}

    def test_a_taken_seat_is_named(self) -> None:
        refused = _refused(SeatTaken, lambda: join(_with_free_seats(1), _joining(), "zoe", 0))
        assert (refused.message, refused.metadata) == ("seat 0 is taken", {"table_id": "t-1", "seat": "0"})

    def test_a_full_table_says_so(self) -> None:
        refused = _refused(TableFull, lambda: join(_table(), _joining(), "zoe", None))
        assert (refused.message, refused.metadata) == ("every seat is taken", {"table_id": "t-1"})


class TestLeave:
    def test_leaving_mid_auction_abandons_the_round_frees_the_seat_and_counts_as_attending(self) -> None:
        table = _table()
        table = dataclasses.replace(table, upkeep=dataclasses.replace(table.upkeep, unattended_rounds=3))
        left = leave(table, _as(1, now_ms=T0 + 9))
        after = left.table
        assert left.events[0] == ev.SeatLeft(1, "p1")
        assert not after.seats[1].occupied
        assert after.status is TableStatus.WAITING
        assert after.upkeep.unattended_rounds == 0, "a seat leaving is a client's act: the round was attended"
        assert (after.version, after.updated_ms, after.upkeep.active_ms) == (2, T0 + 9, T0 + 9)

    def test_a_stale_version_is_refused(self) -> None:
        refused = _refused(StaleState, lambda: leave(_table(), _as(1, version=5)))
        assert refused.metadata == {"table_id": "t-1", "current_version": "1"}

    @pytest.mark.parametrize(("leaver", "kind"), [(0, "FARMERS_WON"), (2, "LANDLORD_WON")], ids=["landlord", "farmer"])
    def test_leaving_in_play_loses_the_round_for_the_leavers_side(self, leaver: int, kind: str) -> None:
        playing = bid(_table(), _as(0), 3).table  # seat 0 is the landlord, at 3
        after = leave(playing, _as(leaver)).table
        result = after.last_result
        assert result is not None
        assert (result.kind.name, result.forfeited_by) == (kind, leaver)
        landlord_change = result.settlement.deltas[0]
        assert landlord_change == (-6 if leaver == 0 else 6)
        assert after.status is TableStatus.WAITING


def _forfeiting() -> TableState:
    return _table(clock=ClockSettings(decision_ms=1000, first_decision_ms=1000, policy=TimeoutPolicy.FORFEIT))


class TestTheClock:
    def test_every_timeout_is_a_strike_for_the_seat_that_ran_out(self) -> None:
        table = _table(clock=ClockSettings(decision_ms=1000, first_decision_ms=1000))
        counted = [0, 0, 0]
        for _ in range(5):
            assert table.round is not None
            counted[table.round.turn] += 1
            table = timeout(table, table.turn.deadline_ms).table
        assert table.turn.timeouts == tuple(counted)
        assert max(counted) == 2

    def test_auto_play_leads_the_lowest_single_and_follows_with_a_pass(self) -> None:
        playing = bid(_table(clock=ClockSettings(decision_ms=1000, first_decision_ms=1000)), _as(0), 3).table
        assert playing.round is not None
        led = timeout(playing, playing.turn.deadline_ms)
        (lead,) = [event for event in led.events if isinstance(event, ev.CardsPlayed)]
        assert (lead.seat, len(lead.cards), lead.timed_out) == (0, 1, True)
        assert lead.cards[0].rank == min(card.rank for card in playing.round.hands[0])
        assert led.table.round is not None
        assert (lead.cards_left, lead.stake, lead.trick_closed) == (19, led.table.round.stake, False)
        followed = timeout(led.table, led.table.turn.deadline_ms)
        (follow,) = [event for event in followed.events if isinstance(event, ev.CardsPlayed)]
        assert (follow.seat, follow.cards, follow.timed_out, follow.trick_closed) == (1, (), True, False)
        closed = timeout(followed.table, followed.table.turn.deadline_ms)
        (last,) = [event for event in closed.events if isinstance(event, ev.CardsPlayed)]
        assert (last.seat, last.trick_closed) == (2, True)

    def test_a_timeout_empties_the_bank_and_leaves_the_round_unattended_where_a_bid_attends_it(self) -> None:
        table = _table(clock=ClockSettings(decision_ms=1000, first_decision_ms=1000, bank_ms=5000))
        assert table.upkeep.attended is False
        timed = timeout(table, table.turn.deadline_ms)
        assert timed.events[0] == ev.BidMade(0, 0, True, next_seat=1)
        assert (timed.table.turn.banks_ms, timed.table.upkeep.attended) == ((0, 5000, 5000), False)
        assert timed.table.upkeep.active_ms == table.upkeep.active_ms  # the clock's act is no client's
        started = timed.table.turn.started_ms
        late = bid(timed.table, _as(1, now_ms=started + 1000 + 5000 + 1), 1)
        assert late.events[0] == ev.BidMade(1, 1, False, next_seat=2)
        assert (late.table.turn.banks_ms, late.table.upkeep.attended) == ((0, 0, 5000), True)
        taken = bid(late.table, _as(2, now_ms=late.table.turn.started_ms), 3)
        assert [type(event).__name__ for event in taken.events][:2] == ["BidMade", "LandlordChosen"]

    def test_a_round_a_seat_attended_leaves_the_next_one_unattended_until_a_seat_acts(self) -> None:
        def until_round_ends(table: TableState, round_number: int) -> TableState:
            return _run_clock(table, lambda t: t.last_result is not None and t.last_result.round == round_number)[0]

        clocked = _table(clock=ClockSettings(decision_ms=1000, first_decision_ms=1000))
        attended = bid(clocked, _as(0), 3).table  # a seat's own act; the clock makes the rest
        assert attended.upkeep.attended
        second = until_round_ends(attended, 1)
        assert (second.upkeep.unattended_rounds, second.upkeep.attended) == (
            0,
            False,
        )  # round 2 has seen no seat act yet
        third = until_round_ends(second, 2)
        assert third.upkeep.unattended_rounds == 1  # the clock made every decision of round 2

    def test_a_deal_thrown_in_after_a_seat_passed_is_dealt_again_as_the_same_attended_round(self) -> None:
        created = _created(clock=ClockSettings(decision_ms=1000, first_decision_ms=1000))
        table = created.outcome.table
        (first,) = [event for event in created.outcome.events if isinstance(event, ev.DealStarted)]
        assert table.round is not None
        assert (first.round, first.deal_number, first.face_up_seat) == (1, 1, table.round.turn)
        assert (table.round_number, table.deal_number) == (1, 1)
        passed = bid(table, _as(0), 0)  # seat 0's own pass: the round is attended
        # The clock passes for seats 1 and 2: every seat passed, the deal is thrown in.
        table, events = _run_clock(passed.table, lambda t: t.version == passed.table.version + 2)
        events = [*passed.events, *events]
        assert any(isinstance(event, ev.DealThrownIn) for event in events)
        (again,) = [event for event in events if isinstance(event, ev.DealStarted)]
        assert (again.round, again.deal_number) == (1, 2)
        assert table.round is not None
        assert again.face_up_seat == table.round.turn
        assert (table.round_number, table.deal_number, table.upkeep.attended) == (1, 2, True)

    def test_a_table_the_clock_alone_played_for_its_unattended_limit_closes_as_abandoned(self) -> None:
        table, events = _run_clock(
            _table(clock=ClockSettings(decision_ms=1000, first_decision_ms=1000), unattended_limit=2),
            lambda t: t.status is TableStatus.CLOSED,
        )
        rounds = [event for event in events if isinstance(event, ev.RoundEnded)]
        assert [event.result.round for event in rounds] == [1, 2]  # closed after the second, not the third
        (closed,) = [event for event in events if isinstance(event, ev.TableClosed)]
        assert closed.reason is CloseReason.ABANDONED
        assert (table.status, table.close_reason, table.upkeep.unattended_rounds) == (
            TableStatus.CLOSED,
            CloseReason.ABANDONED,
            2,
        )
        assert table.last_result == rounds[-1].result
        assert closed.standings == table_standings(table)

    def test_forfeit_in_play_loses_the_round_for_the_seats_side_without_counting_as_its_act(self) -> None:
        playing = bid(_forfeiting(), _as(0), 3).table  # seat 0 is the landlord, at 3, and leads
        forfeited = timeout(playing, playing.turn.deadline_ms + 1)
        after = forfeited.table
        result = after.last_result
        assert result is not None
        assert (result.kind.name, result.forfeited_by, result.round) == ("FARMERS_WON", 0, 1)
        assert result.settlement.deltas[0] == -6
        assert after.turn.timeouts[0] == 1
        assert (after.version, after.updated_ms, after.upkeep.active_ms) == (
            playing.version + 1,
            playing.turn.deadline_ms + 1,
            playing.upkeep.active_ms,
        )
        assert any(isinstance(event, ev.RoundEnded) for event in forfeited.events)

    def test_forfeit_in_the_auction_passes(self) -> None:
        table = _forfeiting()
        passed = timeout(table, table.turn.deadline_ms).table
        assert passed.status is TableStatus.IN_ROUND
        assert passed.last_result is None
        assert passed.round is not None
        assert passed.round.turn == 1
        assert passed.turn.timeouts == (1, 0, 0)

    def test_a_table_without_a_clock_is_never_timed_out(self) -> None:
        table = _table()
        assert table.turn.deadline_ms == 0
        untouched = timeout(table, T0 + 10**9)
        assert (untouched.table, untouched.events, untouched.changed) == (table, (), False)

    def test_the_clock_acts_at_the_deadline_not_a_millisecond_before(self) -> None:
        table = _table(clock=ClockSettings(decision_ms=1000, first_decision_ms=1000))
        assert table.turn.deadline_ms == T0 + 1000
        early = timeout(table, table.turn.deadline_ms - 1)
        assert (early.table, early.events, early.changed) == (table, (), False)
        due = timeout(table, table.turn.deadline_ms)
        assert due.changed
        assert due.table.version == table.version + 1
        assert due.table.turn.timeouts == (1, 0, 0)  # seat 0 was to bid: it gets a strike, and passes

    def test_the_join_that_fills_the_table_starts_the_first_turn_then(self) -> None:
        waiting = _table(players=2)
        assert waiting.status is TableStatus.WAITING
        joined = join(waiting, _joining(now_ms=T0 + 77), "zoe", None).outcome.table
        assert joined.status is TableStatus.IN_ROUND
        assert joined.turn.started_ms == T0 + 77


class TestASpringRound:
    def test_a_landlord_who_plays_out_alone_wins_a_spring_and_its_record_verifies(self) -> None:
        table = bid(_table(house_rules=HouseRules(spring=True)), _as(0), 3).table  # seat 0 is the landlord
        ended: list[ev.RoundEnded] = []
        for _ in range(100):
            if ended:
                break
            assert table.round is not None
            seat = table.round.turn
            lowest = min(table.round.hands[seat], key=lambda card: card.rank)
            moved = play(table, _as(seat), (lowest,) if seat == 0 else ())  # the farmers always pass
            ended += [event for event in moved.events if isinstance(event, ev.RoundEnded)]
            table = moved.table
        (round_ended,) = ended
        settlement = round_ended.result.settlement
        assert (settlement.spring, settlement.landlord_won, settlement.stake) == (True, True, 6)
        checked = verify(round_ended.replay)
        assert checked.problems == ()
        unspringed = json.loads(round_ended.replay)
        unspringed["house_rules"]["spring"] = False
        assert "is not the recomputed" in " ".join(verify(json.dumps(unspringed)).problems)
        # Without its seed the deal is rebuilt from the recorded hands, face-up seat and dealer:
        # seat 0, which is not the seat after the dealer, still bids first.
        seedless = json.loads(round_ended.replay)
        (dealt,) = seedless["deals"]
        assert (dealt["dealer"], dealt["face_up_seat"]) == (0, 0)
        del dealt["seed"]
        assert verify(json.dumps(seedless)).problems == ("deal 1: no seed, so the deal cannot be checked",)


def _round_over() -> TableState:
    """A 3p table whose first round the clock played to its end, waiting for every Settle."""
    table = _table(clock=ClockSettings(decision_ms=1000, first_decision_ms=2000), next_round=NextRound.WHEN_ALL_SETTLED)
    return _run_clock(table, lambda t: t.status is TableStatus.ROUND_OVER)[0]


class TestSettle:
    def test_a_seat_settling_is_an_event_and_its_act(self) -> None:
        over = _round_over()
        assert over.awaiting_settle == {0, 1, 2}
        settled = settle_round(over, _as(1, now_ms=over.updated_ms + 50))
        assert settled.events == (ev.SeatSettled(1, 1),)
        after = settled.table
        assert after.awaiting_settle == {0, 2}
        assert (after.version, after.updated_ms, after.upkeep.active_ms) == (
            over.version + 1,
            over.updated_ms + 50,
            over.updated_ms + 50,
        )

    def test_a_round_over_runs_no_clock_while_it_waits_for_the_settles(self) -> None:
        over = _round_over()
        assert (over.turn.deadline_ms, over.timings, over.earlier_deals) == (0, (), ())
        assert decode(encode(over)).turn.deadline_ms == 0
        untouched = timeout(over, over.updated_ms + 10**9)
        assert (untouched.table, untouched.events, untouched.changed) == (over, (), False)

    def test_no_move_is_taken_once_the_round_is_over(self) -> None:
        over = _round_over()
        for doing in ("play", "bid"):
            with pytest.raises(WrongPhase) as caught:
                play(over, _as(0), ()) if doing == "play" else bid(over, _as(0), 1)
            refused = caught.value
            assert str(refused) == f"WRONG_PHASE: cannot {doing}: no deal is running"
            assert refused.metadata == {"table_id": "t-1", "phase": over.phase_name}
            assert refused.violations == ()

    def test_settling_twice_changes_nothing(self) -> None:
        once = settle_round(_round_over(), _as(1)).table
        again = settle_round(once, _as(1))
        assert (again.table, again.events, again.changed) == (once, (), False)

    def test_the_last_settle_deals_the_next_round_with_its_clock_from_then(self) -> None:
        table = _round_over()
        for seat in (0, 1):
            table = settle_round(table, _as(seat)).table
        now_ms = table.updated_ms + 500
        last = settle_round(table, _as(2, now_ms=now_ms))
        after = last.table
        assert after.status is TableStatus.IN_ROUND
        assert after.round_number == 2
        assert (after.turn.started_ms, after.turn.deadline_ms) == (now_ms, now_ms + 2000)
        assert last.events[0] == ev.SeatSettled(2, 1)
