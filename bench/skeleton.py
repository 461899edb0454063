"""The bare skeleton of a referee: the least a gRPC + Redis move can cost on this stack.

It serves ``dizhu.v1.TableService`` through the same generated stubs as ``dizhu serve``, but
does no game logic: ``CreateTable`` writes an opaque state, and each ``Bid`` or ``Play`` is
exactly one Redis read (the referee's ``LOAD`` script: the state and the answer recorded for
the request id) and one compare-and-set (the referee's ``SAVE`` script: check the version,
write the state, append an event to the table's stream, record the answer), then a response
carrying the new version -- and, with ``--view-bytes``, opaque history entries that make it
about as long as a referee's response (whose view the contract requires). The state and
event written are opaque bytes of the sizes given (about those the referee writes), so
Redis does the same work for both.

``bench/bench_service.py`` starts it beside ``dizhu serve`` and prints every figure of the
referee as a ratio of the skeleton's, measured in the same run. Run alone:
``python bench/skeleton.py --address 127.0.0.1:50061 --redis-url redis://127.0.0.1:6379``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import signal
from collections.abc import AsyncIterator

import grpc
from grpc_health.v1 import _async as health_aio
from grpc_health.v1 import health_pb2_grpc
from redis.asyncio import Redis

from dizhu.store import scripts
from dizhu.v1 import cards_pb2, events_pb2, table_pb2, table_service_pb2_grpc
from dizhu.v1 import table_service_pb2 as pb

_PREFIX = "skeleton"
_ANSWER_TTL_MS = 24 * 3600 * 1000
_ANSWERS_KEPT = 1000
_EVENTS_KEPT = 10_000


class Skeleton(table_service_pb2_grpc.TableServiceServicer):
    """Bid and Play as one read and one compare-and-set, and nothing else.

    ``WatchTable`` is the bare floor of a stream: a small snapshot, then each move's event
    handed over in this process (no Redis), and a heartbeat after ``heartbeat_s`` of quiet.
    """

    def __init__(
        self, redis: Redis, state_bytes: int, event_bytes: int, heartbeat_s: float = 20.0, view_bytes: int = 0
    ) -> None:
        self._watchers: dict[str, set[asyncio.Queue[events_pb2.TableEvent]]] = {}
        self._heartbeat_s = heartbeat_s
        self._redis = redis
        self._load = redis.register_script(scripts.LOAD)
        self._save = redis.register_script(scripts.SAVE)
        self._create = redis.register_script(scripts.CREATE)
        self._state = os.urandom(state_bytes // 2).hex().encode()
        self._event = os.urandom(event_bytes)
        self._padding = _padding(view_bytes)

    async def CreateTable(self, request: pb.CreateTableRequest, context: object) -> pb.CreateTableResponse:  # noqa: N802
        table_id = hashlib.sha256(request.request_id.encode()).hexdigest()[:20]
        base = f"{_PREFIX}:{{t:{table_id}}}"
        keys = [f"{base}:state", f"{base}:events", f"{base}:answers", f"{base}:answered"]
        await self._create(keys=keys, args=[1, self._state, _EVENTS_KEPT, "", "0", b"", 0, _ANSWERS_KEPT, self._event])
        return pb.CreateTableResponse(
            table_id=table_id,
            seat_tokens=[pb.SeatToken(seat=seat, token=f"token-{seat}") for seat in range(3)],
            table=table_pb2.TableView(table_id=table_id, version=1),
        )

    async def _move(self, table_id: str, request_id: str, expected_version: int) -> table_pb2.TableView:
        base = f"{_PREFIX}:{{t:{table_id}}}"
        version, _data, _seq, answer, _presence, _write = await self._load(
            keys=[f"{base}:state", f"{base}:answers"], args=[request_id]
        )
        if answer is not None:
            return pb.BidResponse.FromString(answer).table
        if int(version) != expected_version:
            raise ValueError("stale")
        view = table_pb2.TableView(table_id=table_id, version=expected_version + 1)
        if self._padding:
            view.MergeFromString(self._padding)
        args = [
            *(expected_version, expected_version + 1, self._state, _EVENTS_KEPT),
            *(request_id, "1", pb.BidResponse(table=view).SerializeToString(), _ANSWER_TTL_MS, _ANSWERS_KEPT),
            *(0, 0, 0, "", "", "", self._event),
        ]
        keys = [f"{base}:state", f"{base}:events", f"{base}:records", f"{base}:answers", f"{base}:answered"]
        await self._save(keys=keys, args=args)
        event = events_pb2.TableEvent(sequence=expected_version + 1, version=expected_version + 1)
        event.bid_made.SetInParent()
        for queue in self._watchers.get(table_id, ()):
            queue.put_nowait(event)
        return view

    async def WatchTable(  # noqa: N802
        self, request: pb.WatchTableRequest, context: object
    ) -> AsyncIterator[pb.WatchTableResponse]:
        queue: asyncio.Queue[events_pb2.TableEvent] = asyncio.Queue()
        self._watchers.setdefault(request.table_id, set()).add(queue)
        try:
            snapshot = events_pb2.TableEvent(snapshot=table_pb2.TableView(table_id=request.table_id))
            yield pb.WatchTableResponse(event=snapshot)
            while True:
                try:
                    event = await asyncio.wait_for(queue.get(), self._heartbeat_s)
                except TimeoutError:
                    event = events_pb2.TableEvent()
                    event.heartbeat.SetInParent()
                yield pb.WatchTableResponse(event=event)
        finally:
            self._watchers[request.table_id].discard(queue)

    async def Bid(self, request: pb.BidRequest, context: object) -> pb.BidResponse:  # noqa: N802
        return pb.BidResponse(table=await self._move(request.table_id, request.request_id, request.expected_version))

    async def Play(self, request: pb.PlayRequest, context: object) -> pb.PlayResponse:  # noqa: N802
        return pb.PlayResponse(table=await self._move(request.table_id, request.request_id, request.expected_version))


def _padding(view_bytes: int) -> bytes:
    """Encoded ``TableView.history`` entries of about ``view_bytes`` in all (a play of two cards each)."""
    entry = table_pb2.TableView(
        history=[
            table_pb2.RoundAction(
                deal_number=1, seat=1, cards=[cards_pb2.Card(rank=3, suit=1), cards_pb2.Card(rank=3, suit=2)]
            )
        ]
    ).SerializeToString()
    return entry * (view_bytes // len(entry))


async def serve(
    address: str, redis_url: str, state_bytes: int, event_bytes: int, heartbeat_s: float, view_bytes: int
) -> None:
    redis = Redis.from_url(redis_url)
    options = [("grpc.so_reuseport", 0), ("grpc.server.max_pending_requests", 20_000)]
    server = grpc.aio.server(options=options)
    skeleton = Skeleton(redis, state_bytes, event_bytes, heartbeat_s, view_bytes)
    table_service_pb2_grpc.add_TableServiceServicer_to_server(skeleton, server)
    health_pb2_grpc.add_HealthServicer_to_server(health_aio.HealthServicer(), server)
    server.add_insecure_port(address)
    await server.start()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await server.stop(1)
    await redis.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--address", required=True)
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--state-bytes", type=int, default=2000, help="size of the state written per move")
    parser.add_argument("--event-bytes", type=int, default=120, help="size of the event appended per move")
    parser.add_argument("--heartbeat", type=float, default=20.0, help="idle seconds before a stream's heartbeat")
    parser.add_argument("--view-bytes", type=int, default=0, help="pad each response's view to about this size")
    args = parser.parse_args()
    asyncio.run(
        serve(args.address, args.redis_url, args.state_bytes, args.event_bytes, args.heartbeat, args.view_bytes)
    )


if __name__ == "__main__":
    main()
