"""Whole tables played by the bundled bots through a real referee, 3p and 4p, following WatchTable streams."""

from __future__ import annotations

import asyncio

import pytest

from dizhu.client import (
    Bot,
    BotRunner,
    Decision,
    HeuristicBot,
    PollingViews,
    RandomBot,
    StreamingViews,
    TableClient,
    ViewSource,
    run_bot,
)
from dizhu.v1 import cards_pb2, rules_service_pb2, table_pb2, table_service_pb2

AUTOMATIC = table_pb2.NEXT_ROUND_AUTOMATIC
SETTLED = table_pb2.NEXT_ROUND_WHEN_ALL_SETTLED


class _CountingReads(TableClient):
    """A seat's client that counts its ``GetTable`` calls."""

    reads = 0

    async def get(self) -> table_pb2.TableView:
        self.reads += 1
        return await super().get()


async def _play_table(
    target: str,
    bots: list[Bot],
    *,
    variant: str,
    next_round: table_pb2.NextRound,
    rounds: int = 2,
    polling: bool = False,
) -> tuple[table_pb2.TableView, list[BotRunner], list[Decision]]:
    decisions: list[Decision] = []
    async with TableClient(target) as creator:
        created = await creator.create_table(
            variant=variant,
            player_names=[f"{bot.name}-{seat}" for seat, bot in enumerate(bots)],
            round_limit=rounds,
            next_round=next_round,
        )
        runners = []
        for bot, token in zip(bots, created.seat_tokens, strict=True):
            seat = _CountingReads(creator.channel, table_id=creator.table_id, token=token.token, retry=creator.retry)
            views: ViewSource | None = PollingViews(seat) if polling else None
            runners.append(BotRunner(bot, seat, views=views, on_decision=decisions.append))
        await asyncio.wait_for(asyncio.gather(*(runner.run() for runner in runners)), timeout=120)
        final = await creator.get()
    for runner in runners:
        if polling:
            assert isinstance(runner.views, PollingViews)
        else:  # the default: each runner followed its own stream to the end
            assert isinstance(runner.views, StreamingViews)
            assert runner.views.streams_opened == 1
            assert runner.views.resumes == 0
    return final, runners, decisions


class TestWholeTables:
    @pytest.mark.parametrize("next_round", [AUTOMATIC, SETTLED], ids=["automatic", "when-all-settled"])
    async def test_three_heuristic_bots_finish_a_3p_table(self, target: str, next_round: table_pb2.NextRound) -> None:
        final, runners, decisions = await _play_table(
            target, [HeuristicBot(), HeuristicBot(), HeuristicBot()], variant="3p", next_round=next_round
        )
        assert final.phase == table_pb2.PHASE_CLOSED
        assert final.close_reason == table_pb2.CLOSE_REASON_ROUND_LIMIT
        assert final.round == 2
        assert sum(seat.balance for seat in final.seats) == 0
        assert all(runner.refused == 0 for runner in runners)
        settles = [d for d in decisions if d.action == "settle"]
        assert len(settles) == (3 if next_round == SETTLED else 0)  # round 2 closes the table: no Settle

    @pytest.mark.parametrize("polling", [False, True], ids=["streaming", "polling"])
    async def test_random_bots_finish_a_3p_table(self, target: str, polling: bool) -> None:
        final, runners, _ = await _play_table(
            target, [RandomBot(1), RandomBot(2), RandomBot(3)], variant="3p", next_round=AUTOMATIC, polling=polling
        )
        assert final.phase == table_pb2.PHASE_CLOSED
        assert sum(seat.balance for seat in final.seats) == 0
        assert all(runner.refused == 0 for runner in runners)

    @pytest.mark.parametrize("next_round", [AUTOMATIC, SETTLED], ids=["automatic", "when-all-settled"])
    async def test_mixed_bots_finish_a_4p_table(self, target: str, next_round: table_pb2.NextRound) -> None:
        bots: list[Bot] = [HeuristicBot(), RandomBot(7), HeuristicBot(), RandomBot(8)]
        final, runners, decisions = await _play_table(target, bots, variant="4p", next_round=next_round)
        assert final.phase == table_pb2.PHASE_CLOSED
        assert final.round == 2
        assert sum(seat.balance for seat in final.seats) == 0
        assert all(runner.refused == 0 for runner in runners)
        assert {d.seat for d in decisions} == {0, 1, 2, 3}

    async def test_run_bot_joins_free_seats(self, target: str) -> None:
        async with TableClient(target) as creator:
            await creator.create_table(variant="3p", round_limit=1)
            assert creator.table_id is not None
            finals = await asyncio.wait_for(
                asyncio.gather(
                    *(run_bot(HeuristicBot(), target, creator.table_id, player_name=f"p{n}") for n in range(3))
                ),
                timeout=120,
            )
        assert all(view.phase == table_pb2.PHASE_CLOSED for view in finals)
        assert sum(seat.balance for seat in finals[0].seats) == 0
        assert sorted(seat.player_name for seat in finals[0].seats) == ["p0", "p1", "p2"]


