"""A cancelled ``WatchTable`` stream lets go of its slot and its seat at once, not at its next write.

The referee is a ``dizhu serve`` process of its own, as a client meets it, with a heartbeat of
an hour: a stream that missed its client's cancellation would hold its stream slot and keep its
seat connected until that heartbeat's write failed, far beyond any hang guard here. The client
reads each stream's snapshot and cancels it at once, which lands the cancellation while the
stream's process is still at work after the snapshot (reading the table's history from Redis).
"""

from __future__ import annotations

import asyncio
import urllib.request
from collections.abc import AsyncIterator, Iterator

import grpc
import pytest

from dizhu.config import ServerConfig
from dizhu.referee.errors import QuotaExceeded
from dizhu.service.admission import Admission, AdmissionLimits
from dizhu.testing import free_port
from dizhu.v1 import table_service_pb2 as pb
from dizhu.v1 import table_service_pb2_grpc
from tests.support.grpc_calls import THREE, Table, TableStub, as_seat, error_info
from tests.support.live import SOON_S, create
from tests.support.referees import served_referee

#: Open streams a connection may hold: each round opens exactly this many.
PER_CONNECTION = 20
#: Far beyond any hang guard: only a stream that noticed its cancellation lets go in time.
HEARTBEAT_S = 3600


@pytest.fixture
def metrics_port() -> int:
    return free_port()


@pytest.fixture
def referee(redis_url: str, metrics_port: int) -> Iterator[str]:
    """A ``dizhu serve`` process: a call window of 0.2 s, stream leases of an hour."""
    flags = [
        "--heartbeat",
        str(HEARTBEAT_S),
        "--max-streams-per-connection",
        str(PER_CONNECTION),
        "--presence-window",
        "0.2",
        "--presence-lease",
        str(HEARTBEAT_S),
        "--metrics-port",
        str(metrics_port),
    ]
    with served_referee(redis_url, "release", flags=flags) as target:
        yield target


@pytest.fixture
async def tables(referee: str) -> AsyncIterator[TableStub]:
    async with grpc.aio.insecure_channel(referee) as channel:
        yield table_service_pb2_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]


async def _snapshot_then_cancel(tables: TableStub, table: Table, token: str | None = None) -> None:
    """Open a stream, read its first message (its snapshot) and cancel it; fails if it is refused."""
    call = tables.WatchTable(
        pb.WatchTableRequest(table_id=table.table_id), metadata=as_seat(token) if token is not None else ()
    )
    try:
        async with asyncio.timeout(SOON_S):
            first = await call.read()
    except grpc.aio.AioRpcError as error:
        raise AssertionError(f"refused: {error.code()} {error_info(error).reason} {error.details()}") from None
    assert first is not grpc.aio.EOF
    assert first.event.WhichOneof("payload") == "snapshot"
    call.cancel()


async def _until(condition: object, what: str) -> None:
    """Poll ``condition()`` (a coroutine function) until true; a hang guard far below the heartbeat."""
    loop = asyncio.get_running_loop()
    until = loop.time() + SOON_S
    while not await condition():  # type: ignore[operator]
        assert loop.time() < until, f"still not {what} after {SOON_S:g} s"
        await asyncio.sleep(0.02)


def _open_streams(metrics_port: int) -> float:
    """The referee's ``dizhu_open_streams`` gauge, read from its metrics port."""
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=SOON_S) as response:
        text = response.read().decode()
    (line,) = [line for line in text.splitlines() if line.startswith("dizhu_open_streams ")]
    return float(line.split()[1])


class TestACancelledStream:
    async def test_frees_its_slot_so_streams_opened_and_cancelled_back_to_back_are_never_refused(
        self, tables: TableStub, metrics_port: int
    ) -> None:
        table = await create(tables, THREE)
        for _ in range(15):  # 300 streams over one connection, never more than its cap at once
            for _ in range(PER_CONNECTION):
                await _snapshot_then_cancel(tables, table)

        async def none_open() -> bool:
            return await asyncio.to_thread(_open_streams, metrics_port) == 0

        await _until(none_open, "every stream closed (dizhu_open_streams 0)")

    async def test_of_a_seat_leaves_the_seat_disconnected(self, tables: TableStub) -> None:
        table = await create(tables, THREE)

        async def seat_gone() -> bool:
            view = (await tables.GetTable(pb.GetTableRequest(table_id=table.table_id))).table
            return not view.seats[0].connected

        for _ in range(3):
            for _ in range(30):
                await _snapshot_then_cancel(tables, table, table.tokens[0])
            # The streams' leases last an hour: only their release lets the seat go once the
            # last opening's call window (0.2 s) is over.
            await _until(seat_gone, "seat 0 disconnected")


class _Call:
    """What admission reads of a call: its peer and metadata (one connection, no API key)."""

    def peer(self) -> str:
        return "ipv4:127.0.0.1:40000"

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return ()


class TestAStreamSlot:
    async def test_of_a_cancelled_task_is_taken_back_before_its_cleanup_frees_it_and_only_once(self) -> None:
        admission = Admission(AdmissionLimits.of(ServerConfig(max_streams_per_connection=1)))
        call = _Call()
        holding, cleaning = asyncio.Event(), asyncio.Event()

        async def stream() -> None:
            close = admission.open_stream(call)  # type: ignore[arg-type]
            try:
                holding.set()
                await asyncio.Event().wait()  # the stream waits for its table's next event
            finally:
                await cleaning.wait()  # letting go of its seat and its feed takes a while
                close()

        task = asyncio.create_task(stream())
        await holding.wait()
        with pytest.raises(QuotaExceeded):
            admission.open_stream(call)  # type: ignore[arg-type]
        task.cancel()  # as gRPC does once the client's cancellation arrives
        admission.open_stream(call)  # type: ignore[arg-type]
        assert admission.open_streams == 1
        cleaning.set()
        await asyncio.gather(task, return_exceptions=True)
        # The cancelled stream's own close, late, frees nothing: the new stream holds the only slot.
        assert admission.open_streams == 1
        with pytest.raises(QuotaExceeded):
            admission.open_stream(call)  # type: ignore[arg-type]
