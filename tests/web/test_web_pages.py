"""The web table's pages where a person meets something other than a plain turn, in Debian's chromium.

Final standings with tied balances; the play to beat in a long trick, on a phone's screen;
links that lead nowhere (a round that is no number, a round never played, a table that does
not exist, a file that is no replay) and refusals, each said in words with a way on; Play
refused to a selection the page knows is not legal; the lobby telling apart the tables
worth joining from the ones waiting for someone who may never come back.

Every table here is played through the SDK over native gRPC (seats of pre-assigned players),
so that each page opens on a position the test knows.
"""

from __future__ import annotations

import asyncio
import re

import pytest
from playwright.async_api import Browser, FilePayload, Page, ViewportSize, expect

from dizhu.client import to_beat
from dizhu.client.cards import format_cards
from dizhu.v1 import table_pb2
from tests.support.web import BROWSER_MODULE, SOON_S, WebReferee, shown_box
from tests.support.web_tables import (
    bid_to_the_play,
    lowest_single,
    play_chosen,
    play_the_round_out,
    seated_table,
    two_unlike_cards,
)

pytestmark = BROWSER_MODULE

STEP_MS = 15_000
PHONE: ViewportSize = {"width": 375, "height": 740}


async def _page(browser: Browser, viewport: ViewportSize | None = None) -> Page:
    return await browser.new_page(viewport=viewport or {"width": 1100, "height": 860})


def _places(balances: list[int]) -> list[int]:
    """Standard competition ranking, best first (docs/tables.md: 3, 3, -6 give 1, 1, 3)."""
    ordered = sorted(balances, reverse=True)
    return [1 + sum(other > balance for other in balances) for balance in ordered]


class TestStandings:
    async def test_tied_final_balances_share_a_place(self, page_referee: WebReferee, browser: Browser) -> None:
        async with page_referee.native() as creator:
            table_id, seats, _ = await seated_table(creator)
            closed = await play_the_round_out(seats)
        assert closed.phase == table_pb2.PHASE_CLOSED
        balances = [seat.balance for seat in closed.seats]
        # In 3p the two farmers always end equal: a tie to share a place.
        assert len(set(balances)) < len(balances)
        page = await _page(browser)
        await page.goto(f"{page_referee.base_url}/?table={table_id}&spectate=1")
        standing = page.locator("[data-testid=standings] li")
        await expect(standing).to_have_count(3, timeout=STEP_MS)
        # The place each row shows is its list number (the <li>'s value).
        shown = await standing.evaluate_all("rows => rows.map(row => row.value)")
        assert shown == _places(balances)
        texts = await standing.all_inner_texts()
        assert [int(text.rsplit(": ", 1)[1]) for text in texts] == sorted(balances, reverse=True)


class TestThePlayToBeat:
    async def test_it_is_marked_and_a_long_trick_leaves_the_hand_on_a_phone_screen(
        self, page_referee: WebReferee, browser: Browser
    ) -> None:
        async with page_referee.native() as creator:
            table_id, seats, tokens = await seated_table(creator)
            await bid_to_the_play(seats)
            # Singles, lowest first, until it is Ann's turn in a trick of five plays or more.
            for _ in range(200):
                view = await seats[0].get()
                assert view.phase == table_pb2.PHASE_PLAY, "the round ended before a long trick"
                if view.turn_seat == 0 and len(view.trick.plays) >= 5 and to_beat(view):
                    break
                await play_chosen(seats[view.turn_seat], lowest_single)
            beat = to_beat(view)
            assert beat is not None
            page = await _page(browser, PHONE)
            await page.goto(page_referee.base_url)
            await page.evaluate(f"localStorage.setItem('dizhu.seat.{table_id}', '{tokens[0]}')")
            await page.goto(f"{page_referee.base_url}/?table={table_id}")
            mark = page.locator("[data-testid=trick] [data-testid=to-beat]")
            await expect(mark).to_have_count(1, timeout=STEP_MS)
            await expect(mark).to_have_text("to beat")
            marked = page.locator("[data-testid=trick] li.to-beat .card")
            assert sorted(await marked.evaluate_all("cards => cards.map(card => card.dataset.card)")) == sorted(
                format_cards([card]) for card in beat
            )
            # The hand's first row is on the screen, however long the trick.
            await expect(page.locator("[data-testid=legal-group]").first).to_be_visible(timeout=STEP_MS)
            hand = await shown_box(page.locator("[data-testid=hand]"))
            assert hand["y"] + 44 <= PHONE["height"], f"the hand starts at {hand['y']} px, below the screen"
            # The whole trick is one tap away.
            await page.click("[data-testid=trick-toggle]")
            await expect(page.locator("[data-testid=trick] li")).to_have_count(len(view.trick.plays))
            assert all([await item.is_visible() for item in await page.locator("[data-testid=trick] li").all()])

            # Play is refused to a selection the page said is not legal, and given back to a legal one.
            for card in two_unlike_cards(view):
                await page.click(f'[data-testid=hand] [data-card="{format_cards([card])}"]')
            await expect(page.locator("[data-testid=selection]")).to_contain_text("not a legal play")
            await expect(page.locator("[data-testid=play]")).to_be_disabled()
            await page.keyboard.press("p")
            await page.click("[data-testid=clear]")
            await page.click("[data-testid=hint]")
            await expect(page.locator("[data-testid=selection]")).to_contain_text(": a legal play")
            await expect(page.locator("[data-testid=play]")).to_be_enabled()
            assert (await seats[0].get()).version == view.version, "nothing was sent for the illegal selection"


