"""Two bundled bots: :class:`RandomBot` (a baseline) and :class:`HeuristicBot` (a simple strategy).

:data:`BOT_KINDS` is their catalogue, by the names the command lines and the web table use,
with the bots installed packages add (the server's ``expert``, docs/bots.md).

Both are deterministic: ``RandomBot`` given its seed, ``HeuristicBot`` always (ties are
broken by fixed keys, never by chance).
"""

from __future__ import annotations

import functools
import importlib.metadata
import random
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final, cast

from dizhu.client.bot import Bot, to_beat
from dizhu.v1 import cards_pb2, rules_service_pb2, table_pb2

__all__ = ["BOT_ENTRY_POINTS", "BOT_KINDS", "BotCatalogue", "HeuristicBot", "RandomBot"]

LegalMove = rules_service_pb2.LegalMove

_TWO: Final = int(cards_pb2.RANK_TWO)
_ACE: Final = int(cards_pb2.RANK_ACE)
_QUEEN: Final = int(cards_pb2.RANK_QUEEN)
_TEN: Final = int(cards_pb2.RANK_TEN)
_BLACK_JOKER: Final = int(cards_pb2.RANK_BLACK_JOKER)
_RED_JOKER: Final = int(cards_pb2.RANK_RED_JOKER)
_BOMBS: Final = frozenset({cards_pb2.COMBINATION_KIND_BOMB, cards_pb2.COMBINATION_KIND_ROCKET})
_SINGLE: Final = cards_pb2.COMBINATION_KIND_SINGLE
# Which kinds to lead first: the ones that shed the most weak cards at once.
_TIER: Final = {
    kind: tier
    for tier, kinds in enumerate(
        (
            (
                cards_pb2.COMBINATION_KIND_AIRPLANE_WITH_PAIRS,
                cards_pb2.COMBINATION_KIND_AIRPLANE_WITH_SINGLES,
                cards_pb2.COMBINATION_KIND_TRIO_SEQUENCE,
                cards_pb2.COMBINATION_KIND_PAIR_SEQUENCE,
                cards_pb2.COMBINATION_KIND_STRAIGHT,
            ),
            (cards_pb2.COMBINATION_KIND_TRIO_WITH_PAIR, cards_pb2.COMBINATION_KIND_TRIO_WITH_SINGLE),
            (cards_pb2.COMBINATION_KIND_TRIO,),
            (cards_pb2.COMBINATION_KIND_PAIR,),
            (cards_pb2.COMBINATION_KIND_SINGLE,),
        )
    )
    for kind in kinds
}
# How many cards of each rank of its main group a kind has (kickers have fewer).
_GROUP_WIDTH: Final = {
    cards_pb2.COMBINATION_KIND_SINGLE: 1,
    cards_pb2.COMBINATION_KIND_STRAIGHT: 1,
    cards_pb2.COMBINATION_KIND_PAIR: 2,
    cards_pb2.COMBINATION_KIND_PAIR_SEQUENCE: 2,
    cards_pb2.COMBINATION_KIND_TRIO: 3,
    cards_pb2.COMBINATION_KIND_TRIO_WITH_SINGLE: 3,
    cards_pb2.COMBINATION_KIND_TRIO_WITH_PAIR: 3,
    cards_pb2.COMBINATION_KIND_TRIO_SEQUENCE: 3,
    cards_pb2.COMBINATION_KIND_AIRPLANE_WITH_SINGLES: 3,
    cards_pb2.COMBINATION_KIND_AIRPLANE_WITH_PAIRS: 3,
    cards_pb2.COMBINATION_KIND_QUAD_WITH_TWO_SINGLES: 4,
    cards_pb2.COMBINATION_KIND_QUAD_WITH_TWO_PAIRS: 4,
}


class RandomBot(Bot):
    """Bids and plays uniformly at random among the legal choices (passing included)."""

    name = "random"

    def __init__(self, seed: int | str | bytes | None = None) -> None:
        self.rng = random.Random(seed)  # noqa: S311 -- game choices, not secrets

    def choose_bid(self, view: table_pb2.TableView) -> int:
        amount: int = self.rng.choice(list(view.legal_bids) or [0])
        return amount

    def choose_play(
        self, view: table_pb2.TableView, legal: list[LegalMove], can_pass: bool
    ) -> Sequence[cards_pb2.Card]:
        choices: list[Sequence[cards_pb2.Card]] = [list(move.cards) for move in legal]
        if can_pass or not choices:
            choices.append([])
        return self.rng.choice(choices)


