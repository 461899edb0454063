"""When and how TableClient.watch reopens a stream, against real referees.

A lost stream is reopened after the last sequence received, a silent one is taken for lost
after ``idle_timeout_s`` (UNAVAILABLE, saying so), a sequence the table never reached falls
back to a fresh snapshot at once (it is no retry: it happens even with ``attempts=1``), a
refusal is raised at once, and a referee that stays away ends the iteration with the last
retryable error once the policy's attempts are spent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket

import grpc
import pytest

from dizhu.client import DizhuError, RetryPolicy, SequenceOutOfRange, TableClient, TableNotFound, Unavailable
from dizhu.v1 import events_pb2
from tests.support.failover import two_referees

Reopenings = list[tuple[DizhuError, int | None]]


def _nobody_listening() -> str:
    """The address of a port nobody listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{probe.getsockname()[1]}"


def _noting(reopened: Reopenings) -> object:
    return lambda error, after: reopened.append((error, after))


async def _next_change(stream: object) -> events_pb2.TableEvent:
    async with asyncio.timeout(10):
        async for event in stream:  # type: ignore[attr-defined]
            if not event.HasField("heartbeat"):
                return event  # type: ignore[no-any-return]
    raise AssertionError("the stream ended")


async def _drain(stream: object) -> None:
    async with asyncio.timeout(20):
        async for _ in stream:  # type: ignore[attr-defined]
            pass


class TestRefusalsAndGivingUp:
    async def test_a_refused_stream_is_raised_at_once_without_reopening(self, target: str) -> None:
        reopened: Reopenings = []
        async with TableClient(target, table_id="no-such-table") as client:
            with pytest.raises(TableNotFound):
                await _drain(client.watch(on_reconnect=_noting(reopened)))
        assert reopened == []

    async def test_a_referee_that_stays_away_ends_the_stream_with_its_error_after_the_attempts(self) -> None:
        reopened: Reopenings = []
        policy = RetryPolicy(attempts=3, initial_delay_s=0.01)
        async with TableClient(_nobody_listening(), table_id="t", retry=policy) as client:
            with pytest.raises(Unavailable) as caught:
                await _drain(client.watch(on_reconnect=_noting(reopened)))
        assert caught.value.code == grpc.StatusCode.UNAVAILABLE
        assert [(type(error), after) for error, after in reopened] == [(Unavailable, None)] * 2


class TestReopenings:
    async def test_a_sequence_beyond_the_table_reopens_for_a_snapshot_even_without_retries(self, target: str) -> None:
        reopened: Reopenings = []
        async with TableClient(target, retry=RetryPolicy(attempts=1)) as creator:
            await creator.create_table(player_names=["a", "b", "c"])
            stream = creator.watch(10_000, on_reconnect=_noting(reopened))
            first = await _next_change(stream)
            await stream.aclose()
        assert first.HasField("snapshot")
        assert [(type(error), after) for error, after in reopened] == [(SequenceOutOfRange, None)]

    async def test_a_silent_stream_is_given_up_as_unavailable_and_reopened_where_it_was(
        self, target: str, caplog: pytest.LogCaptureFixture
    ) -> None:
        reopened: Reopenings = []
        async with TableClient(target) as creator:
            created = await creator.create_table(player_names=["a", "b", "c"])
            seats_stream = creator.for_seat(created.seat_tokens[0].token).watch()
            seats_snapshot = await _next_change(seats_stream)
            await seats_stream.aclose()
            stream = creator.watch(idle_timeout_s=0.25, on_reconnect=_noting(reopened))
            with caplog.at_level(logging.INFO, logger="dizhu.client"):
                snapshot = await _next_change(stream)
                following = asyncio.ensure_future(_next_change(stream))  # the stream reopens as it is read
                async with asyncio.timeout(10):
                    while not reopened:
                        await asyncio.sleep(0.02)
                following.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await following
            await stream.aclose()
        assert len(seats_snapshot.snapshot.your_hand) == 17  # a seat's stream carries its token
        error, after = reopened[0]
        assert (type(error), error.code, error.message) == (
            Unavailable,
            grpc.StatusCode.UNAVAILABLE,
            "no message on the event stream for 0.25s",
        )
        assert after == snapshot.sequence
        lost = [record.getMessage() for record in caplog.records if record.name == "dizhu.client"]
        assert lost
        assert lost[0].startswith(f"event stream lost (UNAVAILABLE); resuming after sequence {after} in ")

    async def test_a_stream_cut_by_its_referee_goes_on_at_the_other_after_the_last_event(self, redis_url: str) -> None:
        reopened: Reopenings = []
        async with contextlib.AsyncExitStack() as stack:
            target, first_referee = await two_referees(stack, redis_url)
            creator = await stack.enter_async_context(TableClient(target))
            created = await creator.create_table(player_names=["a", "b", "c"])
            stream = creator.watch(on_reconnect=_noting(reopened))
            events = [await _next_change(stream)]
            await first_referee.aclose()  # the stream ends UNAVAILABLE, not by its idle timeout
            view = await creator.get()
            bidder = creator.for_seat(created.seat_tokens[view.turn_seat].token)
            await bidder.get()
            await bidder.bid(1)
            while not events[-1].HasField("bid_made"):
                events.append(await _next_change(stream))
            await stream.aclose()
        kinds = [event.WhichOneof("payload") for event in events]
        assert kinds.count("snapshot") == 1
        sequences = [event.sequence for event in events]
        assert sequences == list(range(sequences[0], sequences[0] + len(sequences)))
        assert [after for _, after in reopened] == [events[0].sequence] * len(reopened)
        assert all(error.retryable for error, _ in reopened)
