"""``VectorDouDizhuEnv``: many tables stepped in one call, into preallocated numpy buffers.

Every table plays self-play: at each step, each table's seat to act takes the action given
for that table. The results land in buffers allocated once (EnvPool's layout):

* ``observation`` ``(num_envs, size)`` int8 and ``action_mask`` ``(num_envs, actions)`` int8:
  what the seat to act sees next; ``legal_actions`` ``(num_envs, actions)`` int32 and
  ``legal_count`` ``(num_envs,)``: the same legal actions as a list, ascending (row ``i``'s are
  ``legal_actions[i, :legal_count[i]]``; the entries after them are left as they were), for a
  policy that reads the legal actions rather than scanning a mask;
* ``seat`` ``(num_envs,)``: that seat; ``rewards`` ``(num_envs, players)`` float32 and
  ``terminated`` ``(num_envs,)``: a round that just ended and what it paid each seat (the
  table then starts its next round at once, and the observation is the new round's);
* ``illegal_action`` ``(num_envs,)`` bool: whether the table's last action was illegal (one its
  mask forbade, or out of range) and so replaced by the environments' rule.

It is a Gymnasium ``VectorEnv``: ``reset(seed=s)`` deals every table the first round of its
stream for ``s``, and ``step(actions)`` returns ``(observation, reward, terminated, truncated,
info)`` where ``observation`` is ``{"observation", "action_mask"}`` of the seats to act (the
buffers themselves: copy what you keep), ``reward`` the reward of the seat that just acted,
``info["rewards"]`` every seat's, ``info["seat"]`` the seats to act now and
``info["illegal_action"]`` the tables whose action was replaced. A table whose round
ends starts the next at once (``AutoresetMode.SAME_STEP``); the finished round's last
observation is not kept (no seat is to act in it: its value is the reward).

``send(actions)`` / ``recv()`` is the buffers' own loop, asynchronous: with ``workers=k`` the
tables are split into ``k`` shards, each stepped apart: on a thread of this process that stays
inside the engine where the native engine plays the tables and writes the DouZero
observations (``dizhu.env.threads``), else by a process of its own writing into shared
buffers; ``send`` returns at once, and ``recv`` waits for every shard. Two shards beat one
step of every table from about a thousand tables (docs/benchmarks.md). ``send(actions,
shard=i)`` and ``recv_shard()`` step the shards apart (EnvPool's asynchronous mode): the caller
chooses the actions of one shard while the others move. Illegal actions follow the
environments' rule (the pass, else the lowest legal action), flagged in ``illegal_action``.
Each table has a random stream of its own, derived from the seed and its index by SHA-256
(``dizhu.env.streams``): no table of one seed deals what a table of another deals.
"""

from __future__ import annotations

import itertools
import multiprocessing
import multiprocessing.connection
from multiprocessing import shared_memory
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from dizhu.env.actions import action_table
from dizhu.env.dou_dizhu_v0 import observation_space
from dizhu.env.encodings import encoding
from dizhu.env.encodings import encoding as make_encoding
from dizhu.env.engine import has_native_tables, rules
from dizhu.env.game import Game
from dizhu.env.info import Seen
from dizhu.env.native import NATIVE_ENCODING, NativeShard
from dizhu.env.streams import table_generator
from dizhu.env.threads import ShardThreads
from dizhu.rules import SEED_SIZE, VARIANTS, HouseRules

__all__ = ["VectorDouDizhuEnv"]


