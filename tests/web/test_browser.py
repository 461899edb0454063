"""The reference web table in a real browser: Debian's chromium driven by Playwright.

A person creates a table against two bots, plays a whole round through the page (bidding,
choosing legal moves, one refused play whose reason must show), reloads the page mid-round
and carries on in the same seat, sees the settlement and the seed checked against its
commitment, then opens the round's replay (from the referee and from a JSON file). The page
never shows a card that the seat may not see. A spectator's page shows no hand at all.

The browser is the system's ``chromium`` (``$CHROMIUM`` to point elsewhere); Playwright's own
browser builds are never downloaded. A missing chromium fails the test, saying how to install
it. Screenshots go to ``$DIZHU_SCREENSHOTS`` (``docs/img`` to refresh the documentation's),
else to the test's temporary directory.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from playwright.async_api import Browser, Page, async_playwright, expect
from web_helpers import WebReferee

from dizhu.client import TableClient, to_beat
from dizhu.client.cards import format_cards
from dizhu.v1 import table_pb2, table_service_pb2, table_service_pb2_grpc

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
STEP_MS = 15_000
MINE = re.compile(r"\bmine\b")


def _chromium() -> str:
    path = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        pytest.fail(
            f"no chromium at {path}: the browser tests drive Debian's chromium "
            "(apt-get install -y chromium; .ci/run installs it), or set CHROMIUM to a Chromium executable",
            pytrace=False,
        )
    return path


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=_chromium(), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture
def screenshots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("DIZHU_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


async def _shown_cards(page: Page) -> set[str]:
    """Every card face on the page, in notation with suits (``data-card``)."""
    return set(await page.locator(".card").evaluate_all("cards => cards.map(card => card.dataset.card)"))


def _public_cards(view: table_pb2.TableView) -> set[str]:
    """What anyone may see of the running round: the face-up card, the kitty, the current trick."""
    shown = {format_cards([view.face_up_card])} if view.HasField("face_up_card") else set()
    shown |= {format_cards([card]) for card in view.kitty}
    shown |= {format_cards([card]) for play in view.trick.plays for card in play.cards}
    return shown


async def _seat_view(web_referee: WebReferee, page: Page, table_id: str) -> table_pb2.TableView:
    """The table as the page's seat sees it, read with the token the page keeps."""
    token = await page.evaluate(f"localStorage.getItem('dizhu.seat.{table_id}')")
    assert token, "the page keeps its seat token"
    async with TableClient(web_referee.target, table_id=table_id, token=token) as seat:
        return await seat.get()


async def _new_table(page: Page, browser: Browser, web_referee: WebReferee) -> tuple[str, Page]:
    """A table made through the page's lobby for a person ("Tester") and two bots, and a
    spectator's page on it."""
    await page.goto(web_referee.base_url)
    await page.fill("[data-testid=name]", "Tester")
    await page.fill("[data-testid=rounds]", "1")
    await page.fill("[data-testid=clock-seconds]", "300")
    await page.click("[data-testid=create]")
    await page.wait_for_url("**/?table=*", timeout=STEP_MS)
    table_id = page.url.rsplit("table=", 1)[1]
    await expect(page.locator("[data-testid=hand] .card")).to_have_count(17, timeout=STEP_MS)
    await expect(page.locator("[data-testid=seat-0]")).to_have_class(MINE, timeout=STEP_MS)
    spectator = await browser.new_page()
    await spectator.goto(f"{web_referee.base_url}/?table={table_id}&spectate=1")
    await expect(spectator.locator("[data-testid=seats]")).to_contain_text("Tester", timeout=STEP_MS)
    await expect(spectator.locator("[data-testid=presence-0]")).to_have_attribute("data-connected", "true")
    return table_id, spectator


async def _play_the_round(
    page: Page, spectator: Page, web_referee: WebReferee, table_id: str, screenshots: Path
) -> tuple[bool, bool]:
    """The person plays the round through the page, checking at each turn that neither page
    shows a hidden card; when leading first, it tries a play that is no combination, and after
    its second play it reloads the page. Whether it could do both (the deal decides)."""
    refused = reloaded = False
    plays = 0
    result = page.locator("[data-testid=result]")
    waiting = page.locator("[data-testid=my-turn], [data-testid=result]:not([hidden])").first
    while not await result.is_visible():
        await expect(waiting).to_be_visible(timeout=STEP_MS * 4)
        if await result.is_visible():
            break
        version = await page.get_attribute("[data-testid=table]", "data-version")
        if await page.locator("[data-testid=bid-0]").is_visible():
            bid_three = page.locator("[data-testid=bid-3]")
            await (bid_three if await bid_three.is_enabled() else page.locator("[data-testid=bid-0]")).click()
            await _moved_on(page, version)
            continue
        moves = page.locator("[data-testid=legal-moves] li")
        await expect(moves.first).to_be_visible(timeout=STEP_MS)
        view = await _seat_view(web_referee, page, table_id)
        assert view.turn_seat == view.your_seat == 0
        # Nothing on the page but this seat's hand and what is public.
        mine = {format_cards([card]) for card in view.your_hand}
        assert await _shown_cards(page) <= mine | _public_cards(view)
        spectator_cards = await _shown_cards(spectator)
        assert spectator_cards <= _public_cards(view), "a spectator saw a hidden card"
        assert not await spectator.locator("[data-testid=hand]").count()
        if not refused and not await page.locator("[data-testid=pass]").is_enabled():
            # Leading: two cards of different ranks (never the two jokers) are no combination.
            ranks = sorted({card.rank for card in view.your_hand})
            chosen = [next(c for c in view.your_hand if c.rank == rank) for rank in ranks[:2]]
            for card in chosen:
                await page.click(f'[data-testid=hand] [data-card="{format_cards([card])}"]')
            await page.click("[data-testid=play]")
            await expect(page.locator("[data-testid=refusal-reason]")).to_have_text(
                "ILLEGAL_COMBINATION", timeout=STEP_MS
            )
            await expect(page.locator("[data-testid=refusal]")).to_contain_text("is no combination")
            await page.click("[data-testid=clear]")
            refused = True
        if plays == 2 and not reloaded:
            held = await page.locator("[data-testid=hand] .card").count()
            await page.reload()
            await expect(page.locator("[data-testid=hand] .card")).to_have_count(held, timeout=STEP_MS)
            await expect(page.locator("[data-testid=seat-0]")).to_have_class(MINE, timeout=STEP_MS)
            await expect(page.locator("[data-testid=legal-moves] li").first).to_be_visible(timeout=STEP_MS)
            if await page.locator("[data-testid=legal-move]").count():  # none when nothing beats the trick
                await page.locator("[data-testid=legal-move]").first.click()
            await page.screenshot(path=str(screenshots / "web-table.png"), full_page=True)
            reloaded = True
        chip = page.locator("[data-testid=legal-move]")
        if await chip.count():
            await chip.first.click()
            await page.click("[data-testid=play]")
        else:
            await page.click("[data-testid=pass]")
        plays += 1
        await _moved_on(page, version)
    return refused, reloaded


