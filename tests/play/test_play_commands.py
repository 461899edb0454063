"""What a person types at ``dizhu play``, read into commands (no referee needed)."""

from __future__ import annotations

from dizhu.client.cards import format_cards, parse_cards
from dizhu.play.commands import Bid, Help, NextRound, Play, Quit, Unclear, read_command
from dizhu.v1 import cards_pb2, rules_service_pb2

HAND = parse_cards("3c 3d 5h 9s Ts Jd Qc Kh Ah BJ")


def _played(command: object) -> str:
    assert isinstance(command, Play), command
    return format_cards(command.cards)


class TestAuction:
    def test_numbers_bid_and_p_passes(self) -> None:
        assert read_command("2", phase="auction") == Bid(2)
        assert read_command(" p ", phase="auction") == Bid(0)
        assert read_command("0", phase="auction") == Bid(0)

    def test_anything_else_says_what_is_expected(self) -> None:
        command = read_command("4", phase="auction")
        assert isinstance(command, Unclear)
        assert "bid 1, 2 or 3" in command.why


class TestPlay:
    def test_notation_picks_the_hands_own_cards(self) -> None:
        assert _played(read_command("3 3", phase="play", hand=HAND)) == "3c 3d"
        assert _played(read_command("9 10 J Q K", phase="play", hand=HAND)) == "9s Ts Jd Qc Kh"

    def test_hand_positions_count_from_one_in_the_order_shown(self) -> None:
        assert _played(read_command("#1 #3", phase="play", hand=HAND)) == "3c 5h"
        assert _played(read_command("#4-8", phase="play", hand=HAND)) == "9s Ts Jd Qc Kh"

    def test_a_legal_play_by_its_number(self) -> None:
        move = rules_service_pb2.LegalMove(cards=parse_cards("BJ"))
        move.combination.kind = cards_pb2.COMBINATION_KIND_SINGLE
        assert _played(read_command("m1", phase="play", hand=HAND, legal=[move])) == "BJ"
        assert isinstance(read_command("m2", phase="play", hand=HAND, legal=[move]), Unclear)

    def test_p_passes(self) -> None:
        assert read_command("pass", phase="play", hand=HAND) == Play(())

    def test_cards_not_held_or_positions_out_of_range_are_unclear(self) -> None:
        missing = read_command("RJ", phase="play", hand=HAND)
        assert isinstance(missing, Unclear)
        assert "RJ" in missing.why
        assert isinstance(read_command("#11", phase="play", hand=HAND), Unclear)
        assert isinstance(read_command("#2 #2", phase="play", hand=HAND), Unclear)


class TestAnyTime:
    def test_help_and_quit_work_in_every_phase(self) -> None:
        for phase in ("auction", "play", "round_over", "wait"):
            assert read_command("h", phase=phase) == Help()
            assert read_command("q", phase=phase) == Quit()

    def test_enter_goes_on_after_a_round(self) -> None:
        assert read_command("", phase="round_over") == NextRound()

    def test_nothing_to_decide_while_waiting(self) -> None:
        assert isinstance(read_command("3", phase="wait"), Unclear)
