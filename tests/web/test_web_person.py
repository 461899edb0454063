"""What a person at the web table meets, in Debian's chromium: the controls on the screen, the lobby,
why a selection is no legal play, a refused create, a player who left, the round in the header, words.

Every table is played through the SDK over native gRPC (seats of pre-assigned players), so that
each page opens on a position the test knows; the page holds seat 0's token, as after a reload.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable

from playwright.async_api import Browser, Dialog, Page, Request, Route, ViewportSize, expect

from dizhu.client import TableClient, to_beat
from dizhu.client.cards import format_cards
from dizhu.v1 import table_pb2, table_service_pb2
from tests.support.web import BROWSER_MODULE, WebReferee, shown_box
from tests.support.web_protocols import GET_TABLE, WATCH_TABLE, grpc_web_frame
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
LAPTOP: ViewportSize = {"width": 1280, "height": 800}
PHONE: ViewportSize = {"width": 375, "height": 740}
MINE = re.compile(r"\bmine\b")


async def _seat_page(browser: Browser, referee: WebReferee, table_id: str, token: str, viewport: ViewportSize) -> Page:
    """Seat 0's page on the table (its token kept, as the page keeps it), scrolled to the bottom and reloaded."""
    page = await browser.new_page(viewport=viewport)
    await page.goto(referee.base_url)
    await page.evaluate(f"localStorage.setItem('dizhu.seat.{table_id}', '{token}')")
    await page.goto(f"{referee.base_url}/?table={table_id}")
    await expect(page.locator("[data-testid=seat-0]")).to_have_class(MINE, timeout=STEP_MS)
    # A reload keeps the place scrolled to: the controls must be on the screen from anywhere.
    await page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    await page.reload()
    return page


async def _on_screen(page: Page, viewport: ViewportSize, *testids: str) -> None:
    """Each element is wholly within the screen, as it stands (nothing scrolled for it)."""
    for testid in testids:
        box = await shown_box(page.locator(f"[data-testid={testid}]").first)
        assert box["y"] >= 0, f"{testid} starts above the screen ({box})"
        assert box["y"] + box["height"] <= viewport["height"], f"{testid} ends below the screen ({box})"


async def _four_players(creator: TableClient) -> tuple[str, list[TableClient], list[str]]:
    created = await creator.create_table(
        variant="4p",
        player_names=["Ann", "Bob", "Cyd", "Dee"],
        round_limit=1,
        seeds=[bytes(range(32))],
        next_round=table_pb2.NEXT_ROUND_WHEN_ALL_SETTLED,
    )
    tokens = [entry.token for entry in sorted(created.seat_tokens, key=lambda entry: entry.seat)]
    return created.table_id, [creator.for_seat(token, created.table_id) for token in tokens], tokens


async def _until(
    seats: list[TableClient], done: Callable[[table_pb2.TableView], bool], *, others_bid: int = 3
) -> table_pb2.TableView:
    """Seats bid (``others_bid`` for another seat, a pass for seat 0) and play lowest singles until
    ``done(seat 0's view)``."""
    for _ in range(400):
        view = await seats[0].get()
        if done(view):
            return view
        assert view.phase in (table_pb2.PHASE_AUCTION, table_pb2.PHASE_PLAY), "the round ended first"
        if view.phase == table_pb2.PHASE_AUCTION:
            await seats[view.turn_seat].bid(0 if view.turn_seat == 0 else others_bid, expected_version=view.version)
        else:
            await play_chosen(seats[view.turn_seat], lowest_single)
    raise AssertionError("never reached")


def _asked_to_bid(view: table_pb2.TableView) -> bool:
    return view.phase == table_pb2.PHASE_AUCTION and view.turn_seat == 0


def _following(view: table_pb2.TableView, plays: int = 1) -> bool:
    return (
        view.phase == table_pb2.PHASE_PLAY
        and view.turn_seat == 0
        and bool(to_beat(view))
        and len(view.trick.plays) >= plays
    )