class HeuristicBot(Bot):
    """A simple, reasonable strategy; deterministic.

    * **Bidding** by hand strength: jokers, 2s, aces and bombs score points; the bid is
      the highest level whose threshold the score reaches (and above the highest bid), the
      last bidder opens at 1 on a middling hand rather than have the deal thrown in.
    * **Leading**: go out if one move empties the hand. Otherwise dump the lowest cards:
      the combination whose main group starts lowest, breaking as few pairs, trios and
      bombs as possible, using as many cards as possible (a long straight, sequence or
      airplane before a trio with kicker, before a pair, before a single), never a bomb
      or the rocket. If an opponent has one card left, no single (or the highest); if the
      farmer partner has one card left, the lowest single.
    * **Following an opponent**: the smallest same-kind play that beats it, not breaking
      a bomb, not spending a 2 or a joker on a low card early. Bombs and the rocket only
      when an opponent is close to going out, or when they let the bot go out soon.
    * **Following the farmer partner**: pass, unless a cheap low play is at hand.
    """

    name = "heuristic"

    def __init__(self, seed: int | str | bytes | None = None) -> None:
        # Kept for symmetry with RandomBot; the strategy uses no randomness.
        self.seed = seed

    # -- bidding ---------------------------------------------------------------------

    @staticmethod
    def hand_strength(hand: Sequence[cards_pb2.Card]) -> float:
        """Points: red joker 4, black joker 3, a 2 2, an ace 0.5, a bomb 4 (3 in the four-player deck)."""
        counts = Counter(int(card.rank) for card in hand)
        bombs = sum(1 for rank, n in counts.items() if rank < _BLACK_JOKER and n >= 4)
        bomb_points = 4 if len(hand) <= 20 else 3
        return (
            4 * counts[_RED_JOKER]
            + 3 * counts[_BLACK_JOKER]
            + 2 * counts[_TWO]
            + 0.5 * counts[_ACE]
            + bomb_points * bombs
        )

    def choose_bid(self, view: table_pb2.TableView) -> int:
        score = self.hand_strength(view.your_hand)
        thresholds = (5.0, 7.0, 9.5) if view.settings.variant != cards_pb2.VARIANT_FOUR_PLAYER else (12.0, 15.0, 18.0)
        wanted = sum(1 for threshold in thresholds if score >= threshold)
        last_to_speak = len(view.bids) == len(view.seats) - 1 and view.highest_bid == 0
        if wanted == 0 and last_to_speak and score >= thresholds[0] - 2:
            wanted = 1
        return wanted if wanted in view.legal_bids else 0

    # -- playing ---------------------------------------------------------------------

    def choose_play(
        self, view: table_pb2.TableView, legal: list[LegalMove], can_pass: bool
    ) -> Sequence[cards_pb2.Card]:
        if not legal:
            return []
        hand = Counter(int(card.rank) for card in view.your_hand)
        size = len(view.your_hand)
        for move in legal:
            if move.combination.size == size:
                return list(move.cards)  # going out wins the round
        me = view.your_seat
        landlord = view.landlord_seat if view.HasField("landlord_seat") else None
        opponents = [s.seat for s in view.seats if s.seat != me and landlord in (me, s.seat)]
        partners = [s.seat for s in view.seats if s.seat not in (me, *opponents)]
        left = {s.seat: s.cards_left for s in view.seats}
        opponent_min = min((left[seat] for seat in opponents), default=99)
        danger = opponent_min <= (2 if view.settings.variant != cards_pb2.VARIANT_FOUR_PLAYER else 3)
        if not can_pass:
            return list(self._lead(legal, hand, opponent_min, min((left[s] for s in partners), default=99)).cards)
        beat = to_beat(view)
        owner = view.to_beat.seat if view.HasField("to_beat") else None
        chosen = self._follow(legal, hand, size, danger, owner in partners, beat)
        return [] if chosen is None else list(chosen.cards)

    @staticmethod
    def _start(move: LegalMove) -> int:
        """The lowest rank of the move's main group (the trio of a trio with kicker, a straight's bottom)."""
        comb = move.combination
        if comb.kind in _BOMBS:
            return int(comb.main_rank)
        width = _GROUP_WIDTH.get(comb.kind, 1)
        counts = Counter(int(rank) for rank in comb.ranks)
        return min((rank for rank, n in counts.items() if n >= width), default=int(comb.main_rank))

    @staticmethod
    def _breaks(move: LegalMove, hand: Counter[int]) -> int:
        """How many ranks the move takes only part of from the hand (pairs and trios it splits)."""
        used = Counter(int(rank) for rank in move.combination.ranks)
        return sum(1 for rank, n in used.items() if n < hand[rank])

    @staticmethod
    def _breaks_trio(move: LegalMove, hand: Counter[int]) -> int:
        """How many trios of the hand the move splits."""
        used = Counter(int(rank) for rank in move.combination.ranks)
        return sum(1 for rank, n in used.items() if hand[rank] == 3 and n < 3)

    @staticmethod
    def _breaks_bomb(move: LegalMove, hand: Counter[int]) -> bool:
        if move.combination.kind in _BOMBS:
            return False
        return any(hand[rank] >= 4 and rank < _BLACK_JOKER for rank in move.combination.ranks) or (
            hand[_BLACK_JOKER] > 0
            and hand[_RED_JOKER] > 0
            and any(rank >= _BLACK_JOKER for rank in move.combination.ranks)
        )

    @staticmethod
    def _premium(move: LegalMove) -> int:
        """Cards of rank 2 or joker the move spends."""
        return sum(1 for rank in move.combination.ranks if rank >= _TWO)

    def _lead(self, legal: list[LegalMove], hand: Counter[int], opponent_min: int, partner_min: int) -> LegalMove:
        plain = [m for m in legal if m.combination.kind not in _BOMBS]
        keep = [m for m in plain if not self._breaks_bomb(m, hand)]
        pool = keep or plain or legal
        singles = [m for m in pool if m.combination.kind == _SINGLE]
        if partner_min == 1 and opponent_min > 1 and singles:
            return min(singles, key=lambda m: int(m.combination.main_rank))
        if opponent_min == 1:
            others = [m for m in pool if m.combination.kind != _SINGLE]
            if others:
                pool = others
            elif singles:
                return max(singles, key=lambda m: int(m.combination.main_rank))
        return min(
            pool,
            key=lambda m: (
                self._start(m),
                self._breaks_trio(m, hand),
                self._premium(m) if self._start(m) < _TWO else 0,  # no 2 or joker as a kicker
                _TIER.get(m.combination.kind, len(_TIER)),
                -m.combination.size,
                self._breaks(m, hand),
                sum(m.combination.ranks),
            ),
        )

    def _follow(
        self,
        legal: list[LegalMove],
        hand: Counter[int],
        size: int,
        danger: bool,
        partner_owns: bool,
        beat: list[cards_pb2.Card] | None,
    ) -> LegalMove | None:
        beat_rank = max((int(card.rank) for card in beat or ()), default=0)
        same = [m for m in legal if m.combination.kind not in _BOMBS and not self._breaks_bomb(m, hand)]
        best = min(
            same,
            # Splitting a pair or trio to follow costs about four ranks.
            key=lambda m: (int(m.combination.main_rank) + 4 * self._breaks(m, hand), sum(m.combination.ranks)),
            default=None,
        )
        if partner_owns:
            cheap = (
                best is not None
                and int(best.combination.main_rank) <= _TEN
                and self._breaks(best, hand) == 0
                and self._premium(best) == 0
            )
            return best if cheap and not danger else None
        if best is not None:
            spends_premium = int(best.combination.main_rank) >= _TWO or self._premium(best) > 0
            if spends_premium and not danger and size > 8 and beat_rank < _QUEEN:
                return None
            return best
        bombs = [m for m in legal if m.combination.kind in _BOMBS]
        if not bombs:
            return None
        smallest = min(
            bombs,
            key=lambda m: (
                m.combination.kind == cards_pb2.COMBINATION_KIND_ROCKET,
                m.combination.size,
                int(m.combination.main_rank),
            ),
        )
        if danger or size - smallest.combination.size <= 4 or (beat_rank > _ACE and size <= 8):
            return smallest
        return None


