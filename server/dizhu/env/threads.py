"""Native shards stepped on threads of their own (``VectorDouDizhuEnv(workers=k)``).

Each shard has one thread, which spends its whole life inside the engine
(``NativeShard.serve``): it waits there for the shard's next step, plays it, and says it is
done, all without the interpreter's lock. The caller's thread asks for steps and collects them
through the engine's ``ShardSignals`` (a mutex and a condition variable in Rust), and does the
Python part of a step itself (``NativeShard.settle``: the next rounds' seeds) when it collects
the shard. So no hand-over waits for the interpreter: at 128 tables a shard's step takes about
0.2 ms, and a hand-over through Python queues or an executor's futures, which needs the
interpreter on both sides, cost about as much (docs/benchmarks.md, "Training environments").
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from typing import Any

from dizhu.env.engine import shard_signals
from dizhu.env.native import NativeShard

__all__ = ["ShardThreads"]


def _stop(signals: Any, threads: Sequence[threading.Thread]) -> None:
    signals.close()
    for thread in threads:
        thread.join()


class ShardThreads:
    """``start(i)`` begins shard ``i``'s step on its thread; ``collect()`` waits for the next
    shard whose step is done and settles it on this thread.

    The threads are daemons stopped by ``close()``, or at the interpreter's exit (before it
    finalises, so that no thread is inside the engine then) for an environment never closed.
    """

    def __init__(self, shards: Sequence[NativeShard]) -> None:
        self.shards = list(shards)
        self._signals = signals = shard_signals(len(self.shards))
        self._threads = [
            threading.Thread(target=shard.serve, args=(signals, i), name=f"dizhu-tables-{i}", daemon=True)
            for i, shard in enumerate(self.shards)
        ]
        for thread in self._threads:
            thread.start()
        self._stop = weakref.finalize(self, _stop, signals, self._threads)

    def start(self, index: int) -> None:
        self._signals.ask(index)

    def collect(self) -> tuple[int, BaseException | None]:
        """The next shard whose step is done, settled unless its step raised; and what it raised."""
        index, error = self._signals.collect()
        if error is None:
            self.shards[index].settle()
        return index, error

    def close(self) -> None:
        """Stop the threads (each finishes the step it has begun first)."""
        self._stop()
