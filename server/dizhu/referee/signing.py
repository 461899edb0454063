"""Signed replays: the referee's Ed25519 keys, a replay's signature, and checking one.

A referee deployment holds one signing key (Ed25519, through ``cryptography``); it signs
every round's record when the round ends. The signature covers the record's *canonical
form*: the JSON document without its ``signature`` member, serialised by RFC 8785 (JSON
Canonicalization Scheme). Canonical rather than the bytes as stored, so that the record
stays verifiable however it is re-indented, re-ordered or re-encoded on its way (a file
saved with another editor, a pretty-printer, a JSON column of a database); RFC 8785 because
it is a published standard with implementations in many languages, so that anyone can
check a record without this code. The signature travels in the record itself::

    "signature": {"algorithm": "ed25519", "key_id": "<16 hex digits>", "value": "<base64>"}

A key's id is the first 8 bytes of SHA-256 of its raw 32-byte public key, in hex. Rotation:
the current key signs new rounds; retired keys are published beside it (public halves only)
so that older records stay verifiable. What a signature proves and what it does not is in
``docs/replay.md`` and ``docs/security.md``.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import enum
import hashlib
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import orjson
import rfc8785
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

__all__ = [
    "ALGORITHM",
    "SIGNATURE_FIELD",
    "Authenticity",
    "PublicKey",
    "SignatureCheck",
    "SigningKeys",
    "canonical_form",
    "check_signature",
    "key_id",
    "load_or_create_private_key",
    "new_private_key",
    "parse_public_keys",
    "replay_digest",
]

ALGORITHM: Final = "ed25519"
#: The record's member that holds its signature (left out of the canonical form).
SIGNATURE_FIELD: Final = "signature"
_PEM_BLOCK = re.compile(rb"-----BEGIN (?:PUBLIC|PRIVATE) KEY-----.+?-----END (?:PUBLIC|PRIVATE) KEY-----", re.DOTALL)


def _raw(public_key: Ed25519PublicKey) -> bytes:
    return public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id(public_key: Ed25519PublicKey) -> str:
    """The key's public name: the first 8 bytes of SHA-256 of its raw public key, in hex."""
    return hashlib.sha256(_raw(public_key)).hexdigest()[:16]


@dataclasses.dataclass(frozen=True, slots=True)
class PublicKey:
    """A referee's public key and its id."""

    key_id: str
    key: Ed25519PublicKey
    #: Whether it signs new rounds (False: retired, it signed older ones).
    current: bool = True

    @property
    def raw(self) -> bytes:
        """The 32-byte public key."""
        return _raw(self.key)

    @property
    def pem(self) -> str:
        """The key as PEM (SubjectPublicKeyInfo), the form ``dizhu verify --key`` reads."""
        spki = serialization.PublicFormat.SubjectPublicKeyInfo
        return self.key.public_bytes(serialization.Encoding.PEM, spki).decode()


def _unsigned(document: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in document.items() if key != SIGNATURE_FIELD}


def canonical_form(document: Mapping[str, Any]) -> bytes:
    """The bytes a replay's signature covers: the document without ``signature``, by RFC 8785.

    Raises ValueError for a document RFC 8785 cannot serialise (e.g. an integer beyond 2^53).
    """
    try:
        return rfc8785.dumps(_unsigned(document))
    except rfc8785.CanonicalizationError as error:
        raise ValueError(f"no canonical form: {error}") from None


def _referee_canonical_form(document: Mapping[str, Any]) -> bytes:
    """:func:`canonical_form` of a record the referee wrote, fast.

    The referee's records hold only objects with ASCII keys, arrays, ASCII strings without
    control characters, small integers, booleans and null; for those, orjson's sorted compact
    output is byte for byte RFC 8785's (the tests check it on real and generated records).
    Measured (``bench/bench_signing.py``, ``docs/benchmarks.md``): about 20 us for a
    three-player round's record, against about 0.9 ms for the pure-Python RFC 8785 serialiser,
    on the move that ends the round. Verifiers use :func:`canonical_form`.
    """
    return orjson.dumps(_unsigned(document), option=orjson.OPT_SORT_KEYS)


def replay_digest(text: str) -> str:
    """SHA-256 of a replay's canonical form, in hex: the record's name, whatever its formatting."""
    return hashlib.sha256(canonical_form(orjson.loads(text))).hexdigest()


