"""Hostile HTTP benchmark: compressed request bombs against the HTTP port, and a bystander's
``GetTable`` latency over gRPC and over HTTP meanwhile.

The referee runs as ``dizhu serve --http-address ...`` in its own process over a Redis started
here. The bystander, in this process, reads its table (``GetTable`` with its seat token) every
``--interval`` ms over gRPC and, at the same time, over Connect (binary, one keep-alive HTTP/1.1
connection): first with nobody else calling (idle), then while ``--attackers`` processes each
send ``--per-second`` bombs a second (0: one after another) on a connection of its own. The
bomb (``--bomb``) is ``json``: a Connect JSON ``Play`` whose body is about 1 MB of JSON (20,000
cards) gzip-compressed to a few KB; or ``members``: a Connect binary ``GetTable`` whose body is
1 MiB of empty gzip members (52,428 of them, nothing once inflated); or ``plain``: as many
bytes sent uncompressed (what any body of that size costs). Printed: the bystander's
p50/p99 per side, idle and under attack, their ratios, how many answers each side got, and
what the bombs were answered.

Then held connections: a referee started with a 1,024 file-descriptor limit, ``--held`` TCP
connections to its HTTP port that never send a byte, and, while they are open, fresh gRPC
connections each making one call: how many of the held ones the port refused (503) or closed,
and how many gRPC calls were answered.

Run: ``python bench/bench_hostile_http.py [--seconds 10] [--attackers 2] [--bomb json|members]
[--per-second 1] [--held 1100]`` (``--held 0``: no held connections).
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import http.client
import json
import multiprocessing
import resource
import socket
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

import grpc
from bench_hostile import innocent_reads, percentiles

from dizhu.embedded_redis import EmbeddedRedis
from dizhu.testing import free_port, serve_process
from dizhu.v1 import cards_pb2, table_pb2, table_service_pb2, table_service_pb2_grpc

pb = table_service_pb2
#: Cards in a bomb: about 1 MB of JSON, under the 1 MiB the transport reads.
_BOMB_CARDS = 20_000
_EMPTY_MEMBER = gzip.compress(b"")


def bomb() -> bytes:
    """A Connect JSON ``PlayRequest`` of ``_BOMB_CARDS`` cards, gzip-compressed."""
    card = {"rank": "RANK_ACE", "suit": "SUIT_SPADES"}
    text = json.dumps(
        {"tableId": "t", "requestId": uuid.uuid4().hex, "expectedVersion": 1, "cards": [card] * _BOMB_CARDS}
    ).encode()
    return gzip.compress(text, compresslevel=9)


def members_bomb() -> bytes:
    """Empty gzip members filling the 1 MiB the transport reads: nothing once inflated."""
    return _EMPTY_MEMBER * ((1 << 20) // len(_EMPTY_MEMBER) - 1)


#: Each kind of bomb: its body, the method it calls, its headers.
_BOMBS = {
    "json": (bomb, "Play", {"content-type": "application/json", "content-encoding": "gzip"}),
    "members": (members_bomb, "GetTable", {"content-type": "application/proto", "content-encoding": "gzip"}),
    # The same size sent as it is: what reading a 1 MiB body costs, whatever it holds.
    "plain": (lambda: bytes(len(members_bomb())), "GetTable", {"content-type": "application/proto"}),
}


def _attacker(port: int, seconds: float, kind: str, per_second: float, queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    """``per_second`` bombs of ``kind`` a second (0: one after another) on one connection for
    ``seconds``; how each was answered."""
    make, method, bomb_headers = _BOMBS[kind]
    body = make()
    headers = bomb_headers | {"connection": "keep-alive"}
    period_s = 1 / per_second if per_second > 0 else 0.0
    outcomes: Counter[str] = Counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        sent = time.monotonic()
        try:
            connection.request("POST", f"/dizhu.v1.TableService/{method}", body=body, headers=headers)
            response = connection.getresponse()
            answer = response.read()
            code = json.loads(answer).get("code", "ok") if answer.startswith(b"{") else str(response.status)
            outcomes[f"{response.status} {code}"] += 1
        except (OSError, http.client.HTTPException) as error:
            outcomes[type(error).__name__] += 1
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        time.sleep(max(0.0, period_s - (time.monotonic() - sent)))
    connection.close()
    queue.put(dict(outcomes))


def _http_bystander(port: int, table_id: str, token: str, seconds: float, interval_s: float) -> list[float]:
    """GetTable over Connect (binary) on one keep-alive connection (run in a thread)."""
    latencies: list[float] = []
    body = pb.GetTableRequest(table_id=table_id).SerializeToString()
    headers = {"content-type": "application/proto", "authorization": f"Bearer {token}"}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    until = time.monotonic() + seconds
    try:
        while time.monotonic() < until:
            start = time.perf_counter()
            connection.request("POST", "/dizhu.v1.TableService/GetTable", body=body, headers=headers)
            response = connection.getresponse()
            response.read()
            if response.status != 200:
                raise RuntimeError(f"GetTable over HTTP answered {response.status}")
            latencies.append(time.perf_counter() - start)
            time.sleep(interval_s)
    finally:
        connection.close()
    return latencies


async def _both_bystanders(
    target: str, port: int, table: tuple[str, str], seconds: float, interval_s: float
) -> tuple[list[float], list[float]]:
    table_id, token = table
    return await asyncio.gather(
        innocent_reads(target, table_id, token, seconds, interval_s, api_key=None),
        asyncio.to_thread(_http_bystander, port, table_id, token, seconds, interval_s),
    )


async def _table(target: str) -> tuple[str, str]:
    async with grpc.aio.insecure_channel(target) as channel:
        stub = table_service_pb2_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
        created = await stub.CreateTable(
            pb.CreateTableRequest(
                request_id=uuid.uuid4().hex,
                settings=table_pb2.TableSettings(variant=cards_pb2.VARIANT_THREE_PLAYER),
                player_names=["i", "j", "k"],
            )
        )
        return created.table_id, created.seat_tokens[0].token


def _report(side: str, idle: list[float], attacked: list[float]) -> None:
    idle_p50, idle_p99 = percentiles(idle)
    p50, p99 = percentiles(attacked)
    print(f"  {side:5s} GetTable idle:         p50 {idle_p50:8.2f} ms   p99 {idle_p99:8.2f} ms   ({len(idle)} answers)")
    print(f"  {side:5s} GetTable under bombs:  p50 {p50:8.2f} ms   p99 {p99:8.2f} ms   ({len(attacked)} answers)")
    print(f"  {side:5s} under bombs / idle:    p50 {p50 / idle_p50:.1f}x   p99 {p99 / idle_p99:.1f}x")


def _grpc_calls_answered(target: str, calls: int) -> int:
    """Calls answered, each on a fresh gRPC connection (3 s each at most)."""
    answered = 0
    for _ in range(calls):
        with grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)]) as channel:
            stub = table_service_pb2_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
            try:
                stub.GetTable(pb.GetTableRequest(table_id="none"), timeout=3)
            except grpc.RpcError as error:
                answered += error.code() == grpc.StatusCode.NOT_FOUND
    return answered


def _held_connections(redis_url: str, held: int) -> None:
    """``held`` silent connections to the HTTP port of a referee limited to 1,024 descriptors."""
    http_port = free_port()
    flags = ["--log-level", "critical", "--http-address", f"127.0.0.1:{http_port}"]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))  # the referee inherits it
    try:
        with serve_process(redis_url, args=flags) as referee:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
            sockets = [socket.create_connection(("127.0.0.1", http_port), timeout=10) for _ in range(held)]
            try:
                time.sleep(2)
                closed = 0
                for sock in sockets:
                    sock.setblocking(False)
                    try:
                        sock.recv(64)  # a 503, or the end of the connection: the port let it go
                    except BlockingIOError:
                        continue  # nothing: still held open
                    except OSError:
                        pass
                    closed += 1
                answered = _grpc_calls_answered(referee.target, 10)
            finally:
                for sock in sockets:
                    sock.close()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    print(f"{held} silent HTTP connections to a referee limited to 1,024 file descriptors:")
    print(f"  refused (503) or closed by the port within 2 s: {closed}; held open: {held - closed}")
    print(f"  meanwhile, calls on fresh gRPC connections answered: {answered} of 10")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10, help="length of each phase (default 10)")
    parser.add_argument("--attackers", type=int, default=2, help="processes sending bombs (default 2)")
    parser.add_argument("--bomb", choices=sorted(_BOMBS), default="json", help="the bomb (default json)")
    parser.add_argument("--per-second", type=float, default=1, help="bombs a second per attacker (0: back to back)")
    parser.add_argument("--interval", type=float, default=20, help="ms between a bystander's calls (default 20)")
    parser.add_argument("--held", type=int, default=1100, help="silent connections held open (default 1,100)")
    args = parser.parse_args()
    size = len(_BOMBS[args.bomb][0]())
    if args.bomb == "json":
        print(f"bomb: a Connect JSON Play of {_BOMB_CARDS:,} cards, {size:,} bytes gzip-compressed")
    elif args.bomb == "members":
        print(f"bomb: a Connect GetTable of {size // len(_EMPTY_MEMBER):,} empty gzip members, {size:,} bytes")
    else:
        print(f"bomb: a Connect GetTable of {size:,} bytes, uncompressed")
    http_port = free_port()
    flags = ["--log-level", "error", "--http-address", f"127.0.0.1:{http_port}"]
    interval = args.interval / 1000
    with (
        tempfile.TemporaryDirectory() as data,
        EmbeddedRedis(Path(data), appendonly=False) as store,
        serve_process(store.url, args=flags) as referee,
    ):
        table = asyncio.run(_table(referee.target))
        idle = asyncio.run(_both_bystanders(referee.target, http_port, table, args.seconds, interval))
        context = multiprocessing.get_context("spawn")
        queue: multiprocessing.Queue = context.Queue()  # type: ignore[type-arg]
        attackers = [
            context.Process(target=_attacker, args=(http_port, args.seconds + 1, args.bomb, args.per_second, queue))
            for _ in range(args.attackers)
        ]
        for attacker in attackers:
            attacker.start()
        time.sleep(0.5)
        attacked = asyncio.run(_both_bystanders(referee.target, http_port, table, args.seconds, interval))
        outcomes: Counter[str] = Counter()
        for _ in attackers:
            outcomes.update(queue.get(timeout=120))
        for attacker in attackers:
            attacker.join()
    rate = f"{args.per_second:g} bombs a second" if args.per_second > 0 else "bombs back to back"
    print(f"{args.attackers} attackers, {rate} each, for {args.seconds:g} s", end="; ")
    print(f"a bystander call every {args.interval:g} ms")
    _report("gRPC", idle[0], attacked[0])
    _report("HTTP", idle[1], attacked[1])
    print("  bombs answered: " + ", ".join(f"{outcome} x{count}" for outcome, count in sorted(outcomes.items())))
    if args.held:
        with tempfile.TemporaryDirectory() as data, EmbeddedRedis(Path(data), appendonly=False) as store:
            _held_connections(store.url, args.held)


if __name__ == "__main__":
    main()
