"""Loaded into the referee ``bench_soak.py --tracemalloc`` starts (its directory is put first on
``PYTHONPATH``, with ``PYTHONTRACEMALLOC=1``); nothing else loads it.

On each SIGUSR2 the referee appends to the file ``DIZHU_SOAK_PROBE`` names: the sizes of its
per-process caches (each ``functools.lru_cache`` of dizhu's modules, and every object with a
bound of tables), then the 15 source lines whose live memory grew most since the previous
SIGUSR2 (tracemalloc). The referee's own memory only: the load runs in another process.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import tracemalloc
from types import FrameType

_OUT = os.environ.get("DIZHU_SOAK_PROBE")
#: The objects that hold per-table memory, and how each tells its count of entries.
_BOUNDED = {
    "DecodedTables": len,
    "_GrowingLists": len,
    "_RoundDigests": len,
    "TableIndexing": lambda kept: kept.marks_kept,
    "Presence": lambda kept: kept.refreshes_kept,
}
#: Entries of those caches, counted one by one: more of them than their cache holds are kept elsewhere.
_ENTRIES = ("_GrowingList", "_RoundDigest")
_previous: list[tracemalloc.Snapshot] = []


def _cache_sizes() -> list[str]:
    lines = []
    for name, module in sorted(sys.modules.items()):
        if name.startswith("dizhu.") and module is not None:
            for attribute, value in sorted(vars(module).items()):
                if callable(getattr(value, "cache_info", None)):
                    stats = value.cache_info()
                    lines.append(f"  {name}.{attribute}: {stats.currsize:,} of {stats.maxsize:,}")
    # The referee freezes what it made while starting (gc.freeze), which hides it from
    # gc.get_objects: thawed for the look, everything is frozen again after it.
    gc.unfreeze()
    found = gc.get_objects()
    gc.freeze()
    for kept in found:
        count = _BOUNDED.get(type(kept).__name__)
        if count is not None and type(kept).__module__.startswith("dizhu."):
            lines.append(f"  {type(kept).__module__}.{type(kept).__name__}: {count(kept):,}")
    for kind in _ENTRIES:
        alive = [kept for kept in found if type(kept).__name__ == kind]
        holders = sorted({type(holder).__name__ for held in alive[:50] for holder in gc.get_referrers(held)} - {"list"})
        lines.append(f"  {kind} alive: {len(alive):,}, held by {', '.join(holders)}")
    return lines


def _dump(_signal: int, _frame: FrameType | None) -> None:
    # Raised here, an error would surface wherever the referee's main thread was: written down instead.
    try:
        _write_dump()
    except Exception as error:
        if _OUT:
            with open(_OUT, "a") as out:
                out.write(f"--- dump failed: {error!r}\n")


def _write_dump() -> None:
    snapshot = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
    traced_mib = tracemalloc.get_traced_memory()[0] / 2**20
    lines = [f"--- traced {traced_mib:.1f} MiB; entries kept:", *_cache_sizes()]
    if _previous:
        lines.append("  grew most since the previous dump:")
        lines.extend(
            f"    {stat.size_diff / 1024:+9.1f} KiB {stat.count_diff:+7d} blocks  {stat.traceback}"
            for stat in snapshot.compare_to(_previous[-1], "lineno")[:15]
        )
    _previous[:] = [snapshot]
    if _OUT:
        with open(_OUT, "a") as out:
            out.write("\n".join(lines) + "\n")


if _OUT and tracemalloc.is_tracing():
    signal.signal(signal.SIGUSR2, _dump)
