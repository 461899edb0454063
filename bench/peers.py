"""Peer adapters: cross-check and benchmark dizhu against open-source engines.

Everything here is test/bench-only glue around three third-party Dou Dizhu
engines.  No peer code is copied; each adapter imports its peer lazily and
only calls that peer's own (public or module-level) machinery:

* **RLCard** (``pip install rlcard``): ``rlcard.games.doudizhu``.  Lead moves
  come from ``DoudizhuJudger.playable_cards_from_hand``; answers to a play come
  from ``utils.get_gt_cards`` (which walks RLCard's pre-computed action space,
  ``jsondata/type_card.json``).
* **OpenSpiel** (``pip install open_spiel``): ``pyspiel.load_game("dou_dizhu")``.
  The C++ move generator is not exposed to Python, so
  :func:`openspiel_legal_moves` *steers a real game* (explicit chance outcomes
  let us choose the deal) into a position where the hand is to move, then reads
  ``state.legal_actions()``.
* **DouZero** (``pip install --no-deps douzero``; its move generator needs no
  torch): ``douzero.env.game.GameEnv.get_legal_card_play_actions``.

Notation (ours): ranks low to high are ``3 4 5 6 7 8 9 T J Q K A 2 BJ RJ``.
A *rank string* is the ranks of a play in ascending rule order joined by single
spaces, e.g. ``"3 3 3 4"`` or ``"BJ RJ"``; the pass / empty play is ``""``.
Suits never matter.  Hands use the same notation (order is irrelevant on
input).

Run ``python bench/peers.py`` for a quick sanity check / benchmark.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from functools import lru_cache
from typing import Any

__all__ = [
    "RANKS",
    "clock",
    "douzero_legal_moves",
    "douzero_legal_moves_timing",
    "normalize",
    "openspiel_action_catalogue",
    "openspiel_legal_moves",
    "openspiel_random_rounds",
    "random_hands",
    "rlcard_action_space",
    "rlcard_legal_moves",
    "rlcard_legal_moves_timing",
    "rlcard_random_rounds",
]

#: Our ranks, lowest first.  The index of a rank is also OpenSpiel's rank id.
RANKS: tuple[str, ...] = (*"3456789TJQKA2", "BJ", "RJ")
_RANK_INDEX: dict[str, int] = {r: i for i, r in enumerate(RANKS)}
_JOKERS = frozenset({"BJ", "RJ"})
_MAX_HAND = 20

# RLCard writes one character per card: 'B' / 'R' for the black / red joker.
_TO_RLCARD: dict[str, str] = {r: (r[0] if r in _JOKERS else r) for r in RANKS}
_FROM_CHAR: dict[str, str] = {"B": "BJ", "R": "RJ"} | {r: r for r in RANKS if r not in _JOKERS}

# DouZero's integer card codes.
_TO_DOUZERO: dict[str, int] = dict(zip(RANKS, (3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 17, 20, 30), strict=True))
_FROM_DOUZERO: dict[int, str] = {v: k for k, v in _TO_DOUZERO.items()}

# OpenSpiel dou_dizhu constants (open_spiel/games/dou_dizhu/dou_dizhu_utils.h).
_OS_PASS = 0
_OS_BID_3 = 3
_OS_PLAY_BASE = 4  # first play action id: the solo "3"
_OS_DEAL_BASE = 51  # chance action id of card 0
_OS_JOKER_CARD = {"BJ": 52, "RJ": 53}


#: What the timing functions measure: the CPU time of this process, so that on a shared
#: machine the time spent waiting for a core is not counted against a peer (or against us).
clock = time.process_time


def _missing(peer: str, pip_args: str) -> RuntimeError:
    return RuntimeError(f"{peer} is not installed: pip install {pip_args}")


# --------------------------------------------------------------------------
# notation helpers
# --------------------------------------------------------------------------


def _parse(cards: str, what: str = "hand") -> list[str]:
    """Split a rank string into validated rank tokens, sorted low to high."""
    tokens = cards.split()
    for tok in tokens:
        if tok not in _RANK_INDEX:
            raise ValueError(f"unknown rank {tok!r} in {what} {cards!r}")
    counts = Counter(tokens)
    for rank, n in counts.items():
        if n > (1 if rank in _JOKERS else 4):
            raise ValueError(f"too many {rank} in {what} {cards!r}")
    return sorted(tokens, key=_RANK_INDEX.__getitem__)


def _join(tokens: list[str]) -> str:
    return " ".join(sorted(tokens, key=_RANK_INDEX.__getitem__))


def normalize(cards: str) -> str:
    """Return *cards* as a canonical rank string (validated, ascending)."""
    return " ".join(_parse(cards, "cards"))


def _parse_hand(hand: str) -> list[str]:
    tokens = _parse(hand)
    if len(tokens) > _MAX_HAND:
        raise ValueError(f"a 3-player hand has at most 20 cards: {hand!r}")
    return tokens


def _check_fits(hand: list[str], play: list[str]) -> None:
    """Raise ``ValueError`` unless *hand* and *play* fit in one 54-card deck."""
    total = Counter(hand) + Counter(play)
    if any(n > (1 if r in _JOKERS else 4) for r, n in total.items()):
        raise ValueError("hand and to_beat don't fit in one deck")


def _from_chars(chars: str) -> str:
    """RLCard-style compact string ('333B', 'TTJJ') to our rank string."""
    return _join([_FROM_CHAR[c] for c in chars])


def random_hands(count: int, seed: int, size: int = _MAX_HAND) -> list[str]:
    """Return *count* random hands of *size* cards dealt from a 54-card deck."""
    rng = random.Random(seed)
    deck = [r for r in RANKS if r not in _JOKERS for _ in range(4)] + ["BJ", "RJ"]
    return [_join(rng.sample(deck, size)) for _ in range(count)]


# --------------------------------------------------------------------------
# RLCard
# --------------------------------------------------------------------------


def _rlcard_doudizhu() -> tuple[Any, Any]:
    """Import RLCard's dou dizhu judger and utils modules (lazily)."""
    try:
        from rlcard.games.doudizhu import judger, utils  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError as exc:  # pragma: no cover - depends on environment
        raise _missing("RLCard", "rlcard") from exc
    return judger, utils