class TestReads:
    @pytest.mark.parametrize("variant", ["3p", "4p"])
    async def test_a_streaming_seat_reads_the_table_for_its_own_turns_not_after_every_move(
        self, target: str, variant: str
    ) -> None:
        """The events of a bid or play say whose turn is next (next_seat): a seat reads its view when a
        change may ask something of it, not after every move of the other seats."""
        players = 3 if variant == "3p" else 4
        bots: list[Bot] = [HeuristicBot() for _ in range(players)]
        final, runners, decisions = await _play_table(target, bots, variant=variant, next_round=AUTOMATIC, rounds=1)
        assert final.phase == table_pb2.PHASE_CLOSED
        deals = len({(d.before.round, d.before.deal_number) for d in decisions if d.action == "bid"})
        for runner in runners:
            client = runner.client
            assert isinstance(client, _CountingReads)
            own = sum(1 for d in decisions if d.seat == client.seat)
            others = len(decisions) - own
            # One read to start; per deal, its start and its auction's end; one per turn of its own;
            # the round's end; the close.
            assert client.reads <= 1 + 2 * deals + own + 2, (client.reads, own, deals)
            assert client.reads < others, (client.reads, others)


class TestHeuristicBot:
    def test_bids_by_strength(self) -> None:
        from dizhu.client.cards import parse_cards

        strong = table_pb2.TableView(
            settings=table_pb2.TableSettings(variant=cards_pb2.VARIANT_THREE_PLAYER),
            your_hand=parse_cards("3 4 5 6 7 8 9 T J Q K A 2 2 2 BJ RJ"),
            seats=[table_pb2.SeatView(seat=s) for s in range(3)],
            legal_bids=[0, 1, 2, 3],  # a referee's view in the auction lists them
        )
        weak = table_pb2.TableView(
            settings=table_pb2.TableSettings(variant=cards_pb2.VARIANT_THREE_PLAYER),
            your_hand=parse_cards("3 3 4 4 5 6 6 7 8 8 9 9 T J J Q K"),
            seats=[table_pb2.SeatView(seat=s) for s in range(3)],
            legal_bids=[0, 1, 2, 3],
        )
        assert HeuristicBot().choose_bid(strong) == 3
        assert HeuristicBot().choose_bid(weak) == 0


class _ThinkingBot(Bot):
    """Every hook is a coroutine: it "thinks" in the event loop before answering."""

    name = "thinker"

    def __init__(self) -> None:
        self.rounds_seen: list[int] = []

    async def choose_bid(self, view: table_pb2.TableView) -> int:
        await asyncio.sleep(0)
        return 0 if view.highest_bid else 1

    async def choose_play(
        self, view: table_pb2.TableView, legal: list[rules_service_pb2.LegalMove], can_pass: bool
    ) -> list[cards_pb2.Card]:
        await asyncio.sleep(0)
        return [] if can_pass else list(legal[0].cards)

    async def on_round_over(self, settlement: table_service_pb2.SettleResponse) -> None:
        await asyncio.sleep(0)
        self.rounds_seen.append(settlement.settlement.round)


class TestAsyncBots:
    async def test_a_bot_whose_hooks_are_coroutines_plays_a_table_to_the_end(self, target: str) -> None:
        bots = [_ThinkingBot(), _ThinkingBot(), _ThinkingBot()]
        final, runners, decisions = await _play_table(target, list(bots), variant="3p", next_round=SETTLED)
        assert final.phase == table_pb2.PHASE_CLOSED
        assert all(runner.refused == 0 for runner in runners)
        assert {d.action for d in decisions} == {"bid", "play", "settle"}
        assert all(bot.rounds_seen == [1] for bot in bots)  # round 2 closes the table: nothing to settle