class TestTheControlsStayOnTheScreen:
    async def test_4p_following_on_a_laptop_and_a_phone(self, page_referee: WebReferee, browser: Browser) -> None:
        async with page_referee.native() as creator:
            table_id, seats, tokens = await _four_players(creator)
            await _until(seats, _following)
        for viewport in (LAPTOP, PHONE):
            page = await _seat_page(browser, page_referee, table_id, tokens[0], viewport)
            await expect(page.locator("[data-testid=kitty]")).to_be_visible(timeout=STEP_MS)
            await expect(page.locator("[data-testid=pass]")).to_be_enabled(timeout=STEP_MS)
            await _on_screen(page, viewport, "hand", "play", "pass")
            await page.close()

    async def test_a_long_3p_trick_and_every_phase(self, page_referee: WebReferee, browser: Browser) -> None:
        async with page_referee.native() as creator:
            table_id, seats, tokens = await seated_table(creator)
            await _until(seats, _asked_to_bid, others_bid=0)
            pages = [await _seat_page(browser, page_referee, table_id, tokens[0], size) for size in (LAPTOP, PHONE)]
            for page, size in zip(pages, (LAPTOP, PHONE), strict=True):
                await expect(page.locator("[data-testid=bid-0]")).to_be_enabled(timeout=STEP_MS)
                await _on_screen(page, size, "hand", "bid-0", "bid-3")
            # Ann bids 3 and leads; singles, lowest first, until it is her turn in a trick of five plays or more.
            await bid_to_the_play(seats)
            await _until(seats, lambda view: _following(view, plays=5))
            for page, size in zip(pages, (LAPTOP, PHONE), strict=True):
                await page.reload()
                await expect(page.locator("[data-testid=pass]")).to_be_enabled(timeout=STEP_MS)
                await expect(page.locator("[data-testid=trick] li")).to_have_count(
                    len((await seats[0].get()).trick.plays), timeout=STEP_MS
                )
                await _on_screen(page, size, "hand", "play", "pass")
            await _play_the_round_out_from_here(seats)
            for page in pages:
                await page.reload()
                await expect(page.locator("[data-testid=standings] li")).to_have_count(3, timeout=STEP_MS)


async def _play_the_round_out_from_here(seats: list[TableClient]) -> None:
    for _ in range(400):
        view = await seats[0].get()
        if view.phase != table_pb2.PHASE_PLAY:
            return
        await play_chosen(seats[view.turn_seat], lambda moves, beat: moves[0] if moves else None)
    raise AssertionError("the round did not end")


async def _allowing_only(route: Route, amounts: list[int]) -> None:
    """GetTable's answer (gRPC-Web: one message, then the trailers) with the view's legal_bids set to ``amounts``."""
    answer = await route.fetch()
    body = await answer.body()
    assert body[0] == 0, "a compressed or trailers-only answer"
    end = 5 + struct.unpack(">I", body[1:5])[0]
    response = table_service_pb2.GetTableResponse.FromString(body[5:end])
    del response.table.legal_bids[:]
    response.table.legal_bids.extend(amounts)
    # Playwright hands the body over decoded: it goes back with no encoding nor the old length.
    headers = {
        name: value for name, value in answer.headers.items() if name not in ("content-encoding", "content-length")
    }
    await route.fulfill(
        status=answer.status, headers=headers, body=grpc_web_frame(response.SerializeToString()) + body[end:]
    )


class TestTheBids:
    async def test_the_page_offers_the_bids_of_the_views_legal_bids_alone(
        self, page_referee: WebReferee, browser: Browser
    ) -> None:
        """Seat 0 is asked to bid with no bid made yet; the views its page reads say it may pass or
        bid 2 (the referee would take 1 and 3 as well): Bid 1 and Bid 3 are off and their keys send
        nothing, as a page working the bids out from highest_bid would not do. Bid 2 is taken."""
        async with page_referee.native() as creator:
            table_id, seats, tokens = await seated_table(creator)
            asked = await _until(seats, _asked_to_bid, others_bid=0)
            assert (asked.highest_bid, list(asked.legal_bids)) == (0, [0, 1, 2, 3])
            page = await browser.new_page(viewport=LAPTOP)
            # Every view the page gets is GetTable's: the stream, whose snapshot would say otherwise, never opens.
            await page.route(f"**{WATCH_TABLE}", lambda route: route.abort())
            await page.route(f"**{GET_TABLE}", lambda route: _allowing_only(route, [0, 2]))
            bids_sent: list[Request] = []
            page.on("request", lambda request: bids_sent.append(request) if request.url.endswith("/Bid") else None)
            await page.goto(page_referee.base_url)
            await page.evaluate(f"localStorage.setItem('dizhu.seat.{table_id}', '{tokens[0]}')")
            await page.goto(f"{page_referee.base_url}/?table={table_id}")
            await expect(page.locator("[data-testid=bid-0]")).to_be_enabled(timeout=STEP_MS)
            await expect(page.locator("[data-testid=bid-2]")).to_be_enabled()
            await expect(page.locator("[data-testid=bid-1]")).to_be_disabled()
            await expect(page.locator("[data-testid=bid-3]")).to_be_disabled()
            await expect(page.locator("[data-testid=seats]")).to_contain_text("Auction: highest bid none yet")
            await page.keyboard.press("1")
            await page.keyboard.press("3")
            await page.click("[data-testid=bid-2]")
            await expect(page.locator("[data-testid=bid-2]")).to_have_count(0, timeout=STEP_MS)
            made = [(action.seat, action.bid) for action in (await seats[0].get()).history if action.HasField("bid")]
            assert made[-1] == (0, 2), made
            assert len(bids_sent) == 1, [request.url for request in bids_sent]