def rlcard_legal_moves(hand: str, to_beat: str | None) -> set[str]:
    """Legal plays (pass excluded) RLCard's Dou Dizhu allows for *hand*.

    *hand* is a rank string of up to 20 cards; *to_beat* is the play currently
    winning the trick, or ``None`` when leading.  No game is run:

    * leading: ``DoudizhuJudger.playable_cards_from_hand(hand)``, the set the
      judger builds for a hand at deal time (during a game RLCard only prunes
      that initial set as cards leave the hand);
    * following: ``rlcard.games.doudizhu.utils.get_gt_cards``, which looks
      *to_beat* up in RLCard's action space and scans every entry of the same
      type with a higher weight, plus bombs and the rocket.

    Raises ``ValueError`` if *to_beat* is not in RLCard's action space (e.g. a
    quad with two jokers, ``"3 3 3 3 BJ RJ"``) or uses cards held in *hand*
    beyond a single deck.

    RLCard quirks relative to our rules (see also ``/tmp/peers_notes.md``):

    * Types: solo, pair, trio, trio+solo, trio+pair, solo chain 5-12, pair chain
      3-10, trio chain 2-6, airplane+solo 2-5, airplane+pair 2-4, bomb, rocket,
      four+two solos ("four_two_solo") and four+two pairs ("four_two_pair").
      No 2 or joker in any chain.
    * Four + two *solos* may use a pair as the two solos (``3 3 3 3 4 4``); the
      two solos can't be both jokers.  We require two different ranks.
    * Airplane + solos: the wings may repeat a rank (``3 3 3 4 4 4 5 5``) and
      even form a trio (``3 3 3 4 4 4 5 5 5 7 7 7``; ``... 2 2 2`` too), never
      both jokers and never a chain rank.  A wing trio adjacent to the chain is
      refused (except 2s), which also keeps ``333444555666`` unambiguous.
      We require k different wing ranks.
    * Four + two pairs and airplane + pairs: pairs of different ranks, no chain
      or quad rank - same as ours.
    """
    judger, utils = _rlcard_doudizhu()
    cards = _parse_hand(hand)
    compact = "".join(_TO_RLCARD[r] for r in cards)
    if to_beat is None:
        plays = judger.DoudizhuJudger.playable_cards_from_hand(compact)
        return {_from_chars(p) for p in plays}

    target_tokens = _parse(to_beat, "play")
    if not target_tokens:
        raise ValueError("to_beat must be a play, not a pass (use None to lead)")
    _check_fits(cards, target_tokens)
    target = "".join(_TO_RLCARD[r] for r in target_tokens)
    if target not in utils.CARD_TYPE[0]:
        raise ValueError(f"RLCard has no action {to_beat!r} ({target!r})")

    from rlcard.games.base import Card  # type: ignore[import-untyped,import-not-found,unused-ignore]
    from rlcard.games.doudizhu.player import DoudizhuPlayer  # type: ignore[import-untyped,import-not-found,unused-ignore]

    player = DoudizhuPlayer(0, None)
    player.set_current_hand([Card(r, "") if r in _JOKERS else Card("S", r) for r in cards])
    leader = DoudizhuPlayer(2, None)
    leader.played_cards = target
    answers = utils.get_gt_cards(player, leader)
    return {_from_chars(p) for p in answers if p != "pass"}