class SigningKeys:
    """The referee's signing key and the public halves of its retired keys."""

    def __init__(self, current: Ed25519PrivateKey, retired: Sequence[Ed25519PublicKey] = ()) -> None:
        self._private = current
        ours = PublicKey(key_id(current.public_key()), current.public_key())
        others = [PublicKey(key_id(key), key, current=False) for key in retired]
        #: Every public key, the current one first; a retired key equal to the current one is left out.
        self.public_keys: tuple[PublicKey, ...] = (ours, *(key for key in others if key.key_id != ours.key_id))

    @classmethod
    def ephemeral(cls) -> SigningKeys:
        """A key made up for this process (tests, and servers started without a key file)."""
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_pem(cls, private_pem: bytes, retired_pem: bytes = b"") -> SigningKeys:
        """The key from its PEM (PKCS#8), retired keys from a PEM of public (or private) keys.

        Raises ValueError when a PEM holds no Ed25519 key.
        """
        private = serialization.load_pem_private_key(private_pem, password=None)
        if not isinstance(private, Ed25519PrivateKey):
            raise ValueError("the signing key is not an Ed25519 private key")
        return cls(private, [key.key for key in parse_public_keys(retired_pem)] if retired_pem else ())

    @property
    def key_id(self) -> str:
        """The current key's id."""
        return self.public_keys[0].key_id

    def public_pem(self) -> str:
        """Every public key as PEM, the current one first (``dizhu serve --print-public-key``)."""
        return "".join(key.pem for key in self.public_keys)

    def sign_document(self, document: dict[str, Any]) -> dict[str, Any]:
        """``document`` (a replay) with its ``signature`` by the current key (replacing any)."""
        value = self._private.sign(_referee_canonical_form(document))
        signature = {"algorithm": ALGORITHM, "key_id": self.key_id, "value": base64.b64encode(value).decode()}
        return {**_unsigned(document), SIGNATURE_FIELD: signature}

    def sign(self, replay_text: str) -> str:
        """A replay's JSON, signed: the same record with its ``signature`` (indented like the referee's)."""
        return orjson.dumps(self.sign_document(orjson.loads(replay_text)), option=orjson.OPT_INDENT_2).decode()


def parse_public_keys(pem: bytes) -> tuple[PublicKey, ...]:
    """Every key of a PEM file (public keys; of a private key, its public half), in order.

    Raises ValueError when the file holds no key, or a key that is not Ed25519.
    """
    blocks = _PEM_BLOCK.findall(pem)
    if not blocks:
        raise ValueError("no PEM public key in it")
    found: list[PublicKey] = []
    for block in blocks:
        try:
            if b"PRIVATE" in block.split(b"\n", 1)[0]:
                key: object = serialization.load_pem_private_key(block, password=None).public_key()
            else:
                key = serialization.load_pem_public_key(block)
        except (ValueError, TypeError) as error:  # TypeError: an encrypted private key
            raise ValueError(f"a PEM block in it is no usable key: {error}") from None
        if not isinstance(key, Ed25519PublicKey):
            raise ValueError("a key in it is not an Ed25519 key")
        found.append(PublicKey(key_id(key), key, current=not found))
    return tuple(found)


def new_private_key() -> bytes:
    """A fresh Ed25519 private key as PEM (PKCS#8, unencrypted)."""
    return Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def load_or_create_private_key(path: Path) -> bytes:
    """The PEM of the signing key at ``path``, made (and written, readable by its owner only) if absent."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        pass
    pem = new_private_key()
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        # O_EXCL: two processes starting at once keep the first one's key, never a mix.
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_bytes()
    with os.fdopen(descriptor, "wb") as file:
        file.write(pem)
    return pem


class Authenticity(enum.Enum):
    """What checking a replay's signature found."""

    #: No key was given: authenticity was not checked.
    NOT_CHECKED = "not checked"
    #: The record carries no signature.
    UNSIGNED = "unsigned"
    #: Signed, by a key that is none of the keys given.
    UNKNOWN_KEY = "signed by an unknown key"
    #: Signed by a key given, but the signature does not match the record: it was altered.
    INVALID = "signature invalid"
    #: Signed by a key given, and the signature matches the record exactly.
    VALID = "signed"


@dataclasses.dataclass(frozen=True, slots=True)
class SignatureCheck:
    """The outcome of :func:`check_signature`; ``key_id`` is the record's (None when unsigned)."""

    authenticity: Authenticity
    key_id: str | None = None


def check_signature(document: Mapping[str, Any], keys: Iterable[PublicKey] | None) -> SignatureCheck:
    """Check a replay document's signature against ``keys`` (None: no key given, nothing checked)."""
    signature = document.get(SIGNATURE_FIELD)
    if not isinstance(signature, dict):
        return SignatureCheck(Authenticity.NOT_CHECKED if keys is None else Authenticity.UNSIGNED)
    signer = signature.get("key_id")
    signer = signer if isinstance(signer, str) else None
    if keys is None:
        return SignatureCheck(Authenticity.NOT_CHECKED, signer)
    known = {key.key_id: key.key for key in keys}
    if signer not in known:
        return SignatureCheck(Authenticity.UNKNOWN_KEY, signer)
    try:
        if signature.get("algorithm") != ALGORITHM:
            raise InvalidSignature
        known[signer].verify(base64.b64decode(str(signature.get("value")), validate=True), canonical_form(document))
    except (InvalidSignature, binascii.Error, ValueError):
        return SignatureCheck(Authenticity.INVALID, signer)
    return SignatureCheck(Authenticity.VALID, signer)
