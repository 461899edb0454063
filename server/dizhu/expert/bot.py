"""``ExpertBot``: the bundled ``expert`` bot, a ``dizhu.client.Bot`` that searches (``search.py``).

It reads only its seat's ``TableView`` (``knowledge.py``), so it plays at a referee, in a
tournament, at the web table and as an environment opponent alike. Its budget is set by name:
``expert`` (the default, :data:`DEFAULT_BUDGET`), ``expert:200ms``, ``expert:48deals``, or both,
``expert:200ms,48deals`` (``parse_budget``).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from dizhu.client import Bot
from dizhu.expert.knowledge import knowledge_of
from dizhu.expert.rollout import ranks_of
from dizhu.expert.search import Budget, PlaySearch, choose_bid, search_play
from dizhu.rules import legal_moves
from dizhu.v1 import cards_pb2, rules_service_pb2, table_pb2

__all__ = ["DEFAULT_BUDGET", "ExpertBot", "parse_budget"]

#: What a decision may spend unless told otherwise: at most 100 ms of thinking and 96 sampled deals.
DEFAULT_BUDGET = Budget(seconds=0.1, deals=96)
_PART = re.compile(r"(?P<number>\d+(?:\.\d+)?)(?P<unit>ms|s|deals)")


def parse_budget(options: str) -> Budget:
    """The budget ``options`` name: comma-separated ``<N>ms`` or ``<N>s`` (time), ``<N>deals``; ValueError if not."""
    seconds, deals = DEFAULT_BUDGET.seconds, DEFAULT_BUDGET.deals
    for part in filter(None, (part.strip() for part in options.split(","))):
        match = _PART.fullmatch(part)
        if match is None:
            raise ValueError(f"expert budget {part!r}: use <N>ms, <N>s or <N>deals, e.g. expert:200ms")
        number, unit = float(match["number"]), match["unit"]
        if unit == "deals":
            if number < 1 or number != int(number):
                raise ValueError(f"expert budget {part!r}: a whole number of deals, at least 1")
            deals = int(number)
        else:
            seconds = number / 1000 if unit == "ms" else number
            if not 0 < seconds <= 60:
                raise ValueError(f"expert budget {part!r}: more than 0 and at most 60 s")
    return Budget(seconds=seconds, deals=deals)


class ExpertBot(Bot):
    """Determinized Monte-Carlo search over sampled deals, with the heuristic's strategy as its rollouts."""

    name = "expert"

    def __init__(self, seed: int | str | bytes | None = None, budget: Budget = DEFAULT_BUDGET) -> None:
        self.rng = random.Random(seed)  # noqa: S311 -- game choices, not secrets
        self.budget = budget
        #: The last play's search (None after a bid or a forced move): what a learner imitates.
        self.last_search: PlaySearch | None = None

    @classmethod
    def from_options(cls, seed: int | str | bytes | None, options: str) -> ExpertBot:
        """A bot made from ``seed`` with the budget ``options`` name (``parse_budget``)."""
        return cls(seed, parse_budget(options))

    def choose_bid(self, view: table_pb2.TableView) -> int:
        self.last_search = None
        wanted = choose_bid(knowledge_of(view), self.rng, self.budget)
        return wanted if wanted in view.legal_bids else 0

    def choose_play(
        self, view: table_pb2.TableView, legal: list[rules_service_pb2.LegalMove], can_pass: bool
    ) -> Sequence[cards_pb2.Card]:
        self.last_search = None
        if not legal:
            return []
        knowledge = knowledge_of(view)
        plays = legal_moves(ranks_of(knowledge.hand), knowledge.to_beat, knowledge.variant)
        self.last_search = search_play(knowledge, plays, self.rng, self.budget)
        chosen = self.last_search.choice
        if chosen is None:
            return [] if can_pass else list(legal[0].cards)
        wanted = sorted(int(rank) + 1 for rank in chosen.ranks)  # the contract numbers ranks from 1
        for move in legal:
            if sorted(card.rank for card in move.cards) == wanted:
                return list(move.cards)
        return [] if can_pass else list(legal[0].cards)  # the referee listed no such play: not ours to invent
