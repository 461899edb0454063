"""Bearer tokens derived from a server secret, so that nothing stored can give one back.

A token is ``HMAC-SHA256(key, "dizhu/token/v1" || table id || nonce)`` in URL-safe base64,
where ``nonce`` is 16 fresh random bytes (drawn again for a token that would begin with "-",
which command lines would read as a flag). What a table keeps of a token is its SHA-256 only
(``auth.hash_token``), and what a recorded answer keeps (so that a retried CreateTable or
JoinTable can be answered again) is its *recipe*: the key's id and the nonce. A recipe is
worthless without the key, which never leaves the referee processes: reading Redis (keys,
values, backups, ``MONITOR``) yields no token.

Rotation: :class:`TokenKeys` holds the current key, which mints every new token, and any
number of previous keys, which only re-mint tokens from recipes. Tokens themselves are
checked against the stored hash, so a token keeps working for its table's life whatever the
keys become; an answer whose recipe names a key no longer configured can no longer be given
again (docs/security.md, "Rotating the server secret").
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import secrets
from collections.abc import Sequence
from typing import Final

__all__ = ["MIN_SECRET_LENGTH", "Minted", "TokenKeys", "key_id"]

#: The shortest secret accepted, in bytes (UTF-8): 32 random bytes, or 64 hex digits, are recommended.
MIN_SECRET_LENGTH: Final = 32
_NONCE_BYTES: Final = 16
_TOKEN_DOMAIN: Final = b"dizhu/token/v1\0"
_RECIPE_PREFIX: Final = "recipe:"


def key_id(secret: bytes) -> str:
    """A short public name of a key (8 hex digits of a hash of it), written into recipes."""
    return hashlib.sha256(b"dizhu/key-id/v1\0" + secret).hexdigest()[:8]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclasses.dataclass(frozen=True, slots=True)
class Minted:
    """A fresh token and the recipe that re-mints it (with the same key)."""

    token: str
    recipe: str = dataclasses.field(repr=False)


class TokenKeys:
    """The server's token keys: ``secrets[0]`` mints, every one re-mints (see the module docstring)."""

    def __init__(self, secrets_: Sequence[bytes]) -> None:
        if not secrets_:
            raise ValueError("at least one secret is needed")
        for secret in secrets_:
            if len(secret) < MIN_SECRET_LENGTH:
                raise ValueError(f"a server secret has at least {MIN_SECRET_LENGTH} bytes")
        self._keys = {key_id(secret): secret for secret in secrets_}
        self.current_id: Final = key_id(secrets_[0])

    @classmethod
    def ephemeral(cls) -> TokenKeys:
        """Keys made up for this process only: answers minted with them die with it."""
        return cls([secrets.token_bytes(32)])

    def __repr__(self) -> str:
        return f"TokenKeys(current={self.current_id!r}, known={sorted(self._keys)!r})"

    def _token(self, secret: bytes, table_id: str, nonce: bytes) -> str:
        return _b64(hmac.digest(secret, _TOKEN_DOMAIN + table_id.encode() + b"\0" + nonce, "sha256"))

    def mint(self, table_id: str) -> Minted:
        """A new token for ``table_id``, with its recipe."""
        while True:
            nonce = secrets.token_bytes(_NONCE_BYTES)
            token = self._token(self._keys[self.current_id], table_id, nonce)
            # A token follows a flag on command lines (``dizhu bot --token TOKEN``), where a
            # leading "-" reads as another flag: one nonce in 64 is drawn again.
            if not token.startswith("-"):
                return Minted(token, f"{_RECIPE_PREFIX}{self.current_id}.{_b64(nonce)}")

    def remint(self, table_id: str, recipe: str) -> str | None:
        """The token ``recipe`` was minted as for ``table_id``; None if its key is no longer known."""
        key, _, nonce = recipe.removeprefix(_RECIPE_PREFIX).partition(".")
        secret = self._keys.get(key)
        if secret is None or not recipe.startswith(_RECIPE_PREFIX):
            return None
        return self._token(secret, table_id, _unb64(nonce))