class TestTheLobby:
    async def test_the_opponents_are_the_bundled_bots_strongest_first(
        self, page_referee: WebReferee, browser: Browser
    ) -> None:
        page = await browser.new_page(viewport=LAPTOP)
        await page.goto(page_referee.base_url)
        options = page.locator("[data-testid=bots] option")
        await expect(options).to_have_text(
            ["expert bots", "learned bots", "heuristic bots", "random bots"], timeout=STEP_MS
        )
        assert await options.evaluate_all("options => options.map(option => option.value)") == [
            *("expert", "learned", "heuristic", "random")
        ]
        await expect(page.locator("[data-testid=bots]")).to_have_value("heuristic")

    async def test_create_comes_first_and_new_tables_show_up_alone(
        self, page_referee: WebReferee, browser: Browser
    ) -> None:
        async with page_referee.native() as creator:
            for _ in range(20):
                await creator.create_table()
            for viewport in (LAPTOP, PHONE):
                page = await browser.new_page(viewport=viewport)
                await page.goto(page_referee.base_url)
                await expect(page.locator("[data-testid=open-table]").first).to_be_visible(timeout=STEP_MS)
                await _on_screen(page, viewport, "create")
                await page.close()
            page = await browser.new_page(viewport=LAPTOP)
            await page.goto(page_referee.base_url)
            await expect(page.locator("[data-testid=open-table]").first).to_be_visible(timeout=STEP_MS)
            created = await creator.create_table()
            # Found without Refresh (the first page lists the newest tables first).
            await expect(page.locator(f'[data-table="{created.table_id}"]')).to_be_visible(timeout=STEP_MS)

    async def test_a_create_refused_for_the_name_leaves_no_table_behind(
        self, page_referee: WebReferee, browser: Browser
    ) -> None:
        page = await browser.new_page(viewport=LAPTOP)
        await page.goto(page_referee.base_url)
        await page.fill("[data-testid=name]", "a\tb")  # no printable name: the referee refuses the seat
        await page.click("[data-testid=create]")
        await expect(page.locator("[data-testid=refusal]")).to_contain_text("player_name", timeout=STEP_MS)
        async with page_referee.native() as lister:
            assert list((await lister.list_tables()).tables) == []

    async def test_an_unreachable_referee_is_said_to_be_unreachable(
        self, page_referee: WebReferee, browser: Browser
    ) -> None:
        from dizhu.testing import free_port

        page = await browser.new_page(viewport=LAPTOP)
        # The lobby from the referee, its calls to a port where nothing listens (?api=).
        await page.goto(f"{page_referee.base_url}/?api=http://127.0.0.1:{free_port()}")
        refusal = page.locator("[data-testid=refusal]")
        await expect(refusal).to_contain_text("The referee could not be reached", timeout=STEP_MS)
        await expect(refusal).not_to_contain_text("code Unknown")
        await expect(refusal).not_to_contain_text("refused")


class TestWhyASelectionIsNoLegalPlay:
    async def test_the_page_says_why_in_the_referees_words(self, page_referee: WebReferee, browser: Browser) -> None:
        async with page_referee.native() as creator:
            table_id, seats, tokens = await seated_table(creator)
            view = await _until(seats, lambda view: _following(view) and to_beat(view) is not None)
        beat = to_beat(view)
        assert beat is not None
        page = await _seat_page(browser, page_referee, table_id, tokens[0], LAPTOP)
        selection = page.locator("[data-testid=selection]")
        await expect(page.locator("[data-testid=pass]")).to_be_enabled(timeout=STEP_MS)
        for card in two_unlike_cards(view):
            await page.click(f'[data-testid=hand] [data-card="{format_cards([card])}"]')
        await expect(selection).to_contain_text(
            "Those cards are not a legal play. They are no combination", timeout=STEP_MS
        )
        await page.click("[data-testid=clear]")
        # A single that is no higher than the single to beat (the lowest lead: Ann holds a lower or equal one).
        assert len(beat) == 1, beat
        lower = min(view.your_hand, key=lambda card: card.rank)
        assert lower.rank <= beat[0].rank, (lower, beat)
        await page.click(f'[data-testid=hand] [data-card="{format_cards([lower])}"]')
        await expect(selection).to_contain_text("That play does not beat the play to beat.", timeout=STEP_MS)
        await expect(selection).to_contain_text("is not higher than single")
        await expect(page.locator("[data-testid=play]")).to_be_disabled()


