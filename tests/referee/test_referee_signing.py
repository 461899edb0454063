"""The signing of round records: keys and their ids, the canonical form, the signature check.

The fast canonical form the referee signs with must be RFC 8785's byte for byte on every
record it can write (a property over generated documents of that shape); every check of a
signature must end in an answer, never an exception, whatever the document holds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dizhu.cli import build_parser
from dizhu.config import config_from_args
from dizhu.referee.signing import (
    Authenticity,
    SigningKeys,
    _referee_canonical_form,
    canonical_form,
    check_signature,
    load_or_create_private_key,
    new_private_key,
    parse_public_keys,
    replay_digest,
)

# What the referee's records hold: ASCII keys and strings without control characters,
# integers well inside RFC 8785's range, booleans, null, arrays and objects.
_TEXT = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=12)
_LEAVES = st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | _TEXT
_DOCUMENTS = st.recursive(
    _LEAVES, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_TEXT, inner, max_size=5), max_leaves=16
)

_RECORD = {"schema": "dizhu.replay/v1", "round": 1, "deals": [{"hands": ["3c 4d", "5h"]}], "result": {"stake": 2}}


def _args(tmp_path: Path, *flags: str) -> argparse.Namespace:
    return build_parser().parse_args(["serve", "--data-dir", str(tmp_path / "data"), *flags])


class TestCanonicalForm:
    @settings(max_examples=100, deadline=None)
    @given(st.dictionaries(_TEXT, _DOCUMENTS, max_size=6))
    @example({"signature": None, "round": 1})  # a generated key may be the member the form leaves out
    def test_the_referees_fast_form_is_rfc_8785s_on_every_document_of_its_shape(self, document: dict[str, Any]) -> None:
        unsigned = {key: value for key, value in document.items() if key != "signature"}
        assert _referee_canonical_form(document) == rfc8785.dumps(unsigned)

    def test_the_signature_member_is_left_out_and_the_order_of_members_does_not_matter(self) -> None:
        reordered = dict(reversed(list(_RECORD.items())))
        assert canonical_form({**_RECORD, "signature": {"value": "x"}}) == canonical_form(reordered)

    def test_the_digest_is_sha256_of_the_canonical_form(self) -> None:
        text = json.dumps(_RECORD, indent=4)
        assert replay_digest(text) == hashlib.sha256(rfc8785.dumps(_RECORD)).hexdigest()


class TestSignatureCheck:
    def test_a_signed_record_is_valid_with_its_key_and_unknown_with_another(self) -> None:
        keys = SigningKeys.ephemeral()
        signed = keys.sign_document(_RECORD)
        assert signed["signature"]["key_id"] == keys.key_id
        assert check_signature(signed, keys.public_keys).authenticity is Authenticity.VALID
        other = SigningKeys.ephemeral().public_keys
        assert check_signature(signed, other).authenticity is Authenticity.UNKNOWN_KEY
        assert check_signature(signed, None).authenticity is Authenticity.NOT_CHECKED
        assert check_signature(_RECORD, keys.public_keys).authenticity is Authenticity.UNSIGNED

    @pytest.mark.parametrize(
        "tamper",
        [
            lambda d: d["result"].update(stake=3),
            lambda d: d["result"].update(stake=2**60),  # beyond RFC 8785's integers: no canonical form
            lambda d: d["result"].update(stake=2.5),
            lambda d: d["signature"].update(value="not base64!"),
            lambda d: d["signature"].update(value=None),
            lambda d: d["signature"].update(algorithm="rsa"),
        ],
        ids=["value", "huge-integer", "float", "bad-base64", "no-value", "algorithm"],
    )
    def test_any_change_makes_the_signature_invalid_and_never_raises(self, tamper: Any) -> None:
        keys = SigningKeys.ephemeral()
        signed = json.loads(json.dumps(keys.sign_document(_RECORD)))
        tamper(signed)
        assert check_signature(signed, keys.public_keys).authenticity is Authenticity.INVALID

    def test_a_rotated_set_signs_with_the_new_key_and_lists_the_retired_one(self) -> None:
        old = SigningKeys.ephemeral()
        new = SigningKeys.from_pem(new_private_key(), old.public_pem().encode())
        assert [key.current for key in new.public_keys] == [True, False]
        assert new.public_keys[1].key_id == old.key_id
        assert check_signature(old.sign_document(_RECORD), new.public_keys).authenticity is Authenticity.VALID
        assert new.sign_document(_RECORD)["signature"]["key_id"] == new.key_id


class TestKeyFiles:
    def test_a_key_file_is_made_once_readable_by_its_owner_only(self, tmp_path: Path) -> None:
        path = tmp_path / "keys" / "signing-key.pem"
        made = load_or_create_private_key(path)
        assert path.stat().st_mode & 0o777 == 0o600
        assert load_or_create_private_key(path) == made == path.read_bytes()

    def test_a_pem_file_of_several_keys_gives_each_in_order_and_a_private_key_its_public_half(self) -> None:
        first, second = SigningKeys.ephemeral(), new_private_key()
        keys = parse_public_keys(first.public_pem().encode() + second)
        assert [key.key_id for key in keys] == [first.key_id, SigningKeys.from_pem(second).key_id]

    @pytest.mark.parametrize(
        "content", [b"", b"not a key", b"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----"]
    )
    def test_a_file_without_an_ed25519_key_is_refused(self, content: bytes) -> None:
        with pytest.raises(ValueError, match=r"no PEM public key|no usable key"):
            parse_public_keys(content)

    def test_a_key_of_another_algorithm_is_refused(self) -> None:
        pem = (
            ec.generate_private_key(ec.SECP256R1())
            .public_key()
            .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        )
        with pytest.raises(ValueError, match="not an Ed25519 key"):
            parse_public_keys(pem)


class TestConfiguration:
    def test_without_a_key_file_the_embedded_redis_data_directory_gets_one_kept_across_starts(
        self, tmp_path: Path
    ) -> None:
        first = config_from_args(_args(tmp_path))
        assert (tmp_path / "data" / "signing-key.pem").read_bytes() == first.signing_key
        assert config_from_args(_args(tmp_path)).signing_key == first.signing_key

    def test_with_an_external_redis_and_no_key_file_none_is_made(self, tmp_path: Path) -> None:
        config = config_from_args(_args(tmp_path, "--redis-url", "redis://127.0.0.1:1/0"))
        assert config.signing_key == b""
        assert not (tmp_path / "data").exists()

    @pytest.mark.parametrize("content", [None, b"garbage"], ids=["missing", "not-a-key"])
    def test_an_unusable_key_file_is_a_usage_error(self, tmp_path: Path, content: bytes | None) -> None:
        path = tmp_path / "key.pem"
        if content is not None:
            path.write_bytes(content)
        with pytest.raises(SystemExit) as exited:
            config_from_args(_args(tmp_path, "--signing-key", str(path)))
        assert exited.value.code == 2
        assert not path.exists() or path.read_bytes() == content  # nothing made in its place

    def test_retired_keys_are_read_with_the_current_one(self, tmp_path: Path) -> None:
        current, retired = tmp_path / "current.pem", tmp_path / "retired.pem"
        current.write_bytes(new_private_key())
        retired.write_text(SigningKeys.ephemeral().public_pem())
        config = config_from_args(
            _args(tmp_path, "--signing-key", str(current), "--retired-signing-keys", str(retired))
        )
        assert (config.signing_key, config.retired_signing_keys) == (current.read_bytes(), retired.read_bytes())