BotFactory = Callable[[int | str | bytes | None], Bot]
#: Where installed packages name bots of their own (``dizhu`` itself names ``expert``): entry points
#: whose object is a ``Bot`` class made from a seed; one with a ``from_options(seed, options)``
#: class method also takes ``NAME:OPTIONS`` (``expert:200ms``).
BOT_ENTRY_POINTS: Final = "dizhu.bots"


class BotCatalogue(Mapping[str, BotFactory]):
    """The bundled bots by name: the SDK's own, then those installed packages name (:data:`BOT_ENTRY_POINTS`).

    A key is a name, or ``NAME:OPTIONS`` for a bot that takes options; iterating gives the names.
    A package's bot is imported only when it is made or its options are checked; one that cannot
    be imported here (a missing extra) is no key of the catalogue.
    """

    def __init__(self, own: Mapping[str, BotFactory], group: str) -> None:
        self._own = dict(own)
        self._group = group
        self._points: dict[str, importlib.metadata.EntryPoint] | None = None

    def _installed(self) -> dict[str, importlib.metadata.EntryPoint]:
        if self._points is None:
            points = importlib.metadata.entry_points(group=self._group)
            self._points = {point.name: point for point in points if point.name not in self._own}
        return self._points

    def __getitem__(self, key: str) -> BotFactory:
        name, colon, options = key.partition(":")
        if not colon and name in self._own:
            return self._own[name]
        point = self._installed().get(name)
        if point is None:
            raise KeyError(key)
        try:
            made: Any = point.load()
        except ImportError as error:  # e.g. ``learned`` without the [env] extra's numpy
            raise KeyError(f"{name}: cannot be loaded here ({error})") from None
        if not colon:
            return cast(BotFactory, made)
        from_options = getattr(made, "from_options", None)
        if from_options is None:
            raise KeyError(key)
        try:
            from_options(None, options)  # options it refuses are no key of the catalogue
        except ValueError as error:
            raise KeyError(f"{key}: {error}") from None
        return functools.partial(from_options, options=options)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        try:
            self[key]
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        return iter([*self._own, *self._installed()])

    def __len__(self) -> int:
        return len(self._own) + len(self._installed())


#: The bundled bots by name, each made from a seed (a per-seat one where a game is reproducible).
BOT_KINDS: Final[Mapping[str, BotFactory]] = BotCatalogue(
    {"heuristic": HeuristicBot, "random": RandomBot}, BOT_ENTRY_POINTS
)