def _confirmed(page: Page, said: list[str]) -> None:
    """Accept every dialog of ``page``, keeping what it said."""

    async def accept(dialog: Dialog) -> None:
        said.append(dialog.message)
        await dialog.accept()

    page.on("dialog", accept)


class TestLeaving:
    async def test_mid_play_the_dialog_says_forfeit_and_the_leaver_keeps_their_name(
        self, page_referee: WebReferee, browser: Browser
    ) -> None:
        async with page_referee.native() as creator:
            table_id, seats, tokens = await seated_table(creator)
            await _until(seats, _following)
        page = await _seat_page(browser, page_referee, table_id, tokens[0], LAPTOP)
        said: list[str] = []
        _confirmed(page, said)
        await page.click("[data-testid=leave]")
        standings = page.locator("[data-testid=standings]")
        await expect(standings).to_contain_text("Ann (left): ", timeout=STEP_MS)
        await expect(page.locator("[data-testid=change-0]")).to_contain_text("Ann (left)")
        await expect(page.locator("[data-testid=result]")).not_to_contain_text("(free)")
        await expect(page.locator("[data-testid=result]")).to_contain_text(
            "The table is closed (its last round is over)"
        )
        await expect(page.locator("[data-testid=stream-status]")).to_have_text("the table is closed", timeout=STEP_MS)
        assert said, "no dialog"
        assert "forfeits" in said[0], said

    async def test_in_the_auction_the_dialog_says_abandon_and_no_empty_last_trick_is_shown(
        self, page_referee: WebReferee, browser: Browser
    ) -> None:
        async with page_referee.native() as creator:
            table_id, seats, tokens = await seated_table(creator)
            await _until(seats, _asked_to_bid, others_bid=0)
        page = await _seat_page(browser, page_referee, table_id, tokens[0], LAPTOP)
        said: list[str] = []
        _confirmed(page, said)
        await expect(page.locator("[data-testid=bid-0]")).to_be_enabled(timeout=STEP_MS)
        await page.click("[data-testid=leave]")
        await expect(page.locator("[data-testid=payout]")).to_contain_text("Nothing was paid", timeout=STEP_MS)
        await expect(page.locator("[data-testid=standings]")).to_contain_text("Ann (left): 0")
        await expect(page.locator("body")).not_to_contain_text("The last trick")
        assert said, "no dialog"
        assert "abandons the round" in said[0], said
        assert "forfeit" not in said[0], said


class TestTheRoundInTheHeader:
    async def test_between_rounds_it_names_the_round_that_is_over(
        self, page_referee: WebReferee, browser: Browser
    ) -> None:
        async with page_referee.native() as creator:
            table_id, seats, tokens = await seated_table(creator, round_limit=2, seeds=(bytes(range(32)),) * 2)
            over = await play_the_round_out(seats)
        assert (over.phase, over.round, over.last_settlement.round) == (table_pb2.PHASE_ROUND_OVER, 2, 1)
        page = await _seat_page(browser, page_referee, table_id, tokens[0], LAPTOP)
        await expect(page.locator("[data-testid=phase]")).to_have_text("round 1 of 2 over", timeout=STEP_MS)
        await _on_screen(page, LAPTOP, "next-round")


class TestReplayLinks:
    async def test_a_round_out_of_range_is_no_round_number(self, page_referee: WebReferee, browser: Browser) -> None:
        page = await browser.new_page(viewport=LAPTOP)
        for round_text in ("-1", "0", "4294967296"):
            await page.goto(f"{page_referee.base_url}/?replay=sometable&round={round_text}")
            await expect(page.locator("[data-testid=refusal]")).to_contain_text(
                f"“{round_text}”, is no round number: rounds are numbered 1, 2, 3, … up to 4294967295",
                timeout=STEP_MS,
            )
