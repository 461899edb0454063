"""WatchTable through the SDK: TableClient.watch, StreamingViews, turn clocks, a referee failover."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import re
from pathlib import Path
from typing import Any

from google.protobuf import duration_pb2

from dizhu.client import BotRunner, Decision, HeuristicBot, RandomBot, StreamingViews, TableClient
from dizhu.client.client import CardsLike
from dizhu.config import ServerConfig, add_server_arguments, config_from_args
from dizhu.v1 import cards_pb2, events_pb2, table_pb2, table_service_pb2
from tests.support.failover import two_referees


async def _collect(client: TableClient, after_sequence: int | None = None) -> list[events_pb2.TableEvent]:
    return [event async for event in client.watch(after_sequence)]


def _changes(events: list[events_pb2.TableEvent]) -> list[events_pb2.TableEvent]:
    return [event for event in events if not event.HasField("heartbeat")]


class TestWatch:
    async def test_a_snapshot_then_every_change_in_order_then_the_end(self, target: str) -> None:
        async with TableClient(target) as creator:
            created = await creator.create_table(player_names=["a", "b", "c"], round_limit=1)
            spectator = TableClient(creator.channel, table_id=created.table_id)
            snapshot_seen = asyncio.Event()
            events: list[events_pb2.TableEvent] = []

            async def follow() -> None:
                async for event in spectator.watch():
                    events.append(event)
                    snapshot_seen.set()

            following = asyncio.create_task(follow())
            await asyncio.wait_for(snapshot_seen.wait(), timeout=10)
            view = await creator.get()
            bidder = creator.for_seat(created.seat_tokens[view.turn_seat].token)
            await bidder.get()
            await bidder.bid(3)
            await creator.close_table()
            await asyncio.wait_for(following, timeout=10)

        changes = _changes(events)
        kinds = [event.WhichOneof("payload") for event in changes]
        assert kinds[0] == "snapshot"
        assert not changes[0].snapshot.your_hand  # a spectator's view
        assert "seat_presence" in kinds  # the bidder's read made it present
        assert [k for k in kinds[1:] if k != "seat_presence"] == [
            "bid_made",
            "landlord_chosen",
            "round_ended",
            "table_closed",
        ]
        sequences = [event.sequence for event in changes]
        assert sequences == list(range(sequences[0], sequences[0] + len(sequences)))
        assert [event.version for event in changes] == sorted(event.version for event in changes)
        assert spectator.version == changes[0].version  # the snapshot was observed
        assert len(changes[-1].table_closed.standings) == 3

    async def test_resuming_after_a_sequence_replays_the_rest(self, target: str) -> None:
        async with TableClient(target) as creator:
            created = await creator.create_table(player_names=["a", "b", "c"], round_limit=1)
            view = await creator.get()
            bidder = creator.for_seat(created.seat_tokens[view.turn_seat].token)
            await bidder.get()
            await bidder.bid(1)
            await creator.close_table()
            whole = _changes(await _collect(creator))
            assert [event.WhichOneof("payload") for event in whole] == ["snapshot"]  # a closed table: snapshot, end
            last = whole[0].sequence
            resumed = _changes(await _collect(creator, after_sequence=last - 3))
            assert [event.sequence for event in resumed] == [last - 2, last - 1, last]
            assert resumed[-1].HasField("table_closed")

    async def test_a_reopened_stream_goes_on_with_the_event_after_the_last_one_received(self, target: str) -> None:
        async with TableClient(target) as creator:
            created = await creator.create_table(player_names=["a", "b", "c"])
            reopened: list[int | None] = []
            events: list[events_pb2.TableEvent] = []
            stream = creator.watch(idle_timeout_s=0.3, on_reconnect=lambda _error, after: reopened.append(after))

            async def next_change() -> events_pb2.TableEvent:
                async with asyncio.timeout(10):
                    async for event in stream:
                        if not event.HasField("heartbeat"):
                            events.append(event)
                            return event
                raise AssertionError("the stream ended")

            assert (await next_change()).HasField("snapshot")
            view = await creator.get()
            bidder = creator.for_seat(created.seat_tokens[view.turn_seat].token)
            await bidder.get()
            while not (await next_change()).HasField("seat_presence"):
                pass
            # Silent for longer than idle_timeout_s (this referee's heartbeats are 20 s apart):
            # the SDK reopens the stream after the last sequence received, then the bid follows.
            watched = asyncio.ensure_future(next_change())
            async with asyncio.timeout(10):
                while not reopened:
                    await asyncio.sleep(0.05)
            await bidder.bid(1)
            assert (await watched).HasField("bid_made")
            await stream.aclose()
        assert reopened[0] == events[-2].sequence
        assert [event.WhichOneof("payload") for event in events].count("snapshot") == 1
        sequences = [event.sequence for event in events]
        assert sequences == list(range(sequences[0], sequences[0] + len(sequences)))

    async def test_a_resume_whose_write_id_is_not_the_logged_events_starts_with_a_snapshot(self, target: str) -> None:
        async with TableClient(target) as creator:
            await creator.create_table(player_names=["a", "b", "c"])
            await creator.close_table()
            whole = _changes(await _collect(creator))
            last = whole[0]
            kept = [event async for event in creator.watch(last.sequence, after_write_id=last.write_id)]
            other = [event async for event in creator.watch(last.sequence, after_write_id=last.write_id + 1)]
        assert _changes(kept) == []  # nothing after the last event of a closed table
        assert [event.WhichOneof("payload") for event in _changes(other)] == ["snapshot"]

    async def test_a_sequence_beyond_the_table_falls_back_to_a_snapshot(self, target: str) -> None:
        async with TableClient(target) as creator:
            await creator.create_table(player_names=["a", "b", "c"])
            await creator.close_table()
            events = _changes(await _collect(creator, after_sequence=10_000))
        assert events[0].HasField("snapshot")
        assert events[0].snapshot.phase == table_pb2.PHASE_CLOSED

    async def test_a_watch_cancelled_as_an_event_arrives_ends_at_once(self, target: str) -> None:
        """A cancellation landing as the stream hands over an event is never swallowed: the
        watching task ends, rather than going on (a bot told to stop kept playing)."""
        async with TableClient(target) as creator:
            still_watching = 0
            for attempt in range(100):
                created = await creator.create_table()
                spectator = TableClient(creator.channel, table_id=created.table_id)
                snapshot_seen = asyncio.Event()

                async def follow(spectator: TableClient = spectator, seen: asyncio.Event = snapshot_seen) -> None:
                    async for _event in spectator.watch():
                        seen.set()

                watching = asyncio.create_task(follow())
                await snapshot_seen.wait()
                joined = asyncio.create_task(TableClient(creator.channel, table_id=created.table_id).join("j"))
                await asyncio.sleep(attempt % 5 / 1000)  # the cancellation lands around the seat_joined event
                watching.cancel()
                done, _ = await asyncio.wait({watching}, timeout=5)
                await joined
                if not done:
                    still_watching += 1
                    watching.cancel()
                    await asyncio.wait({watching})
                else:
                    assert watching.cancelled()
        assert still_watching == 0


class TestClocks:
    async def test_streaming_bots_answer_before_their_turn_deadlines(self, target: str) -> None:
        settings = table_pb2.TableSettings(
            variant=cards_pb2.VARIANT_FOUR_PLAYER,
            round_limit=1,
            clock=table_pb2.ClockSettings(
                decision_time=duration_pb2.Duration(seconds=2), timeout_policy=table_pb2.TIMEOUT_POLICY_AUTO_PLAY
            ),
        )
        decisions: list[Decision] = []
        async with TableClient(target) as creator:
            created = await creator.create_table(player_names=["a", "b", "c", "d"], settings=settings)
            runners = [
                BotRunner(bot, creator.for_seat(token.token), on_decision=decisions.append)
                for bot, token in zip(
                    [HeuristicBot(), RandomBot(1), HeuristicBot(), RandomBot(2)], created.seat_tokens, strict=True
                )
            ]
            await asyncio.wait_for(asyncio.gather(*(runner.run() for runner in runners)), timeout=60)
            final = await creator.get()
        assert final.phase == table_pb2.PHASE_CLOSED
        assert all(decision.before.HasField("turn_deadline") for decision in decisions)
        assert all(
            decision.after.version > decision.before.version and decision.before.turn_seat == decision.seat
            for decision in decisions
        )
        assert [seat.timeouts for seat in final.seats] == [0, 0, 0, 0]
        assert sum(seat.balance for seat in final.seats) == 0


class _HeldClient(TableClient):
    """A seat's client whose moves wait while ``moves_allowed`` is clear (reads and streams go on)."""

    def __init__(self, *args: Any, moves_allowed: asyncio.Event, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.moves_allowed = moves_allowed

    async def bid(self, amount: int, *, expected_version: int | None = None) -> table_pb2.TableView:
        await self.moves_allowed.wait()
        return await super().bid(amount, expected_version=expected_version)

    async def play(self, cards: CardsLike, *, expected_version: int | None = None) -> table_service_pb2.PlayResponse:
        await self.moves_allowed.wait()
        return await super().play(cards, expected_version=expected_version)


class TestFailover:
    async def test_bots_resume_their_streams_on_a_second_referee(self, redis_url: str) -> None:
        """Two referees on one Redis; the first stops mid-game; every bot's stream resumes on the second."""
        decisions: list[Decision] = []
        midgame = asyncio.Event()
        # The game waits while the first referee stops: played to its end within the grace
        # period (streams stay open that long), it would never need the second referee.
        moves_allowed = asyncio.Event()
        moves_allowed.set()

        def note(decision: Decision) -> None:
            decisions.append(decision)
            if len(decisions) == 5:
                moves_allowed.clear()
                midgame.set()

        async with contextlib.AsyncExitStack() as stack:
            target, first_referee = await two_referees(stack, redis_url)
            creator = await stack.enter_async_context(TableClient(target))
            created = await creator.create_table(player_names=["a", "b", "c"], round_limit=2)
            clients = [
                await stack.enter_async_context(
                    _HeldClient(target, table_id=created.table_id, token=token.token, moves_allowed=moves_allowed)
                )
                for token in created.seat_tokens
            ]
            runners = [BotRunner(HeuristicBot(), client, on_decision=note) for client in clients]
            playing = asyncio.gather(*(runner.run() for runner in runners))
            await asyncio.wait_for(midgame.wait(), timeout=30)
            await first_referee.aclose()  # its streams end, its port closes
            moves_allowed.set()
            finals = await asyncio.wait_for(playing, timeout=60)
            final = await creator.get()

        assert all(view.phase == table_pb2.PHASE_CLOSED for view in finals)
        assert final.round == 2
        assert sum(seat.balance for seat in final.seats) == 0
        assert len({decision.after.version for decision in decisions}) == len(decisions)  # nothing applied twice
        for runner in runners:
            assert isinstance(runner.views, StreamingViews)
            assert runner.views.resumes >= 1


class TestIdleLimits:
    def test_every_bundled_client_waits_longer_than_the_default_heartbeat_before_giving_up_a_stream(self) -> None:
        # events.proto: a silent stream carries a heartbeat after the referee's interval (20 s by
        # default), so that a client may take a longer silence (the bundled clients: 45 s) for a
        # lost stream. A client that gave up sooner would reconnect from every idle table.
        root = Path(__file__).resolve().parents[2]
        heartbeat_s = ServerConfig().heartbeat_s
        assert heartbeat_s == 20.0
        parser = argparse.ArgumentParser()
        add_server_arguments(parser)
        assert config_from_args(parser.parse_args([])).heartbeat_s == heartbeat_s  # the command line's default
        python_s = [
            inspect.signature(TableClient.watch).parameters["idle_timeout_s"].default,
            inspect.signature(StreamingViews).parameters["idle_timeout_s"].default,
        ]
        node = re.search(r"idleMs = ([\d_]+)", (root / "clients/node/bot.mjs").read_text())
        web = re.search(r"IDLE_STREAM_MS = ([\d_]+);", (root / "web/src/table.ts").read_text())
        assert node is not None
        assert web is not None
        browser_s = [int(node.group(1).replace("_", "")) / 1000, int(web.group(1).replace("_", "")) / 1000]
        assert python_s + browser_s == [45.0, 45.0, 45.0, 45.0]
        assert min(python_s + browser_s) >= 2 * heartbeat_s
