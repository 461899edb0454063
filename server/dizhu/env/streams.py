"""Each table's random stream in a vector environment: its round seeds and dealers.

Table ``i`` of seed ``s`` draws from a numpy generator seeded with the 256 bits of
``derive_seed(u64be(s), "vector-env/table", i)`` (docs/deal.md's SHA-256 derivation; a reset
that starts every table afresh uses the label ``"vector-env/table/reset-k"`` for its ``k``-th
such reset). Distinct (seed, table) pairs hash distinct inputs, so no two tables of any seeds
share a stream: seed 1 is not seed 0 shifted by a table, as ``seed + i`` would make it.
"""

from __future__ import annotations

import numpy as np

from dizhu.rules import derive_seed

__all__ = ["MAX_SEED", "table_generator"]

#: Seeds are unsigned 64-bit integers.
MAX_SEED = 2**64 - 1
#: Tables are numbered with 32 bits, as ``derive_seed`` writes its index.
_MAX_TABLES = 2**32


def table_generator(seed: int, table: int, epoch: int = 0) -> np.random.Generator:
    """The generator of table ``table`` for ``seed`` (``epoch``: how many resets started every table afresh)."""
    if not 0 <= seed <= MAX_SEED:
        raise ValueError(f"a vector environment's seed is an integer from 0 to 2**64 - 1, not {seed}")
    if not 0 <= table < _MAX_TABLES:
        raise ValueError(f"table {table} is out of range")
    label = "vector-env/table" if not epoch else f"vector-env/table/reset-{epoch}"
    digest = derive_seed(seed.to_bytes(8, "big"), label, table)
    return np.random.default_rng(np.frombuffer(digest, dtype=np.uint32))