class _Tables:
    """A shard of tables writing into (views of) the shared buffers."""

    def __init__(self, config: dict[str, Any], first: int, count: int, buffers: dict[str, npt.NDArray[Any]]) -> None:
        variant = VARIANTS[config["variant"]]
        engine = rules(config["engine"])
        house = HouseRules(spring=config["spring"])
        self.coder = encoding(config["encoding"], variant)
        self.seen = Seen.zeros(variant, count)
        self.games = [
            Game(variant, engine, house_rules=house, reward=config["reward"], seen=self.seen.rows(i, i + 1))
            for i in range(count)
        ]
        self.rngs = [table_generator(config["seed"], first + i, config["epoch"]) for i in range(count)]
        self.first = first
        self.buffers = buffers
        self.rows = slice(first, first + count)
        for i in range(count):
            self._start(i)
        self._write()

    def _start(self, i: int) -> None:
        rng = self.rngs[i]
        game = self.games[i]
        game.start(rng.bytes(SEED_SIZE), int(rng.integers(game.variant.players)))

    def _write(self) -> None:
        """Every table's seat to act, its mask, and all the observations in one call."""
        seats = self.buffers["seat"][self.rows]
        masks = self.buffers["action_mask"][self.rows]
        listed = self.buffers["legal_actions"][self.rows]
        counts = self.buffers["legal_count"][self.rows]
        for i, game in enumerate(self.games):
            seats[i] = game.turn
            game.table.mask(game.legal, masks[i])
            listed[i, : len(game.legal)] = game.legal
            counts[i] = len(game.legal)
        self.seen.seat[:] = seats
        self.coder.encode(self.seen, self.buffers["observation"][self.rows])

    def step(self) -> None:
        actions = self.buffers["actions"]
        rewards = self.buffers["rewards"]
        terminated = self.buffers["terminated"]
        for i, game in enumerate(self.games):
            row = self.first + i
            game.step(int(actions[row]))
            if game.over:
                rewards[row] = game.rewards()
                terminated[row] = True
                self._start(i)
            else:
                rewards[row] = 0.0
                terminated[row] = False
        self._write()


def _shard(
    config: dict[str, Any], first: int, count: int, buffers: dict[str, npt.NDArray[Any]]
) -> _Tables | NativeShard:
    """Native tables where the engine has them, else the ``Game``s of the reference."""
    native = NativeShard.make(rules(config["engine"]), config, first, count, buffers)
    return native if native is not None else _Tables(config, first, count, buffers)


def _worker(connection: multiprocessing.connection.Connection, config: dict[str, Any], first: int, count: int,
            layout: dict[str, tuple[str, tuple[int, ...], str]]) -> None:  # fmt: skip
    memories = {name: shared_memory.SharedMemory(name=shm) for name, (shm, _, _) in layout.items()}
    buffers = {
        name: np.ndarray(shape, dtype=np.dtype(dtype), buffer=memories[name].buf)
        for name, (_, shape, dtype) in layout.items()
    }
    tables = _shard(config, first, count, buffers)
    connection.send("ready")
    while connection.recv() == "step":
        tables.step()
        connection.send("done")
    del tables, buffers
    for memory in memories.values():
        memory.close()