class TestDeadEnds:
    async def test_a_replay_link_whose_round_is_no_number_says_so(
        self, page_referee: WebReferee, browser: Browser
    ) -> None:
        async with page_referee.native() as creator:
            table_id, _, _ = await seated_table(creator)
        page = await _page(browser)
        await page.goto(f"{page_referee.base_url}/?replay={table_id}&round=abc")
        refusal = page.locator("[data-testid=refusal]")
        await expect(refusal).to_contain_text("“abc”, is not a number", timeout=STEP_MS)
        await expect(page.locator("body")).not_to_contain_text("NaN")
        await expect(page.locator("body")).not_to_contain_text("Internal")
        await expect(page.locator("[data-testid=lobby-link]")).to_be_visible()

    async def test_a_replay_link_to_a_round_not_played_says_the_round_does_not_exist(
        self, page_referee: WebReferee, browser: Browser
    ) -> None:
        async with page_referee.native() as creator:
            table_id, _, _ = await seated_table(creator)
        page = await _page(browser)
        await page.goto(f"{page_referee.base_url}/?replay={table_id}&round=3")
        refusal = page.locator("[data-testid=refusal]")
        await expect(refusal).to_contain_text(
            f"Round 3 of table {table_id} does not exist or is not over: it has finished no round yet", timeout=STEP_MS
        )
        await expect(page.locator("body")).not_to_contain_text("TABLE_NOT_FOUND")
        await expect(page.locator("[data-testid=table-link]")).to_be_visible()

    async def test_an_unknown_table_says_so_and_leads_back_to_the_lobby(
        self, page_referee: WebReferee, browser: Browser
    ) -> None:
        page = await _page(browser)
        await page.goto(f"{page_referee.base_url}/?table=nosuchtable")
        await expect(page.locator("[data-testid=refusal]")).to_contain_text(
            "There is no table “nosuchtable”", timeout=STEP_MS
        )
        await page.click("[data-testid=lobby-link]")
        await expect(page.locator("[data-testid=open-tables]")).to_be_visible(timeout=STEP_MS)

    @pytest.mark.parametrize(
        ("content", "said"),
        [
            (b"{not json", "is not JSON at all"),
            (b'{"schema": "dizhu.tournament/v1"}', 'another kind (schema "dizhu.tournament/v1"'),
            (b'{"schema": "dizhu.replay/v1", "deals": []}', "its deals or its result are missing"),
        ],
        ids=["not-json", "other-schema", "no-deals"],
    )
    async def test_a_file_that_is_no_replay_is_said_to_be_none(
        self, page_referee: WebReferee, browser: Browser, content: bytes, said: str
    ) -> None:
        page = await _page(browser)
        await page.goto(page_referee.base_url)
        file: FilePayload = {"name": "round.json", "mimeType": "application/json", "buffer": content}
        await page.set_input_files("[data-testid=replay-file]", files=[file])
        refusal = page.locator("[data-testid=refusal]")
        await expect(refusal).to_contain_text("This file is not a replay the page can show: ", timeout=STEP_MS)
        await expect(refusal).to_contain_text(said)
        await expect(page.locator("body")).not_to_contain_text("SyntaxError")
        await expect(page.locator("[data-testid=lobby-link]")).to_be_visible()

    async def test_a_refusal_is_said_in_words_with_its_code_beside(
        self, page_referee: WebReferee, browser: Browser
    ) -> None:
        async with page_referee.native() as creator:
            table_id, _, _ = await seated_table(creator)
        page = await _page(browser)
        await page.goto(page_referee.base_url)
        await page.fill("[data-testid=table-id-input]", table_id)
        await page.click("[data-testid=join]")
        await expect(page.locator("[data-testid=refusal-words]")).to_have_text(
            "This table has no free seat.", timeout=STEP_MS
        )
        await expect(page.locator("[data-testid=refusal-reason]")).to_have_text("TABLE_FULL")


class TestLobby:
    async def test_each_table_shows_its_id_and_whether_anyone_may_finish_it(
        self, page_referee: WebReferee, browser: Browser
    ) -> None:
        async with page_referee.native() as creator:
            fresh = (await creator.create_table(round_limit=2)).table_id
            waiting, seats, _ = await seated_table(creator, round_limit=2)
            over = await play_the_round_out(seats)
            assert over.phase == table_pb2.PHASE_ROUND_OVER
            left, seats, _ = await seated_table(creator, round_limit=2)
            await play_the_round_out(seats)
            await seats[2].leave()
            await asyncio.gather(seats[0].settle(), seats[1].settle())
            assert (await seats[0].get()).phase == table_pb2.PHASE_WAITING_FOR_PLAYERS
        page = await _page(browser, PHONE)
        await page.goto(page_referee.base_url)
        rows = page.locator("[data-testid=open-table]")
        await expect(rows).to_have_count(3, timeout=STEP_MS)
        expected = {
            fresh: "new, waiting for players (3 free seats)",
            waiting: "round 1 of 2 over, waiting for every seat's Next round (settle)",
            left: "a player left after round 1 of 2: waiting for someone to take the 1 free seat",
        }
        for table_id, state in expected.items():
            row = page.locator(f'[data-testid=open-table][data-table="{table_id}"]')
            await expect(row.locator("[data-testid=open-table-id]")).to_have_text(table_id, timeout=SOON_S * 1000)
            await expect(row.locator("[data-testid=open-table-state]")).to_have_text(state)
            # Made within the test: its age and last change are "just now" or a few minutes.
            await expect(row.locator("[data-testid=open-table-age]")).to_have_text(
                re.compile(r"^created (just now|\d+ min ago), last changed (just now|\d+ min ago)$")
            )
