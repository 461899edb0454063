"""The seeded deal and the seed commitment (docs/rules.md sections 3 and 8).

``docs/deal-vectors.json`` freezes the algorithm: the code must reproduce it exactly, and
so must the JavaScript reference implementation ``docs/deal-reference.mjs``. Regenerate the
vectors only for a deliberate, versioned change of the algorithm::

    PYTHONPATH=server:clients/python python -m tests.rules.test_s3_s8_deal > docs/deal-vectors.json
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dizhu.rules import (
    FOUR_PLAYER,
    SEED_SIZE,
    THREE_PLAYER,
    Card,
    Deal,
    Variant,
    card_by_id,
    commitment,
    deal,
    derive_seed,
    make_deck,
    new_seed,
)
from dizhu.rules.deal import shuffled_ids

# Once per rules engine: the deal is computed by each engine.
pytestmark = pytest.mark.usefixtures("each_engine")

DOCS = Path(__file__).resolve().parents[2] / "docs"
VECTORS = DOCS / "deal-vectors.json"
REFERENCE = DOCS / "deal-reference.mjs"

#: The seeds of the test vectors: simple patterns first, then hash outputs.
VECTOR_SEEDS = (
    bytes(32),
    bytes(range(32)),
    b"\xff" * 32,
    hashlib.sha256(b"dizhu").digest(),
    hashlib.sha256(b"dizhu/vectors/1").digest(),
    hashlib.sha256(b"dizhu/vectors/2").digest(),
)

seeds = st.binary(min_size=SEED_SIZE, max_size=SEED_SIZE)


def dealers(variant: Variant) -> tuple[int, int]:
    """The dealers of the test vectors: the first and the last seat."""
    return 0, variant.players - 1


def _cards(cards: tuple[Card, ...]) -> dict[str, Any]:
    return {"cards": " ".join(str(card) for card in cards), "ids": [card.id for card in cards]}


def vector(seed: bytes, variant: Variant, dealer: int) -> dict[str, Any]:
    """One test vector: everything a re-implementation must reproduce from the seed."""
    dealt = deal(seed, variant, dealer)
    order, _ = shuffled_ids(seed, variant.deck_size)
    return {
        "seed": seed.hex(),
        "variant": variant.name,
        "dealer": dealer,
        "commitment": commitment(seed).hex(),
        "shuffled": order,
        "face_up": {
            "card": str(dealt.face_up),
            "id": dealt.face_up.id,
            "position": order.index(dealt.face_up.id),
            "seat": dealt.face_up_seat,
        },
        "hands": [_cards(hand) for hand in dealt.hands],
        "kitty": _cards(dealt.kitty),
    }


def all_vectors() -> dict[str, Any]:
    """The whole content of ``docs/deal-vectors.json``."""
    return {
        "about": (
            "Test vectors of the dizhu deal (docs/deal.md). Hands are sorted by rank, then suit, then deck"
            " copy, with card ids in the same order; the kitty and 'shuffled' are in deck order."
        ),
        "vectors": [
            vector(seed, variant, dealer)
            for seed in VECTOR_SEEDS
            for variant in (THREE_PLAYER, FOUR_PLAYER)
            for dealer in dealers(variant)
        ],
    }


def render(data: dict[str, Any]) -> str:
    """JSON with two-space indents but every list of numbers on one line."""
    text = json.dumps(data, indent=2)
    return re.sub(r"\[\s+([-\d,\s]+?)\s+\]", lambda m: "[" + re.sub(r",\s+", ", ", m.group(1)) + "]", text) + "\n"


class TestDealShape:
    @given(seed=seeds)
    def test_every_hand_is_full_and_the_kitty_holds_the_rest(self, variant: Variant, seed: bytes) -> None:
        dealt = deal(seed, variant, 0)
        assert [len(hand) for hand in dealt.hands] == [variant.hand_size] * variant.players
        assert len(dealt.kitty) == variant.kitty_size

    @given(seed=seeds)
    def test_every_card_of_the_deck_is_dealt_exactly_once(self, variant: Variant, seed: bytes) -> None:
        dealt = deal(seed, variant, 0)
        every_card = [card for hand in dealt.hands for card in hand] + list(dealt.kitty)
        assert Counter(every_card) == Counter(make_deck(variant.decks))

    @given(seed=seeds, data=st.data())
    def test_the_face_up_card_is_held_by_the_seat_that_drew_it(
        self, variant: Variant, seed: bytes, data: st.DataObject
    ) -> None:
        dealer = data.draw(st.integers(0, variant.players - 1))
        dealt = deal(seed, variant, dealer)
        assert dealt.face_up in dealt.hands[dealt.face_up_seat]
        assert dealt.face_up not in dealt.kitty

    def test_hands_are_sorted_by_rank(self, variant: Variant) -> None:
        dealt = deal(bytes(32), variant, 0)
        assert all(list(hand) == sorted(hand) for hand in dealt.hands)

    def test_a_deal_remembers_its_seed_and_dealer(self, variant: Variant) -> None:
        dealt = deal(bytes(range(32)), variant, 1)
        assert (dealt.seed, dealt.dealer, dealt.variant) == (bytes(range(32)), 1, variant)


class TestDealIsDeterministic:
    @given(seed=seeds)
    def test_the_same_seed_deals_the_same_cards(self, variant: Variant, seed: bytes) -> None:
        assert deal(seed, variant, 0) == deal(seed, variant, 0)

    def test_different_seeds_deal_different_hands(self, variant: Variant) -> None:
        hands = {deal(seed, variant, 0).hands for seed in VECTOR_SEEDS}
        assert len(hands) == len(VECTOR_SEEDS)

    @given(seed=seeds)
    def test_the_seat_after_the_dealer_draws_the_first_card(self, variant: Variant, seed: bytes) -> None:
        order, _ = shuffled_ids(seed, variant.deck_size)
        for dealer in range(variant.players):
            first_seat = (dealer + 1) % variant.players
            assert card_by_id(order[0]) in deal(seed, variant, dealer).hands[first_seat]

    @given(seed=seeds)
    def test_changing_the_dealer_rotates_the_hands_and_keeps_the_kitty(self, variant: Variant, seed: bytes) -> None:
        base = deal(seed, variant, 0)
        for dealer in range(1, variant.players):
            moved = deal(seed, variant, dealer)
            assert moved.kitty == base.kitty
            assert moved.face_up == base.face_up
            assert moved.face_up_seat == (base.face_up_seat + dealer) % variant.players
            for seat in range(variant.players):
                assert moved.hands[(seat + dealer) % variant.players] == base.hands[seat]


class TestDealRefusals:
    @pytest.mark.parametrize("size", [0, 16, 31, 33, 64])
    def test_a_seed_that_is_not_32_bytes_is_refused(self, variant: Variant, size: int) -> None:
        with pytest.raises(ValueError, match="32 bytes"):
            deal(bytes(size), variant, 0)

    def test_a_dealer_outside_the_table_is_refused(self, variant: Variant) -> None:
        for dealer in (-1, variant.players):
            with pytest.raises(ValueError, match="no seat"):
                deal(bytes(32), variant, dealer)


class TestSeeds:
    @given(seed=seeds)
    def test_the_commitment_is_the_sha256_of_the_seed(self, variant: Variant, seed: bytes) -> None:
        assert commitment(seed) == hashlib.sha256(seed).digest()
        assert deal(seed, variant, 0).commitment == hashlib.sha256(seed).digest()

    def test_an_arranged_deal_has_no_seed_and_no_commitment(self, variant: Variant) -> None:
        arranged = Deal.arranged(
            variant,
            [
                make_deck(variant.decks)[i * variant.hand_size : (i + 1) * variant.hand_size]
                for i in range(variant.players)
            ],
            make_deck(variant.decks)[variant.players * variant.hand_size :],
        )
        assert (arranged.seed, arranged.commitment) == (None, None)

    def test_new_seeds_are_32_random_bytes(self) -> None:
        fresh = {new_seed() for _ in range(8)}
        assert len(fresh) == 8
        assert all(len(seed) == SEED_SIZE for seed in fresh)

    def test_derive_seed_follows_its_documented_formula(self) -> None:
        expected = hashlib.sha256(b"dizhu/derive/v1" + b"\x06redeal" + bytes(32) + (3).to_bytes(4, "big")).digest()
        assert derive_seed(bytes(32), "redeal", 3) == expected

    def test_derive_seed_is_stable_across_releases(self) -> None:
        assert derive_seed(bytes(32), "redeal", 1).hex() == (
            "2847e3e21ba90f17912f38a45c3bfcc2c3188e3a9d706f768972c0216ebfbb6c"
        )

    def test_derive_seed_differs_per_label_and_index(self) -> None:
        derived = {derive_seed(bytes(32), label, index) for label in ("redeal", "round") for index in range(3)}
        assert len(derived) == 6


class TestVectors:
    def test_the_code_reproduces_the_published_vectors_exactly(self) -> None:
        assert json.loads(VECTORS.read_text()) == all_vectors()

    def test_the_published_vectors_file_is_in_canonical_form(self) -> None:
        assert VECTORS.read_text() == render(all_vectors())

    def test_the_notation_of_every_vector_card_matches_its_id(self) -> None:
        for entry in json.loads(VECTORS.read_text())["vectors"]:
            for part in [*entry["hands"], entry["kitty"]]:
                assert part["cards"].split() == [str(card_by_id(i)) for i in part["ids"]]

    def test_the_javascript_reference_implementation_reproduces_the_vectors(self) -> None:
        node = shutil.which("node")
        if node is None:
            pytest.fail("node (Node.js >= 18) is required to check docs/deal-reference.mjs; install it")
        result = subprocess.run(
            [node, str(REFERENCE), str(VECTORS)], capture_output=True, text=True, timeout=60, check=False
        )
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout.strip() == f"ok: {len(all_vectors()['vectors'])} vectors reproduced"

    def test_the_worked_example_in_the_docs_matches_the_stream(self) -> None:
        first_block = hashlib.sha256(b"dizhu/deal/v1" + bytes(32) + bytes(4)).hexdigest()
        assert first_block in (DOCS / "deal.md").read_text()


if __name__ == "__main__":
    print(render(all_vectors()), end="")