def rlcard_action_space() -> list[str]:
    """RLCard's whole play action space (action id order, pass excluded)."""
    _, utils = _rlcard_doudizhu()
    return [_from_chars(a) for a in utils.ID_2_ACTION if a != "pass"]


def rlcard_legal_moves_timing(hands: list[str]) -> float:
    """Seconds RLCard needs to compute the legal lead moves of every hand.

    Hands are converted to RLCard strings before the clock starts; only
    ``playable_cards_from_hand`` is timed.
    """
    judger, _ = _rlcard_doudizhu()
    compact = ["".join(_TO_RLCARD[r] for r in _parse_hand(h)) for h in hands]
    gen = judger.DoudizhuJudger.playable_cards_from_hand
    start = clock()
    for c in compact:
        gen(c)
    return clock() - start


def rlcard_random_rounds(n: int, seed: int, *, raw_game: bool = False) -> float:
    """Play *n* complete 3-player RLCard games with random legal actions.

    Uses ``rlcard.make('doudizhu')`` (its env encodes an observation after every
    step).  RLCard has no auction: player 0 is always the landlord.  With
    ``raw_game=True`` the bare ``rlcard.games.doudizhu.Game`` is driven instead
    (string actions, no observation encoding).  Returns the seconds the rounds took
    (creating the environment or game is not counted).
    """
    try:
        import rlcard  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError as exc:  # pragma: no cover - depends on environment
        raise _missing("RLCard", "rlcard") from exc
    rng = random.Random(seed)
    if raw_game:
        import numpy as np
        from rlcard.games.doudizhu import Game  # type: ignore[import-untyped,import-not-found,unused-ignore]

        game = Game()
        game.np_random = np.random.RandomState(seed)
        start = clock()  # setting the game up is not part of a round
        for _ in range(n):
            state, _player = game.init_game()
            while not game.is_over():
                state, _player = game.step(rng.choice(sorted(state["actions"])))
        return clock() - start

    env = rlcard.make("doudizhu", config={"seed": seed})
    start = clock()
    for _ in range(n):
        state, _player = env.reset()
        while not env.is_over():
            state, _player = env.step(rng.choice(list(state["legal_actions"])))
    return clock() - start


# --------------------------------------------------------------------------
# OpenSpiel
# --------------------------------------------------------------------------


def _pyspiel() -> Any:
    try:
        import pyspiel  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError as exc:  # pragma: no cover - depends on environment
        raise _missing("OpenSpiel", "open_spiel") from exc
    return pyspiel


def _openspiel_decode(text: str) -> str:
    """OpenSpiel play string ('333444-56', '(BWJ)(CJ)') to our rank string."""
    text = text.replace("(BWJ)", "B").replace("(CJ)", "R").replace("-", "")
    return _from_chars(text)


@lru_cache(maxsize=1)
def _openspiel_catalogue_raw() -> tuple[tuple[int, str, str], ...]:
    pyspiel = _pyspiel()
    game = pyspiel.load_game("dou_dizhu")
    state = game.new_initial_state()
    rows = []
    for action in range(_OS_PLAY_BASE, game.num_distinct_actions()):
        text = state.action_to_string(0, action)
        rows.append((action, text, _openspiel_decode(text)))
    return tuple(rows)


def openspiel_action_catalogue() -> dict[int, str]:
    """Map every OpenSpiel dou_dizhu *play* action id to our rank string.

    Action ids 0 (pass) and 1-3 (bids) are excluded.  The mapping is not
    injective: OpenSpiel gives an airplane+solo whose wings form a trio its own
    id, so e.g. ``"3 3 3 4 4 4 5 5 5 6 6 6"`` is the 4-trio chain *and* two
    airplane+solo actions (``333444555-666`` and ``444555666-333``).
    """
    return {action: ours for action, _text, ours in _openspiel_catalogue_raw()}


