"""Native shards stepped on threads of their own (``VectorDouDizhuEnv(workers=k)``).

Each shard has one thread, and that thread does nothing but the engine's step
(``NativeShard.advance``), which holds no interpreter lock from start to end. Everything a
step does in Python (``NativeShard.settle``: the next rounds' seeds) runs on the caller's
thread when it collects the shard. So a shard never waits for the interpreter while the
caller chooses the next actions, and the caller's thread hands work over through two queues
rather than an executor's futures: at 64 tables a shard's step is about 0.2 ms, so what a
hand-over costs decides whether two shards beat one (docs/benchmarks.md, "Training
environments").
"""

from __future__ import annotations

import queue
import threading
import weakref
from collections.abc import Sequence

from dizhu.env.native import NativeShard

__all__ = ["ShardThreads"]

#: What a thread sends back: its shard, and what the step raised (None: done).
_Outcome = tuple[int, BaseException | None]


def _serve(shard: NativeShard, index: int, inbox: queue.SimpleQueue[bool], done: queue.SimpleQueue[_Outcome]) -> None:
    """A shard's thread: one step per ``True`` in its inbox, until ``False``."""
    while inbox.get():
        try:
            shard.advance()
        except BaseException as error:  # handed to the caller's thread, which raises it
            done.put((index, error))
        else:
            done.put((index, None))


def _stop(inboxes: Sequence[queue.SimpleQueue[bool]], threads: Sequence[threading.Thread]) -> None:
    for inbox in inboxes:
        inbox.put(False)
    for thread in threads:
        thread.join()


class ShardThreads:
    """``start(i)`` begins shard ``i``'s step on its thread; ``collect()`` waits for the next
    shard whose step is done and settles it on this thread.

    The threads are daemons stopped by ``close()``, or at the interpreter's exit (before it
    finalises, so that no step is cut short inside the engine) for an environment never closed.
    """

    def __init__(self, shards: Sequence[NativeShard]) -> None:
        self.shards = list(shards)
        self._done: queue.SimpleQueue[_Outcome] = queue.SimpleQueue()
        self._inboxes: list[queue.SimpleQueue[bool]] = [queue.SimpleQueue() for _ in self.shards]
        self._threads = [
            threading.Thread(
                target=_serve, args=(shard, i, self._inboxes[i], self._done), name=f"dizhu-tables-{i}", daemon=True
            )
            for i, shard in enumerate(self.shards)
        ]
        for thread in self._threads:
            thread.start()
        self._stop = weakref.finalize(self, _stop, self._inboxes, self._threads)

    def start(self, index: int) -> None:
        self._inboxes[index].put(True)

    def collect(self) -> _Outcome:
        """The next shard whose step is done, settled unless its step raised; and what it raised."""
        index, error = self._done.get()
        if error is None:
            self.shards[index].settle()
        return index, error

    def close(self) -> None:
        """Stop the threads (each finishes the step it has begun first)."""
        self._stop()
