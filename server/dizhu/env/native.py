"""The environments' tables played inside the native engine (``dizhu._engine.NativeTables``).

With the native engine a table's whole round -- deal, redeals, auction, play, settlement,
rewards, the action ids and the illegal-action rule -- runs in Rust, which writes what the
seats see straight into the numpy arrays of a ``Seen`` (and, for a vector environment, the
masks, legal lists, seats, rewards, terminations and DouZero observations), with the
interpreter's lock released; ``tests/env/test_native_tables.py`` plays seeded
random games on both and finds every array equal. ``Game`` stays the readable reference.

* ``NativeGame``: ``Game``'s interface over one native table (the single environments and
  the per-action API);
* ``NativeShard``: a vector environment's shard, every table stepped in one call with the
  interpreter's lock released.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from dizhu.env.actions import ActionTable, action_table
from dizhu.env.encodings import Encoding, encoding
from dizhu.env.engine import Rules, native_tables
from dizhu.env.game import Game
from dizhu.env.info import SEEN_ARRAYS, Seen
from dizhu.env.streams import table_generator
from dizhu.rules import SEED_SIZE, VARIANTS, HouseRules, RoundState, Settlement, Variant

__all__ = ["NATIVE_ENCODING", "NativeGame", "NativeShard", "make_game"]

#: Action ids past this cannot be legal; clamped so that the engine's 64-bit argument always fits.
_LARGEST_ID = 2**31
#: The encoding the native tables also write (the others are computed by numpy, per batch).
NATIVE_ENCODING = "douzero"


def _tables(engine: Rules, variant: Variant, seen: Seen, house_rules: HouseRules, reward: str,
            outputs: tuple[Any, ...] | None = None,
            observation: npt.NDArray[np.int8] | None = None) -> Any | None:  # fmt: skip
    table = action_table(variant)
    arrays = [getattr(seen, name) for name in SEEN_ARRAYS]
    plays = [list(ranks) for ranks in table.plays]
    arguments = (plays, arrays, house_rules.spring, variant.default_redeal_cap, reward, outputs, observation)
    return native_tables(engine, variant, arguments)


class NativeGame:
    """``Game`` (same arguments, attributes and values) with its round played by the native engine.

    ``state`` replays the round's actions through the pure ``Game``: for inspection (tests,
    rendering), not for the hot path.
    """

    def __init__(self, variant: Variant, engine: Rules, tables: Any, *, house_rules: HouseRules, reward: str,
                 seen: Seen) -> None:  # fmt: skip
        self.variant = variant
        self.engine = engine
        self.house_rules = house_rules
        self.reward = reward
        self.table: ActionTable = action_table(variant)
        self.redeal_cap = variant.default_redeal_cap
        self.seen = seen
        self.seed = b""
        self.dealer = 0
        self._tables = tables
        self._actions: list[int] = []
        self._legal: list[int] | None = None
        self._over = False

    def start(self, seed: bytes, dealer: int) -> None:
        self._tables.start(0, seed, dealer)
        self.seed, self.dealer = seed, dealer
        self._actions = []
        self._legal = None
        self._over = False

    @property
    def legal(self) -> list[int]:
        if self._legal is None:
            self._legal = self._tables.legal(0)
        return self._legal

    @property
    def over(self) -> bool:
        return self._over

    @property
    def turn(self) -> int:
        return int(self._tables.turn(0))

    @property
    def redeals(self) -> int:
        return int(self._tables.redeals(0))

    def fallback(self) -> int:
        return self.legal[0]

    def step(self, index: int) -> bool:
        index = index if -_LARGEST_ID < index < _LARGEST_ID else -1
        legal: bool = self._tables.step(0, index)
        self._actions.append(index)
        self._legal = None
        self._over = self._tables.over(0)
        return legal

    @property
    def settlement(self) -> Settlement | None:
        settled = self._tables.settlement(0)
        if settled is None:
            return None
        stake, deltas, landlord, landlord_won, doublings, spring = settled
        return Settlement(stake, tuple(deltas), landlord, landlord_won, doublings, spring)

    def rewards(self) -> tuple[float, ...]:
        return tuple(self._tables.rewards(0))

    def seen_by(self, seat: int) -> Seen:
        self.seen.seat[0] = seat
        return self.seen

    def observe(self, coder: Encoding, seat: int) -> npt.NDArray[np.int8]:
        """``seat``'s observation in ``coder``'s encoding (the ``douzero`` one written by the engine)."""
        if coder.name != NATIVE_ENCODING:
            encoded: npt.NDArray[np.int8] = coder.encode(self.seen_by(seat))[0]
            return encoded
        observation = np.empty(coder.size, dtype=np.int8)
        self.seen.seat[0] = seat
        self._tables.encode_douzero(0, observation)
        return observation

    @property
    def state(self) -> RoundState:
        """The rules core's state of the round, replayed by the pure ``Game``."""
        replay = Game(self.variant, self.engine, house_rules=self.house_rules, reward=self.reward)
        replay.start(self.seed, self.dealer)
        for index in self._actions:
            replay.step(index)
        return replay.state