@lru_cache(maxsize=1)
def _openspiel_ids_by_play() -> dict[str, tuple[tuple[int, str], ...]]:
    out: dict[str, list[tuple[int, str]]] = {}
    for action, text, ours in _openspiel_catalogue_raw():
        out.setdefault(ours, []).append((action, text))
    return {k: tuple(v) for k, v in out.items()}


def _os_card_pools() -> dict[str, list[int]]:
    """OpenSpiel card ids per rank: card c < 52 has rank c % 13."""
    pools = {r: [s * 13 + i for s in range(4)] for i, r in enumerate(RANKS[:13])}
    pools.update({j: [c] for j, c in _OS_JOKER_CARD.items()})
    return pools


def _os_take(pools: dict[str, list[int]], tokens: list[str]) -> list[int]:
    return [pools[r].pop() for r in tokens]


def _os_rank_of(card: int) -> int:
    return card - 54 + 15 if card >= 52 else card % 13


def _os_preference(entry: tuple[int, str]) -> tuple[int, int, int]:
    """Sort key choosing how to read an ambiguous *to_beat* in OpenSpiel.

    Prefer a plain action (no wings, as our rules read ``333444555666``), then
    the longest and highest trio chain.
    """
    action, text = entry
    if "-" not in text:
        return (0, 0, action)
    chain = text.split("-")[0].replace("(BWJ)", "B").replace("(CJ)", "R")
    return (1, -len(chain), -_RANK_INDEX[_FROM_CHAR[chain[0]]])


def _os_deal(cards: list[str], target: list[str] | None) -> tuple[list[list[int]], list[int], int | None]:
    """Choose OpenSpiel card ids for the three seats.

    Returns ``(seats, fillers, beater)``: seat 0 (the landlord, 20 cards with
    the 3 undealt ones last) holds *cards* plus *fillers*; seat 2 holds
    *target* and *beater*, a card higher than the lowest filler.
    """
    pools = _os_card_pools()
    p0 = _os_take(pools, cards)
    p2: list[int] = []
    beater: int | None = None
    if target is not None:
        _check_fits(cards, target)
        p2 = _os_take(pools, target)
    rest = sorted((c for pool in pools.values() for c in pool), key=_os_rank_of)
    if target is not None:
        beater = rest.pop()  # the highest card left
        p2.append(beater)
    n_fill = _MAX_HAND - len(cards)
    fillers, rest = rest[:n_fill], rest[n_fill:]
    if beater is not None and _os_rank_of(fillers[0]) >= _os_rank_of(beater):
        raise ValueError("no filler card lower than player 2's beater")
    # OpenSpiel never starts a chain at a rank its holder has all four of, so
    # keep player 2 (who must lead *to_beat*) below four of any rank.
    held = Counter(_os_rank_of(c) for c in p2)
    p1: list[int] = []
    for card in rest:
        rank = _os_rank_of(card)
        if len(p2) < 17 and held[rank] < 3:
            p2.append(card)
            held[rank] += 1
        else:
            p1.append(card)
    while len(p2) < 17:  # pragma: no cover - only if the pool is degenerate
        p2.append(p1.pop())
    return [p0 + fillers, p1, p2], fillers, beater


def _os_solo(card: int) -> int:
    return _OS_PLAY_BASE + _os_rank_of(card)


