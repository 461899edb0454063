"""The referee's signatures and public keys as the contract gives them (GetReplay, GetRefereeKeys)."""

from __future__ import annotations

import base64
import json

from dizhu.referee.signing import ALGORITHM, SIGNATURE_FIELD, SigningKeys
from dizhu.v1 import replay_pb2
from dizhu.v1 import table_service_pb2 as pb

__all__ = ["keys_response", "replay_signature"]


def replay_signature(text: str) -> replay_pb2.ReplaySignature | None:
    """The signature a replay's JSON carries, None for a record made before records were signed."""
    signature = json.loads(text).get(SIGNATURE_FIELD)
    if signature is None:
        return None
    return replay_pb2.ReplaySignature(
        algorithm=signature["algorithm"], key_id=signature["key_id"], value=base64.b64decode(signature["value"])
    )


def keys_response(keys: SigningKeys) -> pb.GetRefereeKeysResponse:
    """Every public key of the referee, the current one first."""
    return pb.GetRefereeKeysResponse(
        keys=[
            pb.RefereeKey(key_id=key.key_id, algorithm=ALGORITHM, public_key=key.raw, pem=key.pem, current=key.current)
            for key in keys.public_keys
        ]
    )
