"""Bearer tokens: how they are stored (hashed) and resolved to a role at a table.

Tokens are minted by ``dizhu.referee.tokens`` (derived from the server's secret); a table
keeps only their SHA-256. Resolving compares against every hash of the table in constant
time, so timing tells nothing about which token (if any) was close.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import hmac

from dizhu.referee.errors import PermissionDenied, Unauthenticated
from dizhu.referee.table import TableState

__all__ = ["Principal", "Role", "hash_token", "resolve"]


class Role(enum.Enum):
    """Who is calling."""

    #: No token: may read the public view.
    SPECTATOR = "spectator"
    #: The creator's token: admin calls (CloseTable) and the public view.
    CREATOR = "creator"
    #: A seat's token: that seat's actions and hand.
    SEAT = "seat"


@dataclasses.dataclass(frozen=True, slots=True)
class Principal:
    role: Role
    seat: int | None = None

    def require_seat(self, doing: str) -> int:
        """The caller's seat; PERMISSION_DENIED for a creator, UNAUTHENTICATED for no token."""
        if self.role is Role.SEAT and self.seat is not None:
            return self.seat
        if self.role is Role.CREATOR:
            raise PermissionDenied(f"the creator's token cannot {doing}; use a seat token")
        raise Unauthenticated(f"{doing} needs a seat token in the authorization metadata")

    def require_creator(self, doing: str) -> None:
        if self.role is Role.CREATOR:
            return
        if self.role is Role.SEAT:
            raise PermissionDenied(f"only the table's creator can {doing}")
        raise Unauthenticated(f"{doing} needs the creator's token in the authorization metadata")


def hash_token(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def resolve(table: TableState, token: str | None) -> Principal:
    """The caller's role at ``table``; UNAUTHENTICATED for a token that belongs elsewhere."""
    if token is None:
        return Principal(Role.SPECTATOR)
    digest = hash_token(token)
    found = Principal(Role.CREATOR) if hmac.compare_digest(digest, table.creator_hash) else None
    for index, seat in enumerate(table.seats):
        if seat.token_hash is not None and hmac.compare_digest(digest, seat.token_hash):
            found = Principal(Role.SEAT, index)
    if found is None:
        raise Unauthenticated("the token is not valid for this table", metadata={"table_id": table.table_id})
    return found