def openspiel_legal_moves(hand: str, to_beat: str | None) -> set[str]:
    """Legal plays (pass excluded) OpenSpiel's ``dou_dizhu`` allows for *hand*.

    OpenSpiel's move generator (``SearchForLegalActions`` in C++) is not bound
    to Python, so a real game is steered into the wanted position: the deal is
    chosen through the explicit chance outcomes, player 0 bids 3 and becomes
    landlord holding *hand* plus filler cards, and sheds the fillers as solos
    the others pass on.  For *to_beat*, player 2 beats the last filler, wins
    the trick and leads *to_beat*, which player 0 must answer.  Then
    ``state.legal_actions()`` is read and decoded.

    Limits (``ValueError`` otherwise): *hand* must be non-empty; with
    *to_beat*, *hand* has at most 19 cards, *to_beat* at most 15, both fit in
    one deck, and *to_beat* is an OpenSpiel action.  An ambiguous *to_beat*
    (``"3 3 3 4 4 4 5 5 5 6 6 6"``) is read as the plain chain first, else as
    the airplane with the longest, then highest, chain.

    OpenSpiel quirks relative to our rules (see also ``/tmp/peers_notes.md``):

    * No four+two types at all (quad + two solos / two pairs are missing).
    * A bomb may be played on a rocket (bombs are added for any non-bomb
      previous play, the rocket included).
    * A solo/pair/trio chain never *starts* at a rank the player holds all four
      of: with ``4 4 4 4 5 6 7 8`` the straight ``4 5 6 7 8`` is missing.
    * Airplane solo wings may repeat a rank up to three times (``333444 55``,
      ``333444555 777``, ``333444555 666``), never both jokers, never a chain
      rank; so ``333444555666`` is also two airplane+solo action ids.
    """
    pyspiel = _pyspiel()
    cards = _parse_hand(hand)
    if not cards:
        raise ValueError("hand must not be empty")
    target = _parse(to_beat, "play") if to_beat is not None else None
    candidates: tuple[tuple[int, str], ...] = ()
    if target is not None:
        if not target:
            raise ValueError("to_beat must be a play, not a pass (use None to lead)")
        if len(cards) > 19:
            raise ValueError("OpenSpiel can't face a play with a 20-card hand")
        if len(target) > 15:
            raise ValueError("to_beat has more than 15 cards (leader would go out)")
        candidates = _openspiel_ids_by_play().get(_join(target), ())
        if not candidates:
            raise ValueError(f"OpenSpiel has no action for {to_beat!r}")
    seats, fillers, beater = _os_deal(cards, target)

    state = pyspiel.load_game("dou_dizhu").new_initial_state()
    state.apply_action(0)  # face-up card is the first dealt: player 0 bids first
    for k in range(51):  # deal action k goes to player k % 3; P0 keeps 3 back
        state.apply_action(_OS_DEAL_BASE + seats[k % 3][k // 3])
    state.apply_action(_OS_BID_3)  # player 0 is landlord and leads

    # Shed fillers as solos; the lowest goes last so player 2 can beat it.
    order = sorted(fillers, key=_os_rank_of, reverse=True)
    shed = order if beater is None else order[:-1]
    for action in [a for card in shed for a in (_os_solo(card), _OS_PASS, _OS_PASS)]:
        state.apply_action(action)
    if beater is not None:
        for action in (_os_solo(order[-1]), _OS_PASS, _os_solo(beater), _OS_PASS, _OS_PASS):
            state.apply_action(action)
        legal = set(state.legal_actions())  # player 2 leads now
        usable = sorted((c for c in candidates if c[0] in legal), key=_os_preference)
        if not usable:  # pragma: no cover - player 2 holds the cards
            raise ValueError(f"player 2 can't lead {to_beat!r} in OpenSpiel")
        state.apply_action(usable[0][0])

    if state.current_player() != 0:  # pragma: no cover - sanity check
        raise RuntimeError("failed to steer the OpenSpiel game")
    return {_openspiel_decode(state.action_to_string(0, a)) for a in state.legal_actions() if a != _OS_PASS}


def openspiel_random_rounds(n: int, seed: int) -> float:
    """Play *n* complete OpenSpiel ``dou_dizhu`` games, all moves random.

    Chance outcomes (face-up card position, the 51 dealt cards) are sampled
    uniformly, every player move - bids included - uniformly among legal
    actions.  A game where all three players pass the auction ends at once
    with zero returns and still counts.  Returns elapsed seconds.
    """
    pyspiel = _pyspiel()
    rng = random.Random(seed)
    game = pyspiel.load_game("dou_dizhu")
    start = clock()
    for _ in range(n):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                action = rng.choice(state.chance_outcomes())[0]
            else:
                action = rng.choice(state.legal_actions())
            state.apply_action(action)
    return clock() - start


# --------------------------------------------------------------------------
# DouZero (move generator only; torch is not needed for douzero.env)
# --------------------------------------------------------------------------


def _douzero_game_env() -> Any:
    try:
        from douzero.env import move_detector  # type: ignore[import-untyped,import-not-found,unused-ignore]
        from douzero.env.game import GameEnv  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError as exc:  # pragma: no cover - depends on environment
        raise _missing("DouZero", "--no-deps douzero") from exc
    return GameEnv, move_detector


def douzero_legal_moves(hand: str, to_beat: str | None) -> set[str]:
    """Legal plays (pass excluded) DouZero's environment allows for *hand*.

    Calls ``douzero.env.game.GameEnv.get_legal_card_play_actions`` on a fresh
    ``GameEnv`` whose acting player holds *hand* and whose action sequence is
    ``[to_beat]`` (empty when leading).  ``douzero.env`` imports no torch, so
    ``pip install --no-deps douzero`` suffices.

    Raises ``ValueError`` if DouZero's ``move_detector`` rejects *to_beat* or
    *hand* and *to_beat* don't fit in one deck.

    DouZero quirks relative to our rules: wings are drawn from the leftover
    cards, so airplane+solo wings may repeat a rank, include both jokers or
    even a whole bomb (``333444555666 7777``); four+two solos may be a pair
    or both jokers; ``3333 4444`` is read as four+two pairs; chains have no
    upper length bound (20 cards bound them anyway).  Airplane+solo plays are
    compared by their *highest* trio, wing trios included, so
    ``TTTJJJQQQ 333`` can't beat ``555666777 KKK``.
    """
    game_env_cls, move_detector = _douzero_game_env()
    cards = _parse_hand(hand)
    env = game_env_cls(players={})
    env.acting_player_position = "landlord"
    env.info_sets["landlord"].player_hand_cards = [_TO_DOUZERO[r] for r in cards]
    if to_beat is None:
        env.card_play_action_seq = []
    else:
        target = _parse(to_beat, "play")
        _check_fits(cards, target)
        move = [_TO_DOUZERO[r] for r in target]
        if not move:
            raise ValueError("to_beat must be a play, not a pass (use None to lead)")
        kind = move_detector.get_move_type(list(move))["type"]
        if kind == move_detector.TYPE_15_WRONG:
            raise ValueError(f"DouZero does not recognise {to_beat!r}")
        env.card_play_action_seq = [move]
    moves = env.get_legal_card_play_actions()
    return {_join([_FROM_DOUZERO[c] for c in m]) for m in moves if m}


def douzero_legal_moves_timing(hands: list[str]) -> float:
    """Seconds DouZero needs to generate the legal lead moves of every hand."""
    _game_env_cls, _ = _douzero_game_env()
    from douzero.env.move_generator import MovesGener  # type: ignore[import-untyped,import-not-found,unused-ignore]

    lists = [[_TO_DOUZERO[r] for r in _parse_hand(h)] for h in hands]
    start = clock()
    for cards in lists:
        MovesGener(cards).gen_moves()
    return clock() - start


# --------------------------------------------------------------------------
# quick sanity check / benchmark
# --------------------------------------------------------------------------


def _main() -> None:
    sample = "3 3 3 4 4 4 5 6 7 8 9 T J Q K A 2 2 BJ RJ"
    hands = random_hands(200, seed=1)

    def report(name: str, fn: Any) -> None:
        try:
            print(f"{name}: {fn()}")
        except RuntimeError as exc:
            print(f"{name}: skipped ({exc})")

    report(
        "RLCard env rounds/s (200 games)",
        lambda: f"{200 / rlcard_random_rounds(200, seed=0):.1f}",
    )
    report(
        "RLCard raw Game rounds/s (200 games)",
        lambda: f"{200 / rlcard_random_rounds(200, seed=0, raw_game=True):.1f}",
    )
    report(
        "OpenSpiel rounds/s (2000 games)",
        lambda: f"{2000 / openspiel_random_rounds(2000, seed=0):.1f}",
    )
    report(
        "RLCard lead-move generation, 20-card hands/s",
        lambda: f"{len(hands) / rlcard_legal_moves_timing(hands):.1f}",
    )
    report(
        "DouZero lead-move generation, 20-card hands/s",
        lambda: f"{len(hands) / douzero_legal_moves_timing(hands):.1f}",
    )
    report("RLCard play action space", lambda: len(rlcard_action_space()))
    report(
        "OpenSpiel play action ids / distinct plays",
        lambda: f"{len(openspiel_action_catalogue())} / {len(set(openspiel_action_catalogue().values()))}",
    )
    for name, fn in (
        ("RLCard", rlcard_legal_moves),
        ("OpenSpiel", openspiel_legal_moves),
        ("DouZero", douzero_legal_moves),
    ):
        report(f"{name} lead moves for {sample!r}", lambda fn=fn: len(fn(sample, None)))


if __name__ == "__main__":
    _main()
