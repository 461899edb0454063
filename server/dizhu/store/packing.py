"""Redis commands packed by hiredis (C) instead of redis-py's Python packer.

redis-py's asyncio connections pack every command in Python, argument by argument: about
11 µs for the referee's compare-and-set (some twenty arguments, a few KiB), 2 µs with
``hiredis.pack_command``, which writes the same bytes. A command hiredis cannot pack the way
redis-py would -- a first argument holding several words (``SCRIPT LOAD``), an argument of
another type (redis-py refuses some, e.g. ``None``, and takes others, e.g. ``bytearray``),
a connection with another encoding than UTF-8 -- goes to redis-py's packer as before.
"""

from __future__ import annotations

from typing import Any

import hiredis
from redis.asyncio.connection import AbstractConnection

__all__ = ["hiredis_packing"]

_UTF8 = frozenset({"utf-8", "utf8"})


class _HiredisPacking(AbstractConnection):
    """Mixed in before a connection class: ``pack_command`` through hiredis where it packs the same."""

    def pack_command(self, *args: Any) -> list[bytes]:
        first = args[0] if args else None
        encoder = self.encoder
        if (
            isinstance(first, str)
            and " " not in first
            and encoder.encoding.lower() in _UTF8
            and encoder.encoding_errors == "strict"
        ):
            try:
                return [hiredis.pack_command(args)]
            except (TypeError, ValueError):
                pass  # redis-py's packer packs it, or refuses it with its own error
        return super().pack_command(*args)


_PACKING: dict[type[AbstractConnection], type[AbstractConnection]] = {}


def hiredis_packing(connection_class: type[AbstractConnection]) -> type[AbstractConnection]:
    """``connection_class`` with its commands packed by hiredis (see the module docstring)."""
    if issubclass(connection_class, _HiredisPacking):
        return connection_class
    packing = _PACKING.get(connection_class)
    if packing is None:
        packing = _PACKING[connection_class] = type(connection_class.__name__, (_HiredisPacking, connection_class), {})
    return packing
