"""No secret at rest: no Redis key or value, log line, metric or error holds a token or a request id
that fetches one; a retry still gets its first answer, and the server secret can be rotated.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import grpc
import pytest
import redis.asyncio

from dizhu.store import table_keys
from dizhu.testing import free_port, serve_process
from dizhu.v1 import table_pb2, table_service_pb2_grpc
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import THREE, TableStub, as_seat, create_table, refused, rid, view
from tests.support.safety import SECRET_1, SECRET_2, Servers


async def _everything_in(client: redis.asyncio.Redis) -> bytes:
    """Every key and value in Redis, as bytes."""
    found = []
    async for key in client.scan_iter(count=1000):
        found.append(key)
        kind = (await client.type(key)).decode()
        if kind == "string":
            found.append(await client.get(key) or b"")
        elif kind == "hash":
            found += [item for pair in (await client.hgetall(key)).items() for item in pair]
        elif kind == "zset":
            found += await client.zrange(key, 0, -1)
        elif kind == "stream":
            found += [value for _, fields in await client.xrange(key) for value in fields.values()]
        else:
            raise AssertionError(f"unexpected key type {kind} of {key!r}")
    return b"\n".join(found)


async def _failed(call: object) -> str:
    """What a refused call told its caller: message, metadata and details."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call  # type: ignore[misc]
    error = caught.value
    return f"{error.details()} {error.trailing_metadata()} {error.debug_error_string()}"


async def _play_with_secrets(tables: TableStub, client: redis.asyncio.Redis) -> tuple[list[str], list[str]]:
    """Create, join, bid, fail in every way that involves a secret; the secrets and what callers were told."""
    create_id, join_id, bid_id, broken_id = rid(), rid(), rid(), rid()
    created = await tables.CreateTable(
        pb.CreateTableRequest(
            request_id=create_id, settings=table_pb2.TableSettings(variant=THREE), player_names=["a", "b"]
        )
    )
    joined = await tables.JoinTable(pb.JoinTableRequest(table_id=created.table_id, request_id=join_id, player_name="c"))
    tokens = [created.creator_token, joined.seat_token, *(seat.token for seat in created.seat_tokens)]
    seat_tokens = [*(seat.token for seat in created.seat_tokens), joined.seat_token]
    turn = joined.table.turn_seat
    await tables.Bid(
        pb.BidRequest(table_id=created.table_id, request_id=bid_id, expected_version=2, amount=1),
        metadata=as_seat(seat_tokens[turn]),
    )
    errors = [
        # A token of nothing, a malformed header, the creator's token where a seat's is needed.
        await _failed(
            tables.LeaveTable(
                pb.LeaveTableRequest(table_id=created.table_id, request_id=rid()), metadata=as_seat("x" * 43)
            )
        ),
        await _failed(
            tables.LeaveTable(
                pb.LeaveTableRequest(table_id=created.table_id, request_id=rid()),
                metadata=(("authorization", f"Basic {tokens[0]}"),),
            )
        ),
        await _failed(
            tables.Bid(
                pb.BidRequest(table_id=created.table_id, request_id=rid(), expected_version=3, amount=2),
                metadata=as_seat(created.creator_token),
            )
        ),
    ]
    # An internal error, with a token and a request id in hand: the table's state is broken.
    await client.hset(table_keys("dizhu", created.table_id).state, "data", b"{broken")
    errors.append(
        await _failed(
            tables.Bid(
                pb.BidRequest(table_id=created.table_id, request_id=broken_id, expected_version=3, amount=2),
                metadata=as_seat(seat_tokens[(turn + 1) % 3]),
            )
        )
    )
    # The caller may be told its own request id back; nobody else may.
    errors[-1] = errors[-1].replace(broken_id, "")
    return [*tokens, create_id, join_id, bid_id, broken_id], errors


