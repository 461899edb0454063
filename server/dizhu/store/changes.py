"""What a write asks of the table store: a table's :class:`Change` and the :class:`Answer` it records."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Answer", "Change"]


@dataclass(frozen=True, slots=True)
class Answer:
    """The answer a write records for ``(principal, request_id)``, for a retry of the request to get back.

    Without a ``request_id`` nothing is recorded; with one and ``data`` None, the write only
    checks that the request has no answer yet.
    """

    principal: str
    request_id: str | None = None
    data: bytes | None = None


@dataclass(frozen=True, slots=True)
class Change:
    """One compare-and-set of a table (:meth:`TableStore.save`): what it expects, what it writes.

    The store writes ``state`` at ``new_version`` only if the table is at ``expected_version``
    and ``answer``'s request has no answer yet; then it appends ``events``, keeps each
    ``(name, data)`` of ``records`` and deletes those named in ``drop_records``.
    """

    table_id: str
    expected_version: int
    new_version: int
    state: bytes
    events: Sequence[bytes]
    answer: Answer
    #: Every key of the table expires after the store's ``finished_ttl_s`` (False: never).
    finished: bool = False
    records: Sequence[tuple[str, bytes]] = ()
    drop_records: Sequence[str] = ()
    #: For a change decided without reading the table: the stored state it was decided on, and
    #: the seats last announced connected; the write is a conflict unless both still hold.
    decided_on: bytes | None = None
    presence: int | None = None
    #: The writer's clock, the events' time (None: Redis' clock).
    time_ms: int | None = None
