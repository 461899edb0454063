"""How events are kept in the table's stream, so each viewer later gets only what it may see.

A stored event is a small envelope of serialized ``TableEvent`` messages: the spectators'
version first, then, only for events that differ per seat (a deal, which carries the
seat's own hand), one version per seat::

    u8 n | n x (u32be length | TableEvent bytes)      n = 1, or 1 + players

``sequence`` is not stored: it is the stream entry's id, filled in when read, as are the
``time`` and ``write_id`` the store stamped the entry with (:class:`~dizhu.store.StoredEvent`):
the time encoded by the writer is only its proposal, kept for entries stored without a stamp.
"""

from __future__ import annotations

import struct

from dizhu.referee import events as ev
from dizhu.service.convert import event_to_proto
from dizhu.v1 import events_pb2

__all__ = ["decode_event", "encode_event", "encode_public"]

_LENGTH = struct.Struct(">I")


def encode_event(event: ev.TableEvent, players: int, version: int, time_ms: int) -> bytes:
    viewers: list[int | None] = [None]
    if isinstance(event, ev.DealStarted):
        viewers += list(range(players))
    parts = [bytes([len(viewers)])]
    for viewer in viewers:
        message = event_to_proto(event, viewer)
        message.version = version
        message.time.FromMilliseconds(time_ms)
        body = message.SerializeToString()
        parts += [_LENGTH.pack(len(body)), body]
    return b"".join(parts)


def encode_public(message: events_pb2.TableEvent) -> bytes:
    """A stored event that every viewer sees alike (e.g. a seat's presence)."""
    body = message.SerializeToString()
    return bytes([1]) + _LENGTH.pack(len(body)) + body


def decode_event(
    payload: bytes, viewer: int | None, sequence: int, time_ms: int = 0, write: int = 0
) -> events_pb2.TableEvent:
    """The version of a stored event that ``viewer`` (a seat, or None) may see, with the
    store's ``sequence`` and stamps (``time_ms`` 0: the time encoded by the writer)."""
    count = payload[0]
    wanted = 0 if viewer is None or count == 1 else 1 + viewer
    offset = 1
    for index in range(count):
        (length,) = _LENGTH.unpack_from(payload, offset)
        offset += _LENGTH.size
        if index == wanted:
            message: events_pb2.TableEvent = events_pb2.TableEvent.FromString(payload[offset : offset + length])
            message.sequence = sequence
            message.write_id = write
            if time_ms:
                message.time.FromMilliseconds(time_ms)
            return message
        offset += length
    raise ValueError("stored event has no version for this viewer")
