"""A fuzzer against a real referee: thousands of calls on every method, and nothing breaks.

Fixed seed, about 2,500 calls: random bytes, typed messages with random fields (out-of-range
numbers, unknown enum values, long lists, odd strings), valid requests with unknown fields
or invalid UTF-8 spliced in, groups nested deep, random credentials -- mixed with legal
moves, so that games are played (rounds finish) while the garbage flies. Afterwards: no call
ended INTERNAL or UNKNOWN, every refusal carried an ErrorInfo, the server is healthy, and
every table in Redis decodes and every replay verifies.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from typing import Any

import grpc
import redis.asyncio
from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2, health_pb2_grpc

from dizhu.referee import decode
from dizhu.referee.replay import verify
from dizhu.v1 import cards_pb2, rules_service_pb2, table_pb2, table_service_pb2
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import DOMAIN, FOUR, THREE, Decision, Table, create_table, decide, error_info, send
from tests.support.safety import Server, Servers

SEED = 20261130
CALLS = 2500
_SERVICES = (
    table_service_pb2.DESCRIPTOR.services_by_name["TableService"],
    rules_service_pb2.DESCRIPTOR.services_by_name["RulesService"],
)
_THREE_OF_CLUBS = cards_pb2.Card(rank=cards_pb2.RANK_THREE, suit=cards_pb2.SUIT_CLUBS)
_METHODS = [(f"/{service.full_name}/{method.name}", method) for service in _SERVICES for method in service.methods]
_ODD_STRINGS = ("", "\x00", "\u202e", "\U0001f0cf" * 40, "a" * 200, "%s%n", "{t:x}", "*", "\n", "Bearer ")
#: Metadata values a client can send (gRPC refuses to send anything but printable ASCII).
_ODD_HEADERS = ("Bearer", "Bearer x", "bearer  y", "Basic abc", "%s%n", "{t:x}", "*", "x" * 300)
_INTS = (0, 1, 2, 3, 4, 5, 13, 15, 16, 33, 54, 107, 108, 1024, 2**31 - 1, 2**32 - 1)


def _scalar(field: FieldDescriptor, rng: random.Random) -> Any:
    kind = field.type
    if kind == FieldDescriptor.TYPE_STRING:
        return (
            rng.choice(_ODD_STRINGS)
            if rng.random() < 0.5
            else "".join(chr(rng.randrange(32, 0x2FFF)) for _ in range(rng.randrange(40)))
        )
    if kind == FieldDescriptor.TYPE_BYTES:
        return rng.randbytes(rng.choice((0, 1, 31, 32, 33, 64)))
    if kind == FieldDescriptor.TYPE_BOOL:
        return rng.random() < 0.5
    if kind == FieldDescriptor.TYPE_ENUM:
        return rng.choice((*(value.number for value in field.enum_type.values), -1, 99, 2**31 - 1))
    if kind in (FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_SINT64, FieldDescriptor.TYPE_SFIXED64):
        return rng.choice((*_INTS, -1, -(2**63), 2**63 - 1))
    if kind in (FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SFIXED32):
        return rng.choice((0, 1, -1, 999_999_999, -(2**31), 2**31 - 1))
    if kind in (FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64):
        return rng.choice((*_INTS, 2**64 - 1))
    return rng.choice(_INTS)


def _random_message(descriptor: Descriptor, rng: random.Random, depth: int = 0) -> Message:
    """A message of ``descriptor`` with random values in a random subset of its fields."""
    message = message_factory.GetMessageClass(descriptor)()
    for field in descriptor.fields:
        if rng.random() < 0.4:
            continue
        count = rng.choice((1, 2, 5, 40)) if field.is_repeated else 1
        for _ in range(count):
            if field.message_type is not None:
                if depth > 3:
                    break
                child = _random_message(field.message_type, rng, depth + 1)
                if field.is_repeated:
                    getattr(message, field.name).add().CopyFrom(child)
                else:
                    getattr(message, field.name).CopyFrom(child)
            elif field.is_repeated:
                getattr(message, field.name).append(_scalar(field, rng))
            else:
                setattr(message, field.name, _scalar(field, rng))
    return message


def _mutate(payload: bytes, rng: random.Random) -> bytes:
    """Valid bytes, made invalid (or odd) in one of several ways."""
    choice = rng.randrange(5)
    if choice == 0 and payload:  # flip a byte
        index = rng.randrange(len(payload))
        return payload[:index] + bytes((payload[index] ^ (1 << rng.randrange(8)),)) + payload[index + 1 :]
    if choice == 1 and payload:  # cut short
        return payload[: rng.randrange(len(payload))]
    if choice == 2:  # an unknown field (number 1000, length-delimited)
        return payload + b"\xc2\x3e\x03abc"
    if choice == 3:  # invalid UTF-8 in field 1 (a string in most requests)
        return b"\x0a\x04\xff\xfe\xc0\x80" + payload
    depth = rng.choice((10, 64, 101, 300))  # groups nested deep (field 500)
    return payload + b"\xa3\x1f" * depth + b"\xa4\x1f" * depth


class _Fuzz:
    def __init__(self, server: Server, tables: list[Table], rng: random.Random) -> None:
        self.server = server
        self.tables = tables
        self.rng = rng
        self.outcomes: Counter[str] = Counter()
        self.reasons: Counter[str] = Counter()

    def _metadata(self) -> tuple[tuple[str, str], ...]:
        rng = self.rng
        table = rng.choice(self.tables)
        return rng.choice(
            (
                (),
                table.creator,
                table.seat(rng.choice(list(table.tokens))),
                (("authorization", rng.choice(_ODD_HEADERS)),),
                (("authorization", "Bearer " + "x" * rng.choice((1, 43, 300))),),
                (("x-api-key", rng.choice(_ODD_HEADERS)),),
            )
        )

    def _record(self, name: str, error: grpc.aio.AioRpcError | None) -> None:
        if error is None:
            self.outcomes["OK"] += 1
            return
        code = error.code()
        assert code not in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN), f"{name}: {code} {error.details()}"
        info = error_info(error)
        assert info.domain == DOMAIN, f"{name}: {info}"
        assert info.reason, f"{name}: {info}"
        self.outcomes[code.name] += 1
        self.reasons[info.reason] += 1

    def _request(self, method: Any) -> bytes:
        rng = self.rng
        table = rng.choice(self.tables)
        message = _random_message(method.input_type, rng)
        if rng.random() < 0.6 and "table_id" in method.input_type.fields_by_name:
            message.table_id = table.table_id  # type: ignore[attr-defined]
        if rng.random() < 0.5 and "request_id" in method.input_type.fields_by_name:
            message.request_id = rng.randbytes(12).hex()  # type: ignore[attr-defined]
        payload = message.SerializeToString()
        roll = rng.random()
        if roll < 0.15:
            return rng.randbytes(rng.randrange(64))
        if roll < 0.45:
            return _mutate(payload, rng)
        return payload

    async def garbage(self) -> None:
        path, method = self.rng.choice(_METHODS)
        payload = self._request(method)
        metadata = self._metadata()
        error = None
        try:
            if method.server_streaming:
                call = self.server.channel.unary_stream(path)(payload, metadata=metadata, timeout=10)
                try:
                    await asyncio.wait_for(call.read(), 10)
                finally:
                    call.cancel()
            else:
                await self.server.channel.unary_unary(path)(payload, metadata=metadata, timeout=10)
        except grpc.aio.AioRpcError as refused:
            error = refused
        self._record(method.name, error)

    async def legal(self) -> None:
        """One legal decision at a running table (a new table once one closes)."""
        server = self.server
        index = self.rng.randrange(len(self.tables))
        table = self.tables[index]
        public = (await server.tables.GetTable(pb.GetTableRequest(table_id=table.table_id))).table
        if public.phase == table_pb2.PHASE_CLOSED:
            seeds = [self.rng.randbytes(32) for _ in range(10)]
            self.tables[index] = await create_table(
                server.tables, table.variant, round_limit=3, seeds=seeds, first_dealer=0
            )
            return
        if not public.HasField("turn_seat") or public.turn_seat not in table.tokens:
            return  # nothing to decide, or a seat some garbage JoinTable took
        mine = (
            await server.tables.GetTable(
                pb.GetTableRequest(table_id=table.table_id), metadata=table.seat(public.turn_seat)
            )
        ).table
        rng = self.rng
        seat = public.turn_seat
        if rng.random() < 0.7:
            decision = await decide(server.rules, mine, rng)
        else:  # almost legal: the right seat and version, a random bid or random cards
            seat = seat if rng.random() < 0.8 else rng.choice(list(table.tokens))
            hand = list(mine.your_hand)
            cards = rng.sample(hand, min(len(hand), rng.randrange(1, 6)))
            if rng.random() < 0.2:
                cards.append(_THREE_OF_CLUBS)
            decision = Decision(amount=rng.randrange(5)) if rng.random() < 0.4 else Decision(cards=tuple(cards))
        error = None
        try:
            await send(server.tables, table, seat, mine.version, decision)
        except grpc.aio.AioRpcError as refused:
            error = refused
        self._record("legal", error)


async def _every_table_decodes_and_every_replay_verifies(client: redis.asyncio.Redis) -> int:
    verified = 0
    async for key in client.scan_iter(match="dizhu:{t:*}:state"):
        decode(await client.hget(key, "data") or b"")
        records = await client.hgetall(key.replace(b":state", b":records"))
        for name, text in records.items():
            assert name.startswith(b"replay:")
            result = verify(text.decode())
            assert result.ok, result.problems
            verified += 1
    return verified


class TestFuzz:
    async def test_thousands_of_random_calls_break_nothing(
        self, servers: Servers, redis_client: redis.asyncio.Redis
    ) -> None:
        # Heartbeats well within a stream call's 10 s: a WatchTable that resumes at the latest
        # event waits for the next one, and gets a heartbeat first.
        server = await servers.start(heartbeat_s=1.0)
        rng = random.Random(SEED)
        # Preset seeds and dealers: the same deals, hence the same game, every run.
        seeds = [rng.randbytes(32) for _ in range(40)]
        tables = [
            await create_table(server.tables, THREE, round_limit=3, seeds=seeds, first_dealer=0),
            await create_table(server.tables, FOUR, round_limit=3, seeds=seeds, first_dealer=1),
            await create_table(server.tables, THREE, players=1, seeds=seeds, first_dealer=2),
        ]
        fuzz = _Fuzz(server, tables, rng)
        for _ in range(CALLS):
            if rng.random() < 0.4:
                await fuzz.legal()
            else:
                await fuzz.garbage()
        health = health_pb2_grpc.HealthStub(server.channel)
        assert (await health.Check(health_pb2.HealthCheckRequest())).status == health_pb2.HealthCheckResponse.SERVING
        assert sum(fuzz.outcomes.values()) > CALLS * 0.8, fuzz.outcomes
        assert fuzz.outcomes["OK"] > 200, fuzz.outcomes
        # Garbage was refused as such, and calls reached the game's own checks too.
        assert fuzz.outcomes["INVALID_ARGUMENT"] > 500, fuzz.outcomes
        game = {"NOT_YOUR_TURN", "CARDS_NOT_IN_HAND", "ILLEGAL_COMBINATION", "DOES_NOT_BEAT", "BID_TOO_LOW"}
        assert len(game & set(fuzz.reasons)) >= 3, fuzz.reasons
        verified = await _every_table_decodes_and_every_replay_verifies(redis_client)
        assert verified >= 3, (verified, fuzz.outcomes, fuzz.reasons)
