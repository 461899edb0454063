"""The contract's limits on the ids a request names: its table's, and its own (``request_id``)."""

from __future__ import annotations

from typing import Final

from dizhu.referee.errors import InvalidArgument
from dizhu.store.keys import validate_request_id, validate_table_id

__all__ = ["MAX_REQUEST_ID", "MAX_TABLE_ID", "MIN_SECRET_REQUEST_ID", "valid_request_id", "valid_table_id"]

#: The contract's limits (the store's keys would take up to 128 characters).
MAX_REQUEST_ID: Final = 64
MAX_TABLE_ID: Final = 64
#: The request id of CreateTable and JoinTable is a secret (it alone fetches their answer,
#: tokens included, again): at least this long, from a random source (docs/security.md).
MIN_SECRET_REQUEST_ID: Final = 16


def valid_table_id(table_id: str) -> str:
    if len(table_id) > MAX_TABLE_ID:
        raise InvalidArgument("table_id", f"a table id is at most {MAX_TABLE_ID} characters")
    try:
        return validate_table_id(table_id)
    except ValueError:
        raise InvalidArgument("table_id", f"a table id is 1..{MAX_TABLE_ID} characters of [A-Za-z0-9._:-]") from None


def valid_request_id(request_id: str, *, secret: bool = False) -> str:
    if not request_id:
        raise InvalidArgument("request_id", "every change needs a request_id (a fresh UUID per decision)")
    shortest = MIN_SECRET_REQUEST_ID if secret else 1
    try:
        if not shortest <= len(request_id) <= MAX_REQUEST_ID:
            raise ValueError(request_id)
        return validate_request_id(request_id)
    except ValueError:
        raise InvalidArgument(
            "request_id",
            f"a request id is {shortest}..{MAX_REQUEST_ID} printable ASCII characters"
            + (" from a random source (a UUID4): it is the secret that fetches this answer again" if secret else ""),
        ) from None