class VectorDouDizhuEnv(VectorEnv[dict[str, npt.NDArray[np.int8]], npt.NDArray[np.int64], npt.NDArray[Any]]):
    """See the module docstring. ``workers=0``: every table in this process (``send`` then
    steps at once and ``recv`` returns the buffers)."""

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP}  # noqa: RUF012 -- Gymnasium declares it so

    def __init__(
        self,
        num_envs: int,
        variant: str = "3p",
        encoding: str = "douzero",
        reward: str = "win",
        spring: bool = False,
        engine: str | None = None,
        seed: int = 0,
        workers: int = 0,
    ) -> None:
        self.num_envs = num_envs
        self.variant = VARIANTS[variant]
        table_generator(seed, 0)  # a seed out of range is refused here, before any worker starts
        self._config: dict[str, Any] = {"variant": variant, "encoding": encoding, "reward": reward, "spring": spring,
                                        "engine": engine, "seed": seed, "epoch": 0}  # fmt: skip
        self._workers = workers
        coder = make_encoding(encoding, self.variant)
        actions = action_table(self.variant).size
        self.single_observation_space = observation_space(coder, actions)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.single_action_space = spaces.Discrete(actions)
        self.action_space = spaces.MultiDiscrete(np.full(num_envs, actions))
        shapes: dict[str, tuple[tuple[int, ...], Any]] = {
            "observation": ((num_envs, coder.size), np.int8),
            "action_mask": ((num_envs, actions), np.int8),
            "legal_actions": ((num_envs, actions), np.int32),
            "legal_count": ((num_envs,), np.int32),
            "seat": ((num_envs,), np.int8),
            "rewards": ((num_envs, self.variant.players), np.float32),
            "terminated": ((num_envs,), np.bool_),
            "illegal_action": ((num_envs,), np.bool_),
            "actions": ((num_envs,), np.int32),
        }
        #: Native tables writing the DouZero encoding step with the interpreter's lock released:
        #: their shards run on threads of this process, with no copies and no messages.
        self._threaded = (
            bool(workers) and encoding == NATIVE_ENCODING and has_native_tables(rules(engine), self.variant)
        )
        self._memories: list[shared_memory.SharedMemory] = []
        self._connections: list[multiprocessing.connection.Connection] = []
        self._processes: list[multiprocessing.process.BaseProcess] = []
        self.buffers: dict[str, npt.NDArray[Any]] = {}
        self._layout: dict[str, tuple[str, tuple[int, ...], str]] = {}
        for name, (shape, dtype) in shapes.items():
            if workers and not self._threaded:
                size = max(1, int(np.prod(shape)) * np.dtype(dtype).itemsize)
                memory = shared_memory.SharedMemory(create=True, size=size)
                self._memories.append(memory)
                self.buffers[name] = np.ndarray(shape, dtype=dtype, buffer=memory.buf)
                self.buffers[name].fill(0)
                self._layout[name] = (memory.name, shape, np.dtype(dtype).str)
            else:
                self.buffers[name] = np.zeros(shape, dtype=dtype)
        #: Where each table's mask starts in the flat mask buffer: ``_flag_illegal`` reads one entry a table.
        self._flat_masks = self.buffers["action_mask"].reshape(-1)
        self._mask_width = actions
        self._mask_rows = np.arange(num_envs, dtype=np.int64) * actions
        self._local: _Tables | NativeShard | None = None
        self._pending: set[int] = set()
        self._threads: ShardThreads | None = None
        #: The tables each worker steps, as row slices of the buffers (one shard without workers).
        self.shards: list[slice] = [slice(0, num_envs)]
        #: Whether no step was taken since the tables were dealt (a ``reset`` then keeps them).
        self._fresh = True
        self._open()

    def _open(self) -> None:
        """Deal every table the first round of its stream, in shards as ``workers`` asks."""
        config, workers, num_envs = self._config, self._workers, self.num_envs
        if not workers:
            self._local = _shard(config, 0, num_envs, self.buffers)
            return
        self.shards = []
        bounds = np.linspace(0, num_envs, workers + 1).astype(int)
        if self._threaded:
            native: list[NativeShard] = []
            for first, last in itertools.pairwise(bounds):
                shard = NativeShard.make(rules(config["engine"]), config, int(first), int(last - first), self.buffers)
                assert shard is not None  # has_native_tables said so
                native.append(shard)
                self.shards.append(slice(int(first), int(last)))
            self._threads = ShardThreads(native)
            return
        context = multiprocessing.get_context("spawn")
        for first, last in itertools.pairwise(bounds):
            ours, theirs = context.Pipe()
            arguments = (theirs, config, int(first), int(last - first), self._layout)
            process = context.Process(target=_worker, args=arguments, daemon=True)
            process.start()
            self._connections.append(ours)
            self._processes.append(process)
            self.shards.append(slice(int(first), int(last)))
        for connection in self._connections:
            if connection.recv() != "ready":
                raise RuntimeError("a worker failed to start")

    def _shut(self) -> None:
        """Stop the shards' threads or processes (the buffers stay)."""
        if self._pending:
            self.recv()
        if self._threads is not None:
            self._threads.close()
            self._threads = None
        for connection in self._connections:
            connection.send("close")
        for process in self._processes:
            process.join(timeout=10)
        self._connections, self._processes = [], []
        self._local = None

    @property
    def observation(self) -> npt.NDArray[np.int8]:
        return self.buffers["observation"]

    @property
    def action_mask(self) -> npt.NDArray[np.int8]:
        return self.buffers["action_mask"]

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, npt.NDArray[np.int8]], dict[str, Any]]:
        """Gymnasium's ``reset``: every table starts a round. ``seed``: each table's first round of
        its stream for that seed; without one, the tables dealt since the last reset are kept if
        nothing was stepped, else every table starts on a stream of its own not used before (the
        next reset's streams of the same seed)."""
        if isinstance(seed, list):
            raise ValueError("a vector environment takes one seed: table i's stream is derived from it and i")
        config = self._config
        if seed is not None:
            table_generator(seed, 0)
            restart = not self._fresh or seed != config["seed"] or config["epoch"] != 0
            config["seed"], config["epoch"] = seed, 0
        else:
            restart = not self._fresh
            config["epoch"] += restart
        if restart:
            self._shut()
            self._open()
        self._fresh = True
        self.buffers["illegal_action"].fill(False)
        return self._observations(), {"seat": self.buffers["seat"], "illegal_action": self.buffers["illegal_action"]}

    def _observations(self) -> dict[str, npt.NDArray[np.int8]]:
        return {"observation": self.buffers["observation"], "action_mask": self.buffers["action_mask"]}

    def send(self, actions: npt.ArrayLike, shard: int | None = None) -> None:
        """Start a step with one action per table (``shard``: only that shard's tables, one action
        each); returns at once with workers."""
        shards = range(len(self.shards)) if shard is None else [shard]
        if self._pending.intersection(shards):
            raise RuntimeError("recv() the previous step of these tables first")
        rows = slice(None) if shard is None else self.shards[shard]
        self._flag_illegal(rows, actions)
        self.buffers["actions"][rows] = actions
        self._fresh = False
        for started in shards:
            self._pending.add(started)
            if self._threads is not None:
                self._threads.start(started)
            elif self._local is not None:
                self._local.step()
            else:
                self._connections[started].send("step")

    def _flag_illegal(self, rows: slice, actions: npt.ArrayLike) -> None:
        """Flag the actions of ``rows`` that their masks, still the step's, forbid (or that are out
        of range): the engines replace them by the pass or the lowest legal action. One mask entry
        is read per table, from the flat buffer, so that the check stays a few numpy calls."""
        size = self._mask_width
        chosen = np.asarray(actions, dtype=np.int64)
        inside = chosen.astype(np.uint64) < size  # a negative action wraps to a huge one
        allowed = self._flat_masks[self._mask_rows[rows] + chosen * inside]
        np.logical_or(~inside, allowed == 0, out=self.buffers["illegal_action"][rows])

    def recv(self) -> dict[str, npt.NDArray[Any]]:
        """Wait for every step sent; the buffers (the same arrays every time)."""
        if not self._pending:
            raise RuntimeError("send() a step first")
        if self._threads is not None:
            while self._pending:
                self._collect(self._threads)
        for shard in sorted(self._pending):
            if self._local is None:
                self._connections[shard].recv()
        self._pending.clear()
        return self.buffers

    def recv_shard(self) -> int:
        """Wait for the first shard whose step is done; its index (its rows: ``shards[index]``).

        EnvPool's asynchronous loop: ``send`` the actions of a shard as soon as they are
        chosen, ``recv_shard`` the next one ready, and choose for it while the others step.
        """
        if not self._pending:
            raise RuntimeError("send() a step first")
        if self._threads is not None:
            return self._collect(self._threads)
        if self._local is not None:
            shard = min(self._pending)
        else:
            waiting = {self._connections[shard]: shard for shard in self._pending}
            ready = multiprocessing.connection.wait(list(waiting))
            shard = waiting[ready[0]]  # type: ignore[index]
            self._connections[shard].recv()
        self._pending.discard(shard)
        return shard

    def _collect(self, threads: ShardThreads) -> int:
        shard, error = threads.collect()
        self._pending.discard(shard)
        if error is not None:
            raise error
        return shard

    def step(
        self, actions: npt.ArrayLike
    ) -> tuple[
        dict[str, npt.NDArray[np.int8]],
        npt.NDArray[np.float32],
        npt.NDArray[np.bool_],
        npt.NDArray[np.bool_],
        dict[str, Any],
    ]:
        """Gymnasium's ``step``: ``send(actions)`` then ``recv()``, as ``(observation, reward,
        terminated, truncated, info)``. The reward is the acting seat's, ``info["rewards"]`` every
        seat's, ``info["seat"]`` the seat to act now, ``info["illegal_action"]`` whether the action
        was replaced (see the module docstring)."""
        acted = self.buffers["seat"].astype(np.intp)
        self.send(actions)
        buffers = self.recv()
        reward = buffers["rewards"][np.arange(self.num_envs), acted]
        infos = {"seat": buffers["seat"], "rewards": buffers["rewards"], "illegal_action": buffers["illegal_action"]}
        return self._observations(), reward, buffers["terminated"], np.zeros(self.num_envs, dtype=np.bool_), infos

    def close_extras(self, **kwargs: Any) -> None:
        self._shut()
        self.buffers = {}
        for memory in self._memories:
            memory.close()
            memory.unlink()
        self._memories = []

    def __enter__(self) -> VectorDouDizhuEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