#: Tables a person plays at most until one lets it lead a trick (a bot may win the auction and
#: every trick; the person bids 3 whenever it may, so that is rare).
_TABLES_TRIED = 6


class TestWebTable:
    async def test_a_person_plays_a_round_against_bots_through_the_page(
        self, web_referee: WebReferee, browser: Browser, screenshots: Path
    ) -> None:
        page = await browser.new_page(viewport={"width": 1100, "height": 860})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        refused = reloaded = False
        for _ in range(_TABLES_TRIED):
            table_id, spectator = await _new_table(page, browser, web_referee)
            refused, reloaded = await _play_the_round(page, spectator, web_referee, table_id, screenshots)
            await spectator.close()
            if refused and reloaded:
                break
        assert refused, f"in {_TABLES_TRIED} rounds the person never led a trick"
        assert reloaded, f"in {_TABLES_TRIED} rounds the person never made three plays"
        result = page.locator("[data-testid=result]")
        await expect(result).to_contain_text("Round 1:")
        await expect(page.locator("[data-testid=seed-check]")).to_contain_text("✓")
        await expect(page.locator("[data-testid=standings] li")).to_have_count(3)
        await page.screenshot(path=str(screenshots / "web-table-result.png"), full_page=True)
        async with TableClient(web_referee.target, table_id=table_id) as anyone:
            final = await anyone.get()
        assert final.phase == table_pb2.PHASE_CLOSED
        assert final.seats[0].player_name == "Tester"

        await page.click("[data-testid=replay-link]")
        await expect(page.locator("[data-testid=replay-step]")).to_contain_text("step 1 /", timeout=STEP_MS)
        await expect(page.locator("[data-testid=replay-seat-0] .card")).to_have_count(17)
        await page.click("[data-testid=replay-next]")
        await expect(page.locator("[data-testid=replay-step]")).to_contain_text("step 2 /")
        await page.click("[data-testid=replay-last]")
        await expect(page.locator("[data-testid=replay-result]")).to_be_visible()
        await expect(page.locator("[data-testid=replay-seed-check]")).to_contain_text("✓")
        await page.screenshot(path=str(screenshots / "web-replay.png"))
        assert errors == []

    async def test_a_replay_json_file_opens_in_the_viewer(self, web_referee: WebReferee, browser: Browser) -> None:
        table_id = await _landlord_wins_a_round(web_referee)
        page = await browser.new_page()
        await page.goto(web_referee.base_url)
        record = {
            "name": "round.json",
            "mimeType": "application/json",
            "buffer": await _replay_json(web_referee, table_id),
        }
        await page.set_input_files("[data-testid=replay-file]", files=[record])  # type: ignore[list-item]
        await expect(page.locator("[data-testid=replay-step]")).to_contain_text("step 1 /", timeout=STEP_MS)
        await page.click("[data-testid=replay-last]")
        await expect(page.locator("[data-testid=replay-result]")).to_contain_text("landlord won")
        await expect(page.locator("[data-testid=replay-seed-check]")).to_contain_text("✓")


async def _moved_on(page: Page, version: str | None) -> None:
    """Wait until the page shows a newer version of the table than ``version``."""
    await expect(page.locator("[data-testid=table]")).not_to_have_attribute(
        "data-version", version or "", timeout=STEP_MS
    )


async def _landlord_wins_a_round(web_referee: WebReferee) -> str:
    """A one-round table where the first bidder bids 3 and leads every trick while the others pass."""
    async with TableClient(web_referee.target) as creator:
        created = await creator.create_table(player_names=["a", "b", "c"], round_limit=1)
        seats = [creator.for_seat(token.token) for token in created.seat_tokens]
        view = created.table
        while view.phase != table_pb2.PHASE_CLOSED:
            turn = seats[view.turn_seat]
            view = await turn.get()
            if view.phase == table_pb2.PHASE_AUCTION:
                view = await turn.bid(3)
                continue
            legal = await turn.legal_moves(list(view.your_hand), to_beat(view))
            view = (await turn.play([] if legal.can_pass else list(legal.moves[0].cards))).table
    return created.table_id


async def _replay_json(web_referee: WebReferee, table_id: str) -> bytes:
    async with grpc.aio.insecure_channel(web_referee.target) as channel:
        stub = table_service_pb2_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
        answer = await stub.GetReplay(table_service_pb2.GetReplayRequest(table_id=table_id, round=1))
    return str(answer.json).encode()