def make_game(
    variant: Variant | str,
    engine: Rules,
    *,
    house_rules: HouseRules | None = None,
    reward: str = "win",
    seen: Seen | None = None,
) -> Game | NativeGame:
    """A ``NativeGame`` where ``engine`` is the native engine and plays ``variant``, else a ``Game``."""
    resolved = VARIANTS[variant] if isinstance(variant, str) else variant
    house = house_rules or HouseRules()
    rows = seen if seen is not None else Seen.zeros(resolved, 1)
    tables = _tables(engine, resolved, rows, house, reward)
    if tables is None:
        return Game(resolved, engine, house_rules=house, reward=reward, seen=rows)
    return NativeGame(resolved, engine, tables, house_rules=house, reward=reward, seen=rows)


class NativeShard:
    """A vector environment's shard of native tables writing into (views of) its buffers:
    ``_Tables``'s interface. Each table's next round seed and dealer are drawn ahead from its
    generator, in the order ``_Tables`` draws them, so that both deal the same rounds."""

    def __init__(self, tables: Any, seen: Seen, coder: Any, rngs: list[np.random.Generator],
                 buffers: dict[str, npt.NDArray[Any]], rows: slice) -> None:  # fmt: skip
        self.tables = tables
        self.seen = seen
        self.coder = coder
        self.rngs = rngs
        self.buffers = buffers
        self.rows = rows
        count = len(rngs)
        self.next_seeds = np.zeros((count, SEED_SIZE), dtype=np.uint8)
        self.next_dealers = np.zeros(count, dtype=np.int32)
        players = seen.variant.players
        for i, rng in enumerate(rngs):
            tables.start(i, rng.bytes(SEED_SIZE), int(rng.integers(players)))
            self._draw(i)
        tables.write_outputs()
        self._encode()

    @classmethod
    def make(cls, engine: Rules, config: dict[str, Any], first: int, count: int,
             buffers: dict[str, npt.NDArray[Any]]) -> NativeShard | None:  # fmt: skip
        """The shard of rows ``first .. first + count``, or None where the engine has no native tables."""
        variant = VARIANTS[config["variant"]]
        rows = slice(first, first + count)
        seen = Seen.zeros(variant, count)
        outputs = (
            buffers["action_mask"][rows],
            buffers["legal_actions"][rows],
            buffers["legal_count"][rows],
            buffers["seat"][rows],
            buffers["rewards"][rows],
            buffers["terminated"][rows].view(np.uint8),
        )
        observation = buffers["observation"][rows] if config["encoding"] == NATIVE_ENCODING else None
        tables = _tables(
            engine, variant, seen, HouseRules(spring=config["spring"]), config["reward"], outputs, observation
        )
        if tables is None:
            return None
        rngs = [table_generator(config["seed"], first + i, config["epoch"]) for i in range(count)]
        return cls(tables, seen, encoding(config["encoding"], variant), rngs, buffers, rows)

    def _draw(self, i: int) -> None:
        rng = self.rngs[i]
        self.next_seeds[i] = np.frombuffer(rng.bytes(SEED_SIZE), dtype=np.uint8)
        self.next_dealers[i] = rng.integers(self.seen.variant.players)

    def step(self) -> None:
        self.tables.step_all(self.buffers["actions"][self.rows], self.next_seeds, self.next_dealers)
        self.settle()

    def serve(self, signals: Any, index: int) -> None:
        """Step this shard each time ``signals`` ask for shard ``index``, until they close
        (``dizhu._engine.ShardSignals``): a thread's whole work, with no interpreter lock held
        from start to end. ``settle`` must follow each step, on the caller's thread."""
        self.tables.serve(signals, index, self.buffers["actions"][self.rows], self.next_seeds, self.next_dealers)

    def settle(self) -> None:
        """The Python part of a step, after the engine's: the next round's seed and dealer of
        every table whose round just ended (its generator's next draws), and the observations
        the engine does not write."""
        for i in np.flatnonzero(self.buffers["terminated"][self.rows]):
            self._draw(int(i))
        self._encode()

    def _encode(self) -> None:
        """The observations the engine did not write, in one numpy call."""
        if self.coder.name != NATIVE_ENCODING:
            self.coder.encode(self.seen, self.buffers["observation"][self.rows])
