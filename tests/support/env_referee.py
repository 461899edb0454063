"""A policy and a table shared by the tests that compare the environment with a real referee."""

from __future__ import annotations

import zlib

import numpy as np

from dizhu.client import TableClient
from dizhu.v1 import table_service_pb2


def hashed_policy(observation: np.ndarray, mask: np.ndarray) -> int:
    """A deterministic policy that still explores: a legal action chosen by the observation's hash."""
    legal = np.flatnonzero(mask)
    return int(legal[zlib.crc32(observation.tobytes()) % len(legal)])


async def create_seeded_table(
    creator: TableClient, variant: str, seed: bytes, dealer: int
) -> table_service_pb2.CreateTableResponse:
    """A table dealt from ``seed`` with the settings the environment plays by (spring on)."""
    return await creator.create_table(
        variant=variant,
        player_names=[f"p{seat}" for seat in range(int(variant[0]))],
        seeds=[seed],
        first_dealer=dealer,
        spring=True,
    )
