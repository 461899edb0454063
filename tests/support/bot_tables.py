"""A table played to its end at a referee by bots, one ``BotRunner`` per seat, as ``dizhu bot`` plays."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from dizhu.client import Bot, BotRunner, TableClient
from dizhu.v1 import table_pb2


async def bots_play_a_table(
    target: str, variant: str, bots: Sequence[Bot], *, round_limit: int = 2
) -> tuple[table_pb2.TableView, list[BotRunner]]:
    """``bots`` (one per seat) play a new table of ``round_limit`` rounds to its close: its last view, the runners."""
    async with TableClient(target) as creator:
        created = await creator.create_table(
            variant=variant, player_names=[f"p{seat}" for seat in range(len(bots))], round_limit=round_limit
        )
        runners = [
            BotRunner(bot, creator.for_seat(token.token)) for bot, token in zip(bots, created.seat_tokens, strict=True)
        ]
        await asyncio.wait_for(asyncio.gather(*(runner.run() for runner in runners)), timeout=300)
        return await creator.get(), runners
