"""What the kit's vectors pin, checked from outside the generator.

The normative order of legal-move lists, restated here from docs/conformance.md as a sort key
of its own, holds for every list; a card set larger than a hand is no combination, on both
engines; and the kit holds the vectors a third-party engine most often gets wrong: deals
whose random stream discards a word, a perft line that ends the round, the 4p bombs of six
and seven cards, airplanes of three trios or more, following an airplane or a trio sequence,
a whole round's settlement. No two cases of a family ask the same question.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import struct
from collections import Counter
from collections.abc import Iterator
from itertools import count
from typing import Any

import pytest

from dizhu.conformance import FAMILIES, NativeEngineMissing, load_engine
from tests.support.conformance_kit import KIT, ROOT

RANKS = ["3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K", "A", "2", "BJ", "RJ"]
RANK = {symbol: index for index, symbol in enumerate(RANKS)}
HAND_LIMIT = {"3p": 20, "4p": 33}
#: docs/conformance.md, "The order of legal moves", the kinds in the order they are listed.
KIND_ORDER = [
    "single",
    "pair",
    "trio",
    "trio_with_single",
    "trio_with_pair",
    "straight",
    "pair_sequence",
    "trio_sequence",
    "airplane_with_singles",
    "airplane_with_pairs",
    "quad_with_two_singles",
    "quad_with_two_pairs",
    "bomb",
    "rocket",
]


def _cases(family: str) -> list[dict[str, Any]]:
    return list(KIT.load(f"rules/{family}.json")["cases"])


def _case(case_id: str) -> dict[str, Any]:
    family = case_id.split(".", 1)[0]
    family = {"deal": "deals"}.get(family, family)
    found = [case for case in _cases(family) if case["id"] == case_id]
    assert found, f"the kit has no case {case_id}"
    return found[0]


def _engines() -> Iterator[Any]:
    yield load_engine("python")
    with contextlib.suppress(NativeEngineMissing):
        yield load_engine("native")


def _order_key(move: str, kind: str) -> tuple[Any, ...]:
    """Where ``move`` (of ``kind``) stands in a legal-move list, as docs/conformance.md states it."""
    counts = Counter(RANK[symbol] for symbol in move.split())
    group = KIND_ORDER.index(kind)
    most = max(counts.values())
    main = sorted(rank for rank, held in counts.items() if held == most)
    rest = tuple(sorted(rank for rank, held in counts.items() if held != most))
    if kind in ("single", "pair", "trio"):
        return (group, main[0])
    if kind in ("trio_with_single", "trio_with_pair", "quad_with_two_singles", "quad_with_two_pairs"):
        return (group, main[0], rest)
    if kind in ("straight", "pair_sequence", "trio_sequence"):
        return (group, main[0], len(main))
    if kind in ("airplane_with_singles", "airplane_with_pairs"):
        return (group, main[0], len(main), rest)
    if kind == "bomb":
        return (group, sum(counts.values()), main[0])
    return (group,)


class TestTheOrderOfLegalMoves:
    def test_every_list_of_the_kit_is_in_the_order_the_docs_state(self) -> None:
        classify = load_engine("python")
        for case in _cases("legal_moves"):
            variant = case["query"]["variant"]
            moves = case["expect"]["moves"]
            keys = [
                _order_key(move, classify.answer("classify", {"variant": variant, "cards": move})["kind"])
                for move in moves
            ]
            assert keys == sorted(keys), case["id"]
            assert len(set(keys)) == len(keys), case["id"]

    def test_the_schema_states_the_order(self) -> None:
        schema = KIT.load("schemas/rules-legal_moves.schema.json")
        ordered = schema["properties"]["ordered"]
        assert "docs/conformance.md" in ordered["description"]
        moves = schema["properties"]["cases"]["items"]["properties"]["expect"]["properties"]["moves"]
        for words in ("singles", "bombs", "rocket", "lowest", "wings"):
            assert words in moves["description"], words

    def test_the_docs_state_the_order_kind_by_kind(self) -> None:
        text = (ROOT / "docs" / "conformance.md").read_text()
        section = text.split("### The order of legal moves", 1)[1].split("\n## ", 1)[0]
        places = [section.find(f"`{kind}`") for kind in KIND_ORDER]
        assert -1 not in places, [kind for kind, place in zip(KIND_ORDER, places, strict=True) if place < 0]
        assert places == sorted(places)


class TestLargerThanAHand:
    """docs/rules.md §6: a combination never uses more cards than one hand holds (20 in 3p, 33 in 4p)."""

    @pytest.mark.parametrize(
        ("variant", "cards"),
        [
            ("3p", "3 3 3 4 4 4 5 5 5 6 6 6 7 7 7 8 8 8 9 9 9"),
            ("3p", "3 3 4 4 5 5 6 6 7 7 8 8 9 9 T T J J Q Q K K"),
            ("3p", "3 3 3 4 4 4 5 5 5 6 6 6 7 7 7 8 8 8 9 T J Q K A"),
            ("4p", "3 3 3 4 4 4 5 5 5 6 6 6 7 7 7 8 8 8 9 9 9 T T T J J J Q Q Q K K K A A A"),
            ("4p", "3 3 3 4 4 4 5 5 5 6 6 6 7 7 7 8 8 8 9 9 9 T T J J Q Q K K A A 2 2 BJ BJ"),
        ],
    )
    def test_a_set_larger_than_a_hand_is_no_combination_on_either_engine(self, variant: str, cards: str) -> None:
        assert len(cards.split()) > HAND_LIMIT[variant]
        for engine in _engines():
            answer = engine.answer("classify", {"variant": variant, "cards": cards})
            assert answer["valid"] is False, (engine.name, cards)
            assert f"{HAND_LIMIT[variant]} cards" in answer["why"], answer["why"]

    @pytest.mark.parametrize(
        ("variant", "cards", "kind"),
        [
            ("3p", "3 3 3 4 4 4 5 5 5 6 6 6 7 7 7 8 8 8", "trio_sequence"),
            ("3p", "3 3 4 4 5 5 6 6 7 7 8 8 9 9 T T J J Q Q", "pair_sequence"),
            ("4p", "3 3 3 4 4 4 5 5 5 6 6 6 7 7 7 8 8 8 9 9 9 T T T J J J Q Q Q K K K", "trio_sequence"),
        ],
    )
    def test_a_set_of_a_whole_hand_still_is_one(self, variant: str, cards: str, kind: str) -> None:
        for engine in _engines():
            assert engine.answer("classify", {"variant": variant, "cards": cards})["kind"] == kind

    def test_the_kit_pins_it_in_both_variants(self) -> None:
        over = {
            case["query"]["variant"]
            for case in _cases("classify")
            if len(case["query"]["cards"].split()) > HAND_LIMIT[case["query"]["variant"]]
            and case["expect"] == {"valid": False}
        }
        assert over == {"3p", "4p"}
        assert all(
            len(case["query"]["cards"].split()) <= HAND_LIMIT[case["query"]["variant"]]
            for case in _cases("classify")
            if case["expect"]["valid"]
        )

    def test_the_rules_say_so(self) -> None:
        rules = (ROOT / "docs" / "rules.md").read_text()
        assert re.search(r"Decision \(larger than a hand\)", rules)


class TestNoDuplicates:
    def test_no_two_cases_of_a_family_ask_the_same_question(self) -> None:
        for family in FAMILIES:
            seen: dict[str, str] = {}
            for case in _cases(family):
                query = dict(case["query"])
                for field in ("cards", "hand", "a", "b", "to_beat"):  # card sets are multisets of ranks
                    if isinstance(query.get(field), str):
                        query[field] = " ".join(sorted(query[field].split(), key=RANK.__getitem__))
                key = json.dumps(query, sort_keys=True)
                assert key not in seen, f"{case['id']} asks what {seen[key]} asks"
                seen[key] = case["id"]


def _stream_rejects(seed: bytes, draws: list[int]) -> bool:
    """Whether drawing below each of ``draws`` from the deal stream of ``seed`` discards a word
    (docs/deal.md step 2), computed here from the docs alone."""
    words = (
        word
        for block in count()
        for word in struct.unpack(">8I", hashlib.sha256(b"dizhu/deal/v1" + seed + block.to_bytes(4, "big")).digest())
    )
    rejected = False
    for n in draws:
        limit = 2**32 - 2**32 % n
        while next(words) >= limit:
            rejected = True
    return rejected


def _a_line_ends_early(query: dict[str, Any]) -> bool:
    """Whether some line of the perft ``query`` ends, a seat playing its last card, before its depth."""
    engine = load_engine("python")
    variant, depth = query["variant"], query["depth"]
    players = len(query["position"]["hands"])

    def walk(hands: list[list[str]], turn: int, to_beat: str | None, last: Any, passes: int, ply: int) -> bool:
        if ply + 1 >= depth:
            return False
        answer = engine.answer("legal_moves", {"variant": variant, "hand": " ".join(hands[turn]), "to_beat": to_beat})
        for move in answer["moves"]:
            left = list(hands[turn])
            for symbol in move.split():
                left.remove(symbol)
            if not left:
                return True
            if walk([*hands[:turn], left, *hands[turn + 1 :]], (turn + 1) % players, move, turn, 0, ply + 1):
                return True
        if to_beat is None:
            return False
        if passes + 1 == players - 1:
            return walk(hands, last, None, None, 0, ply + 1)
        return walk(hands, (turn + 1) % players, to_beat, last, passes + 1, ply + 1)

    position = query["position"]
    hands = [hand.split() for hand in position["hands"]]
    return walk(hands, position["turn"], position["to_beat"], position["last_player"], position["passes"], 0)


class TestMissingVectors:
    def test_each_variant_has_a_deal_whose_stream_discards_a_word(self) -> None:
        shapes = {"3p": (54, 3 * 17), "4p": (108, 4 * 25)}
        rejecting = set()
        for case in _cases("deals"):
            variant = case["query"]["variant"]
            deck, dealt = shapes[variant]
            if _stream_rejects(bytes.fromhex(case["query"]["seed"]), [*range(deck, 1, -1), dealt]):
                rejecting.add(variant)
                assert "rejection" in case["id"], case["id"]
        assert rejecting == {"3p", "4p"}

    def test_a_perft_line_ends_the_round_before_the_last_depth(self) -> None:
        ending = {case["query"]["variant"] for case in _cases("perft") if _a_line_ends_early(case["query"])}
        assert ending == {"3p", "4p"}

    @pytest.mark.parametrize(
        ("case_id", "expect"),
        [
            ("classify.3p.near.quad-pair-as-two-singles", {"valid": False}),
            ("classify.4p.bomb-6", {"valid": True, "kind": "bomb", "main_rank": "7", "size": 6}),
            ("classify.4p.bomb-7", {"valid": True, "kind": "bomb", "main_rank": "9", "size": 7}),
            ("beats.4p.bomb-7-vs-bomb-6", {"a_beats_b": True, "b_beats_a": False}),
            ("beats.4p.bomb-6-vs-bomb-6", {"a_beats_b": True, "b_beats_a": False}),
            ("beats.4p.bomb-7-vs-bomb-7", {"a_beats_b": True, "b_beats_a": False}),
            ("beats.4p.bomb-6-vs-bomb-5", {"a_beats_b": True, "b_beats_a": False}),
            ("beats.4p.rocket-vs-bomb-6", {"a_beats_b": True, "b_beats_a": False}),
            ("beats.4p.rocket-vs-bomb-7", {"a_beats_b": True, "b_beats_a": False}),
        ],
    )
    def test_the_named_vectors_are_there(self, case_id: str, expect: dict[str, Any]) -> None:
        assert _case(case_id)["expect"] == expect

    def test_airplanes_of_three_trios_or_more_are_classified_in_both_variants(self) -> None:
        found = set()
        for case in _cases("classify"):
            expect = case["expect"]
            if expect.get("kind") in ("airplane_with_singles", "airplane_with_pairs", "trio_sequence"):
                width = {"airplane_with_singles": 4, "airplane_with_pairs": 5, "trio_sequence": 3}[expect["kind"]]
                if expect["size"] // width >= 3:
                    found.add((case["query"]["variant"], expect["kind"]))
        assert found >= {
            ("3p", "airplane_with_singles"),
            ("3p", "airplane_with_pairs"),
            ("3p", "trio_sequence"),
            ("4p", "airplane_with_pairs"),
            ("4p", "trio_sequence"),
        }

    def test_following_an_airplane_or_a_trio_sequence(self) -> None:
        classify = load_engine("python")
        followed = set()
        for case in _cases("legal_moves"):
            query = case["query"]
            if query["to_beat"] is None:
                continue
            kind = classify.answer("classify", {"variant": query["variant"], "cards": query["to_beat"]})["kind"]
            same_kind = [
                move
                for move in case["expect"]["moves"]
                if classify.answer("classify", {"variant": query["variant"], "cards": move})["kind"] == kind
            ]
            if kind in ("airplane_with_singles", "airplane_with_pairs", "trio_sequence") and len(same_kind) >= 2:
                followed.add((query["variant"], kind))
        assert followed >= {
            ("3p", "airplane_with_singles"),
            ("3p", "airplane_with_pairs"),
            ("3p", "trio_sequence"),
            ("4p", "airplane_with_pairs"),
            ("4p", "trio_sequence"),
        }

    def test_a_whole_round_is_settled_in_both_variants(self) -> None:
        sizes = {"3p": (17, 3), "4p": (25, 8)}
        whole = set()
        for case in _cases("settlement"):
            query = case["query"]
            if ".full-round." not in case["id"]:
                continue
            hand, kitty = sizes[query["variant"]]
            played = Counter[int]()
            for seat, cards in query["plays"]:
                played[seat] += len(cards.split())
            winner, landlord = query["winner"], query["landlord"]
            assert played[winner] == hand + (kitty if winner == landlord else 0), case["id"]
            assert all(played[seat] < hand + (kitty if seat == landlord else 0) for seat in played if seat != winner)
            assert len(query["plays"]) > 10, case["id"]
            whole.add(query["variant"])
        assert whole == {"3p", "4p"}

    @pytest.mark.parametrize("variant", ["3p", "4p"])
    def test_auction_refusals_after_passes_ended_it_of_a_seat_that_does_not_exist_and_of_a_negative_amount(
        self, variant: str
    ) -> None:
        n = int(variant[0])
        closed = ["ACCEPTED"] * n
        expected = {
            # A bid and then every other seat passing makes seat 0 the landlord: the auction is over.
            "after-passes-ended-it": ([*closed, "WRONG_PHASE"], {"landlord": 0, "bid": 1}),
            "pass-after-passes-ended-it": ([*closed, "WRONG_PHASE"], {"landlord": 0, "bid": 1}),
            "pass-after-throw-in": ([*closed, "WRONG_PHASE"], {"thrown_in": True}),
            f"seat-{n}": (["INVALID_SEAT", "ACCEPTED"], {"turn": 1, "highest_bid": 1}),
            "seat-minus-1": (["INVALID_SEAT", "ACCEPTED"], {"turn": 1, "highest_bid": 1}),
            "negative-amount": (["INVALID_BID", "ACCEPTED"], {"turn": 1, "highest_bid": 1}),
        }
        for suffix, (steps, outcome) in expected.items():
            case = _case(f"auction.{variant}.{suffix}")
            assert case["expect"] == {"steps": steps, "outcome": outcome}, case["id"]
        assert _case(f"auction.{variant}.seat-{n}")["query"]["bids"][0] == [n, 1]
        assert _case(f"auction.{variant}.seat-minus-1")["query"]["bids"][0] == [-1, 1]
        assert _case(f"auction.{variant}.negative-amount")["query"]["bids"][0] == [0, -1]

    def test_perft_positions_inside_a_trick_seats_passed_in_counted_deeper_than_4(self) -> None:
        passed = {
            (case["query"]["variant"], case["query"]["position"]["passes"])
            for case in _cases("perft")
            if case["query"]["position"]["passes"] and case["query"]["depth"] > 4
        }
        assert passed >= {("3p", 1), ("4p", 1), ("4p", 2)}

    def test_settlement_of_a_quad_plus_two_played_does_not_double(self) -> None:
        quads = [
            case
            for case in _cases("settlement")
            if any(
                _kind(case["query"]["variant"], cards).startswith("quad_with") for _, cards in case["query"]["plays"]
            )
        ]
        assert {_kind("3p", cards) for case in quads for _, cards in case["query"]["plays"]} >= {
            "quad_with_two_singles",
            "quad_with_two_pairs",
        }
        for case in quads:
            query = case["query"]
            assert case["expect"]["doublings"] == 0, case["id"]
            assert case["expect"]["stake"] == query["bid"] * (2 if case["expect"]["spring"] else 1), case["id"]

    @pytest.mark.parametrize("variant", ["3p", "4p"])
    def test_a_farmers_spring_where_the_landlords_only_play_doubled(self, variant: str) -> None:
        found = []
        for case in _cases("settlement"):
            query = case["query"]
            landlord = query["landlord"]
            own = [cards for seat, cards in query["plays"] if seat == landlord]
            if query["variant"] != variant or query["winner"] == landlord or len(own) != 1 or not query["spring_rule"]:
                continue
            if query["plays"][0] == [landlord, own[0]] and _doubles(variant, own[0]):
                found.append(case)
        assert found, f"no {variant} farmers' spring whose landlord led a doubling play"
        for case in found:
            assert case["expect"]["spring"] is True, case["id"]
            assert case["expect"]["doublings"] == 1, case["id"]
            assert case["expect"]["stake"] == case["query"]["bid"] * 4, case["id"]


def _kind(variant: str, cards: str) -> str:
    answer = load_engine("python").answer("classify", {"variant": variant, "cards": cards})
    return str(answer.get("kind", "none"))


def _doubles(variant: str, cards: str) -> bool:
    """docs/rules.md §9: a rocket doubles; a bomb doubles in 3p, and in 4p from six cards."""
    kind = _kind(variant, cards)
    return kind == "rocket" or (kind == "bomb" and (variant == "3p" or len(cards.split()) >= 6))


class TestVersion:
    def test_the_changelog_names_the_kit_version_and_what_it_changed(self) -> None:
        changelog = (KIT.root / "CHANGELOG.md").read_text()
        assert re.search(rf"^## {re.escape(KIT.version)}\b", changelog, re.M), KIT.version
        assert KIT.version.split(".")[0] == "2"  # a case removed: an implementation that passed may fail

    def test_every_file_carries_the_kit_version(self) -> None:
        for family in FAMILIES:
            assert KIT.load(f"rules/{family}.json")["kit_version"] == KIT.version, family
        assert KIT.load("protocol/cases.json")["kit_version"] == KIT.version
