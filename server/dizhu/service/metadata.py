"""Reading credentials from call metadata: ``authorization: Bearer <token>`` and ``x-api-key``."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
from collections.abc import Collection

from dizhu.referee.errors import Unauthenticated
from dizhu.service.errors import ServicerContext

__all__ = ["Credentials", "api_principal", "credentials"]

_BEARER = "bearer "
_MAX_TOKEN = 256
_MAX_API_KEY = 256


def _metadata(context: ServicerContext, key: str) -> list[str]:
    values = []
    for item_key, value in context.invocation_metadata() or ():
        if item_key == key:
            values.append(value.decode(errors="replace") if isinstance(value, bytes) else value)
    return values


@dataclasses.dataclass(frozen=True, slots=True)
class Credentials:
    """The ``authorization`` metadata a call carried, judged only when the table is known.

    A malformed header is refused with UNAUTHENTICATED, but only after an unknown table has
    been refused with TABLE_NOT_FOUND (the contract's order of faults).
    """

    #: Every ``authorization`` value sent.
    values: tuple[str, ...] = ()

    def token(self) -> str | None:
        """The bearer token sent, None if none; UNAUTHENTICATED if the header is malformed."""
        if not self.values:
            return None
        if len(self.values) > 1:
            raise Unauthenticated("send one authorization header")
        value = self.values[0]
        if not value.lower().startswith(_BEARER) or not 0 < len(value) - len(_BEARER) <= _MAX_TOKEN:
            raise Unauthenticated("the authorization metadata must be 'Bearer <token>'")
        return value[len(_BEARER) :].strip()

    @property
    def answer_principal(self) -> str:
        """Whose answers a request may read back: a hash of what was sent, never the token itself."""
        if not self.values:
            return "anon"
        try:
            sent = self.token() or ""
        except Unauthenticated:
            sent = "malformed:" + "\n".join(self.values)
        return hashlib.sha256(sent.encode()).hexdigest()[:32]


def credentials(context: ServicerContext) -> Credentials:
    """The call's credentials, not yet judged."""
    return Credentials(tuple(_metadata(context, "authorization")))


def api_principal(context: ServicerContext, api_keys: Collection[str], *, anonymous: bool = True) -> str:
    """Who creates a table: a hash of the API key sent, or "public" for anyone.

    With API keys configured, a valid one is needed. Without, anyone may create tables if
    ``anonymous`` (the server listens on loopback, or was told to allow it), else nobody.
    """
    if not api_keys:
        if anonymous:
            return "public"
        raise Unauthenticated(
            "this server creates tables for API keys only, and has none configured (see docs/security.md)"
        )
    sent = _metadata(context, "x-api-key")
    if (
        len(sent) != 1
        or len(sent[0]) > _MAX_API_KEY
        or not any(hmac.compare_digest(sent[0].encode(), key.encode()) for key in api_keys)
    ):
        raise Unauthenticated("CreateTable needs a valid x-api-key")
    return hashlib.sha256(sent[0].encode()).hexdigest()[:32]