class TestNoSecretAtRest:
    async def test_neither_redis_nor_logs_nor_metrics_nor_errors_hold_a_token_or_a_secret_request_id(
        self, redis_url: str, redis_client: redis.asyncio.Redis, tmp_path: Path
    ) -> None:
        log = tmp_path / "referee.log"
        metrics_port = free_port()
        args = ["--log-level", "debug", "--log-format", "json", "--metrics-port", str(metrics_port)]
        with log.open("wb") as sink, serve_process(redis_url, args=args, stderr=sink) as referee:
            async with grpc.aio.insecure_channel(referee.target) as channel:
                tables = table_service_pb2_grpc.TableServiceStub(channel)
                secrets, errors = await _play_with_secrets(tables, redis_client)
            with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as response:
                metrics = response.read().decode()
            stored = await _everything_in(redis_client)
        logs = log.read_text()
        assert stored
        assert metrics
        assert "refused" in logs
        assert "unexpected_error" in logs
        for secret in secrets:
            assert secret.encode() not in stored, f"{secret} is in Redis"
            assert secret not in logs, f"{secret} is in the logs"
            assert secret not in metrics
            assert all(secret not in error for error in errors)
        calls = [json.loads(line) for line in logs.splitlines() if '"method"' in line]
        assert calls
        assert all(call["call_id"] for call in calls)

    async def test_a_retry_gets_the_same_tokens_back_and_they_work(self, servers: Servers) -> None:
        server = await servers.start()
        request = pb.CreateTableRequest(
            request_id=rid(), settings=table_pb2.TableSettings(variant=THREE), player_names=["a", "b", "c"]
        )
        first = await server.tables.CreateTable(request)
        again = await server.tables.CreateTable(request)
        assert again == first
        table = await server.tables.GetTable(
            pb.GetTableRequest(table_id=first.table_id), metadata=as_seat(first.seat_tokens[1].token)
        )
        assert table.table.your_seat == 1


class TestReplayingARequestId:
    async def test_another_api_key_replaying_a_request_id_gets_a_table_of_its_own(self, servers: Servers) -> None:
        server = await servers.start(api_keys=("key-a", "key-b"))
        request = pb.CreateTableRequest(
            request_id=rid(), settings=table_pb2.TableSettings(variant=THREE), player_names=["a"]
        )
        mine = await server.tables.CreateTable(request, metadata=(("x-api-key", "key-a"),))
        theirs = await server.tables.CreateTable(request, metadata=(("x-api-key", "key-b"),))
        assert theirs.table_id != mine.table_id
        assert {theirs.creator_token, theirs.seat_tokens[0].token}.isdisjoint(
            {mine.creator_token, mine.seat_tokens[0].token}
        )
        # Their creator token is worth nothing at my table.
        await refused(
            server.tables.CloseTable(
                pb.CloseTableRequest(table_id=mine.table_id, request_id=rid()), metadata=as_seat(theirs.creator_token)
            ),
            grpc.StatusCode.UNAUTHENTICATED,
            "UNAUTHENTICATED",
        )

    async def test_a_join_under_another_request_id_takes_another_seat(self, servers: Servers) -> None:
        server = await servers.start()
        table = await create_table(server.tables, THREE, players=1)
        mine = await server.tables.JoinTable(
            pb.JoinTableRequest(table_id=table.table_id, request_id=rid(), player_name="me")
        )
        other = await server.tables.JoinTable(
            pb.JoinTableRequest(table_id=table.table_id, request_id=rid(), player_name="me")
        )
        assert (other.seat, other.seat_token) != (mine.seat, mine.seat_token)


class TestRotation:
    async def test_answers_survive_a_rotation_while_the_retired_secret_is_kept(self, servers: Servers) -> None:
        old = await servers.start(secrets=(SECRET_1,))
        rotating = await servers.start(secrets=(SECRET_2, SECRET_1))
        rotated = await servers.start(secrets=(SECRET_2,))
        create = pb.CreateTableRequest(
            request_id=rid(), settings=table_pb2.TableSettings(variant=THREE), player_names=["a", "b"]
        )
        created = await old.tables.CreateTable(create)
        join = pb.JoinTableRequest(table_id=created.table_id, request_id=rid(), player_name="c")
        joined = await old.tables.JoinTable(join)
        # A referee with the new secret and the retired one answers the retries as the old one did.
        assert await rotating.tables.CreateTable(create) == created
        assert await rotating.tables.JoinTable(join) == joined
        # Once the retired secret is dropped, those answers can no longer be given again ...
        await refused(rotated.tables.CreateTable(create), grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REUSED")
        await refused(rotated.tables.JoinTable(join), grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REUSED")
        # ... but every token handed out before keeps working for its table's life.
        seat = joined.table.turn_seat
        token = joined.seat_token if seat == 2 else created.seat_tokens[seat].token
        moved = await rotated.tables.Bid(
            pb.BidRequest(table_id=created.table_id, request_id=rid(), expected_version=2, amount=1),
            metadata=as_seat(token),
        )
        assert moved.table.version == 3
        closed = await rotated.tables.CloseTable(
            pb.CloseTableRequest(table_id=created.table_id, request_id=rid()), metadata=as_seat(created.creator_token)
        )
        assert closed.table.phase == table_pb2.PHASE_CLOSED
        assert (await view(old.tables, await create_table(rotated.tables, THREE))).version == 1
