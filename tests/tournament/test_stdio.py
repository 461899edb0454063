"""The stdio protocol: requests from views, replies judged (garbage, illegal, or a decision)."""

from __future__ import annotations

import json

from dizhu.client.cards import format_cards, parse_cards
from dizhu.tournament import stdio
from dizhu.tournament.players import CappedLog
from dizhu.v1 import cards_pb2, rules_service_pb2, table_pb2


def view() -> table_pb2.TableView:
    seats = [table_pb2.SeatView(seat=s, occupied=True, player_name=n, cards_left=17) for s, n in enumerate("abc")]
    return table_pb2.TableView(
        settings=table_pb2.TableSettings(variant=cards_pb2.VARIANT_THREE_PLAYER),
        phase=table_pb2.PHASE_PLAY,
        seats=seats,
        your_seat=1,
        turn_seat=1,
        landlord_seat=0,
        your_hand=parse_cards("3c 3d 5h 9s"),
        trick=table_pb2.Trick(leader_seat=0, plays=[table_pb2.TrickPlay(seat=0, cards=parse_cards("4c"))]),
        to_beat=table_pb2.TrickPlay(seat=0, cards=parse_cards("4c")),
    )


class TestRequests:
    def test_a_play_request_carries_the_view_the_legal_moves_and_the_clock(self) -> None:
        legal = rules_service_pb2.ListLegalMovesResponse(
            moves=[rules_service_pb2.LegalMove(cards=parse_cards("5h"))], can_pass=True
        )
        message = stdio.request(3, "g00001", view(), 4200, legal)
        assert json.loads(json.dumps(message)) == message  # plain JSON
        assert (message["protocol"], message["id"], message["type"], message["time_left_ms"]) == (
            stdio.PROTOCOL,
            3,
            "play",
            4200,
        )
        assert message["legal"] == ["5h"]
        assert message["can_pass"] is True
        assert message["view"]["hand"] == "3c 3d 5h 9s"
        assert message["view"]["seat"] == 1
        assert message["view"]["landlord"] == 0
        assert message["view"]["to_beat"] == "4c"
        assert message["view"]["trick"] == [{"seat": 0, "cards": "4c"}]

    def test_a_bid_request_has_no_moves(self) -> None:
        message = stdio.request(1, "g00001", view(), None)
        assert message["type"] == "bid"
        assert "legal" not in message

    def test_a_bid_request_carries_the_bids_the_seat_may_make(self) -> None:
        bidding = view()
        bidding.phase = table_pb2.PHASE_AUCTION
        bidding.legal_bids.extend([0, 2, 3])
        message = stdio.request(1, "g00001", bidding, None)
        assert message["view"]["legal_bids"] == [0, 2, 3]


class TestReplies:
    def test_cards_of_the_hand_are_a_decision(self) -> None:
        reply = stdio.judge_reply({"id": 1, "cards": "3 3"}, "play", view())
        assert reply.fault is None
        assert format_cards(reply.cards) == "3c 3d"

    def test_an_empty_play_passes(self) -> None:
        assert stdio.judge_reply({"id": 1, "cards": ""}, "play", view()) == stdio.Reply(None)

    def test_cards_the_hand_lacks_go_to_the_referee(self) -> None:
        reply = stdio.judge_reply({"id": 1, "cards": "RJ"}, "play", view())
        assert reply.fault is None
        assert format_cards(reply.cards) == "RJ"

    def test_notation_that_names_no_card_is_illegal(self) -> None:
        assert stdio.judge_reply({"id": 1, "cards": "3c 3c"}, "play", view()).fault == "illegal"
        assert stdio.judge_reply({"id": 1, "bid": 7}, "bid", view()).fault == "illegal"

    def test_the_wrong_shape_is_garbage(self) -> None:
        assert stdio.judge_reply({"id": 1, "bid": 1}, "play", view()).fault == "garbage"
        assert stdio.judge_reply({"id": 1, "cards": "3"}, "bid", view()).fault == "garbage"
        assert stdio.judge_reply({"id": 1, "bid": True}, "bid", view()).fault == "garbage"
        assert stdio.parse_line(b"not json") is None
        assert stdio.parse_line(b"[1, 2]") is None


class TestCappedLog:
    def test_keeps_the_head_and_the_tail(self) -> None:
        log = CappedLog(10)
        for chunk in (b"abc", b"defgh", b"ijklmnop"):
            log.write(chunk)
        assert log.text() == "abcde\n[... 6 bytes dropped ...]\nlmnop"

    def test_below_the_cap_everything(self) -> None:
        log = CappedLog(100)
        log.write(b"hello\n")
        assert log.text() == "hello\n"
