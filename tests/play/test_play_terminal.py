"""``dizhu play`` driven like a person at a terminal: a pseudo-terminal, prompts read, lines typed.

The command starts its own referee (embedded Redis) and two bundled bots, shows the hand and
the legal plays, and takes bids and plays as typed. The person bids, is refused a pass when
leading (the referee's reason is shown), plays the first legal play when leading and passes
when following, until the one-round table closes. ``TERM=dumb`` keeps the output plain.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect
import trustme

from tests.support.referees import served_referee
from tests.support.tls import issue

SEED = "ab" * 32
TIMEOUT_S = 60


@contextlib.contextmanager
def _playing(*args: str) -> Iterator[pexpect.spawn]:
    """``dizhu play`` in a terminal of its own, killed if the block leaves it running."""
    child = _spawn(*args)
    try:
        yield child
    finally:
        if child.isalive():
            child.terminate(force=True)


def _spawn(*args: str) -> pexpect.spawn:
    env = {**os.environ, "TERM": "dumb", "COLUMNS": "160", "LINES": "50"}
    return pexpect.spawn(
        sys.executable, ["-m", "dizhu.cli", "play", *args], env=env, encoding="utf-8", timeout=TIMEOUT_S
    )


class TestPlay:
    def test_a_person_plays_a_round_against_two_bots(self) -> None:
        with _playing("--rounds", "1", "--clock", "300", "--seed", SEED, "--name", "Tester") as child:
            child.expect(r"you are seat 0 against heuristic, heuristic bots")
            child.expect(r"Tester \(seat 0\) drew the face-up card")
            child.expect(r"your hand: 1:\S+ 2:\S+")
            child.expect(r"Your bid \(1-3, 0 or p to pass; highest so far 0\) \[\d+ s left\] > ")
            child.sendline("3")
            refused = False
            plays = 0
            while True:
                seen = child.expect(
                    [r"Your play \(you lead.*> ", r"Your play \(beat .*> ", r"Final balances: (.*)\r\n"]
                )
                if seen == 2:
                    break
                if seen == 0 and not refused:
                    child.sendline("p")
                    child.expect(r"refused: MUST_LEAD ")
                    child.expect(r"Your play \(you lead.*> ")
                    refused = True
                child.sendline("m1" if seen == 0 else "p")
                plays += 1
            final = child.match.group(1)
            child.expect(pexpect.EOF)
            child.close()
        assert refused
        assert plays > 1
        assert "Tester" in final
        balances = [int(part.rsplit(" ", 1)[1]) for part in final.strip().split(", ")]
        assert sum(balances) == 0
        assert child.exitstatus == 0

    def test_the_landlord_sees_the_kitty_and_typed_cards_are_checked(self) -> None:
        with _playing("--rounds", "1", "--clock", "0", "--seed", SEED) as child:
            child.expect(r"Your bid .*> ")
            child.sendline("3")
            child.expect(r"kitty: +(\S+ \S+ \S+)")
            child.expect(r"Your play \(you lead.*> ")
            child.sendline("RJ")  # the seeded hand holds no red joker
            child.expect(r"holds no \(further\) RJ")
            child.sendline("#1 #99")
            child.expect(r"positions run from #1 to #20")
            child.sendline("h")
            child.expect(r"How to play")
            child.sendline("q")
            child.expect(r"You left the table\.")
            child.expect(pexpect.EOF)
            child.close()
        assert child.exitstatus == 0


class TestPlayAtATlsReferee:
    def test_the_person_and_the_bots_reach_a_referee_serving_tls(self, redis_url: str, tmp_path: Path) -> None:
        certificate = issue(tmp_path, trustme.CA())
        with (
            served_referee(
                redis_url, "play", flags=certificate.serve_flags, credentials=certificate.credentials()
            ) as target,
            _playing("--target", target, "--tls-ca", str(certificate.authority), "--rounds", "1") as child,
        ):
            child.expect(r"you are seat 0 against heuristic, heuristic bots")
            # The deal starts once both bots took their seats: they reached the referee too. The
            # person's first turn is a bid, or a play when a bot bid 3 before it.
            child.expect(r"Your (bid|play) \(.*\) \[\d+ s left\] > ")
            child.sendline("q")
            child.expect(pexpect.EOF)
            child.close()


class TestLeaving:
    def test_q_in_the_auction_says_the_round_is_abandoned(self) -> None:
        with _playing("--rounds", "1", "--clock", "0", "--seed", SEED, "--name", "Tester") as child:
            child.expect(r"Your bid .*> ")
            child.sendline("q")
            child.expect(r"Round over: the round was abandoned\.")
            child.expect(r"You left the table\.")
            child.expect(r"Final balances: (.*)\r\n")
            final = child.match.group(1)
            child.expect(pexpect.EOF)
            child.close()
        assert child.exitstatus == 0
        assert "Tester (left) +0" in final

    def test_the_end_of_input_leaves_the_table(self) -> None:
        with _playing("--rounds", "1", "--clock", "0", "--seed", SEED, "--name", "Tester") as child:
            child.expect(r"Your bid .*> ")
            child.sendeof()
            child.expect(r"the round was abandoned")
            child.expect(r"End of input: you left the table\.")
            child.expect(r"Final balances: (.*)\r\n")
            final = child.match.group(1)
            child.expect(pexpect.EOF)
            child.close()
        assert child.exitstatus == 0
        assert "Tester (left) +0" in final

    def test_who_left_mid_play_keeps_their_name_in_the_final_balances(self) -> None:
        with _playing("--rounds", "1", "--clock", "0", "--seed", SEED, "--name", "Tester") as child:
            child.expect(r"Your bid .*> ")
            child.sendline("3")
            child.expect(r"Your play .*> ")
            child.sendline("q")
            child.expect(r"You left the table\.")
            child.expect(r"Final balances: (.*)\r\n")
            final = child.match.group(1)
            child.expect(pexpect.EOF)
            child.close()
        assert child.exitstatus == 0
        assert re.search(r"Tester \(left\) -\d+", final), final
        assert ",  " not in final
        assert not final.startswith(" ")


class TestFourPlayerHelp:
    def test_the_help_explains_second_deck_cards_and_which_bombs_double(self) -> None:
        with _playing("--variant", "4p", "--rounds", "1", "--clock", "0", "--seed", SEED) as child:
            child.expect(r"Your (bid|play) .*> ")
            child.sendline("h")
            child.expect(r"' marks a card of the second deck")
            child.expect(r"only a rocket or a bomb of 6 or more cards doubles the stake")
            child.sendline("q")
            child.expect(pexpect.EOF)
