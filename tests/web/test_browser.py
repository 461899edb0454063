"""The reference web table in a real browser: Debian's chromium driven by Playwright.

A person creates a table against bots and plays a whole round through the page, in both
variants, once by mouse and once by keyboard alone (3p by mouse at 1,100 px and by keyboard at
375 px; 4p by mouse at 375 px and by keyboard at 1,100 px): bidding, choosing legal moves, an
illegal selection the page itself refuses (Play off, nothing sent), a reload mid-round that
carries on in the same seat, the settlement and the seed checked against its commitment, then
the round's replay (from the referee and from a JSON file). The page never shows a card that the seat may not see; a
spectator's page shows no hand at all. Every phase is photographed at both widths, and
axe-core runs on the lobby, a seat, a spectator's page, the end of a round and the replay.

The browser is the system's ``chromium`` (``$CHROMIUM`` to point elsewhere); Playwright's own
browser builds are never downloaded. A missing chromium fails the test, saying how to install
it. Screenshots go to ``$DIZHU_SCREENSHOTS`` (``docs/img`` to refresh the documentation's),
else to the test's temporary directory.
"""

from __future__ import annotations

import collections
import os
import re
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from playwright.async_api import (
    Browser,
    FloatRect,
    Page,
    Request,
    ViewportSize,
    expect,
)

from dizhu.client import TableClient, to_beat
from dizhu.client.cards import format_cards
from dizhu.v1 import table_pb2, table_service_pb2, table_service_pb2_grpc
from tests.support.shared_builds import npm_ci
from tests.support.web import BROWSER_MODULE, WebReferee, shown_box
from tests.support.web_tables import two_unlike_cards

pytestmark = BROWSER_MODULE

STEP_MS = 15_000
MINE = re.compile(r"\bmine\b")


@pytest.fixture
def screenshots() -> Path | None:
    """Where the pages' screenshots go (docs/img, for docs/front-ends.md), when ``DIZHU_SCREENSHOTS``
    names a folder; otherwise none are taken: a picture asserts nothing, and a run's screenshots
    cost chromium about four CPU seconds. The layout checks of ``_shoot`` run either way."""
    if not (named := os.environ.get("DIZHU_SCREENSHOTS")):
        return None
    folder = Path(named)
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


async def _seat_view(page_referee: WebReferee, page: Page, table_id: str) -> table_pb2.TableView:
    """The table as the page's seat sees it, read with the token the page keeps."""
    token = await page.evaluate(f"localStorage.getItem('dizhu.seat.{table_id}')")
    assert token, "the page keeps its seat token"
    async with TableClient(page_referee.target, table_id=table_id, token=token) as seat:
        return await seat.get()


async def _new_table(page: Page, browser: Browser, page_referee: WebReferee, players: int = 3) -> tuple[str, Page]:
    """A table made through the page's lobby for a person ("Tester") and bots, and a
    spectator's page on it."""
    await page.goto(page_referee.base_url)
    await page.fill("[data-testid=name]", "Tester")
    await page.select_option("[data-testid=variant]", str(players))
    await page.fill("[data-testid=rounds]", "1")
    await page.fill("[data-testid=clock-seconds]", "300")
    await page.click("[data-testid=create]")
    await page.wait_for_url("**/?table=*", timeout=STEP_MS)
    table_id = page.url.rsplit("table=", 1)[1]
    await expect(page.locator("[data-testid=hand] .card")).to_have_count(17 if players == 3 else 25, timeout=STEP_MS)
    await expect(page.locator("[data-testid=seat-0]")).to_have_class(MINE, timeout=STEP_MS)
    spectator = await browser.new_page()
    await spectator.goto(f"{page_referee.base_url}/?table={table_id}&spectate=1")
    await expect(spectator.locator("[data-testid=seats]")).to_contain_text("Tester", timeout=STEP_MS)
    await expect(spectator.locator("[data-testid=presence-0]")).to_have_attribute("data-connected", "true")
    return table_id, spectator


async def _play_the_round(
    page: Page, spectator: Page, page_referee: WebReferee, table_id: str, screenshots: Path | None, players: int
) -> tuple[bool, bool]:
    """The person plays the round through the page with the mouse, checking at each turn that
    neither page shows a hidden card; when leading first, it tries two unlike cards, and after
    its second play it reloads the page. Whether it could do both (the deal decides)."""
    refused = reloaded = False
    plays = 0
    async for _ in _turns(page):
        if await page.locator("[data-testid=bid-0]").is_visible():
            await _shoot(page, screenshots, _shot("web-auction", players))
            bid_three = page.locator("[data-testid=bid-3]")
            await (bid_three if await bid_three.is_enabled() else page.locator("[data-testid=bid-0]")).click()
            continue
        await expect(page.locator("[data-testid=legal-group], [data-testid=legal-moves] p").first).to_be_visible(
            timeout=STEP_MS
        )
        view = await _seat_view(page_referee, page, table_id)
        assert view.turn_seat == view.your_seat == 0
        # Nothing on the page but this seat's hand and what is public.
        mine = {format_cards([card]) for card in view.your_hand}
        assert await _shown_cards(page) <= mine | _public_cards(view)
        spectator_cards = await _shown_cards(spectator)
        assert spectator_cards <= _public_cards(view), "a spectator saw a hidden card"
        assert not await spectator.locator("[data-testid=hand]").count()
        await _every_legal_play_is_listed(page, page_referee, table_id, view)
        await _shows_the_table_as_it_is(page, view)
        await _shows_the_table_as_it_is(spectator, view)
        if not refused and not await page.locator("[data-testid=pass]").is_enabled():
            # Leading: two cards of different ranks (never the two jokers) are refused as no pair.
            for card in two_unlike_cards(view):
                await page.click(f'[data-testid=hand] [data-card="{format_cards([card])}"]')
            await expect(page.locator("[data-testid=selection]")).to_contain_text("not a legal play")
            # The page knows the legal plays: it refuses the selection itself, sending nothing.
            await expect(page.locator("[data-testid=play]")).to_be_disabled()
            await _shoot(page, screenshots, _shot("web-refusal", players))
            await page.click("[data-testid=clear]")
            refused = True
        if plays == 2 and not reloaded:
            held = await page.locator("[data-testid=hand] .card").count()
            await page.reload()
            await expect(page.locator("[data-testid=hand] .card")).to_have_count(held, timeout=STEP_MS)
            await expect(page.locator("[data-testid=seat-0]")).to_have_class(MINE, timeout=STEP_MS)
            await _logs_agree(page, spectator, view)
            reloaded = True
        group = page.locator("[data-testid=legal-group]")
        if plays >= 3 and await group.count():
            # Later turns take the hint button's choice: the lowest legal play, selected.
            await page.click("[data-testid=hint]")
            await expect(page.locator("[data-testid=selection]")).to_contain_text("a legal play")
            await page.click("[data-testid=play]")
        elif await group.count():
            if not await group.first.locator("[data-testid=legal-move]").first.is_visible():
                await group.first.locator("summary").click()
            move = group.first.locator("[data-testid=legal-move]").first
            await move.click()
            # The chosen play shows what it is (its kind and ranks) before it is sent.
            await expect(page.locator("[data-testid=selection]")).to_have_text(
                f"{await move.inner_text()}: a legal play"
            )
            if plays == 1:
                await _shoot(page, screenshots, _shot("web-table", players))
            await page.click("[data-testid=play]")
        else:
            await page.click("[data-testid=pass]")
        plays += 1
    return refused, reloaded


async def _every_legal_play_is_listed(
    page: Page, page_referee: WebReferee, table_id: str, view: table_pb2.TableView
) -> None:
    """Every play the referee lists is on the page (in its kind's group), none left out."""
    async with TableClient(page_referee.target, table_id=table_id) as anyone:
        legal = await anyone.legal_moves(list(view.your_hand), to_beat(view), variant=view.settings.variant)
    await expect(page.locator("[data-testid=legal-move]")).to_have_count(len(legal.moves), timeout=STEP_MS)
    groups = await page.locator("[data-testid=legal-group]").count()
    assert groups <= 8, "plays are grouped by kind"
    assert not await page.get_by_text(re.compile(r"and \d+ more")).count()


async def _logs_agree(page: Page, spectator: Page, view: table_pb2.TableView) -> None:
    """A page opened mid-round tells the round from its first decision, as a spectator's does; newest first."""
    log = page.locator("[data-testid=log] li")
    await expect(log).to_have_count(await spectator.locator("[data-testid=log] li").count(), timeout=STEP_MS)
    assert await log.count() >= len(view.history), "the log tells every decision of the round"
    assert await page.locator("[data-testid=log]").evaluate("ol => ol.reversed"), "numbered newest first"
    assert (
        await page.locator("[data-testid=log] li").all_inner_texts()
        == await spectator.locator("[data-testid=log] li").all_inner_texts()
    )


def _shot(name: str, players: int) -> str:
    """A screenshot's name: ``-4p`` for the four-player table (``_shoot`` adds ``-phone``)."""
    return f"{name}-4p" if players == 4 else name


async def _shoot_both(page: Page, screenshots: Path | None, name: str) -> None:
    """``_shoot`` at both widths (ending at the width the page had)."""
    before = page.viewport_size or DESKTOP
    for viewport in (PHONE, DESKTOP) if before["width"] >= 500 else (DESKTOP, PHONE):
        await page.set_viewport_size(viewport)
        await _shoot(page, screenshots, name)


async def _shoot(page: Page, screenshots: Path | None, name: str) -> None:
    """The page as it is now fits its viewport's width, and its screenshot (``-phone`` below 500 px)
    is taken where ``screenshots`` names a folder."""
    width = (page.viewport_size or {"width": 1100})["width"]
    if screenshots is not None:
        suffix = "-phone" if width < 500 else ""
        await page.screenshot(path=str(screenshots / f"{name}{suffix}.png"), full_page=True)
    assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), (
        f"{name} scrolls sideways at {width} px"
    )
    # Nor is anything cut off at the screen's edges (overflow that is clipped does not scroll).
    outside = await page.evaluate(
        "[...document.body.querySelectorAll('*')].filter(e => { const r = e.getBoundingClientRect();"
        " return r.width > 0 && (r.right > window.innerWidth + 0.5 || r.left < -0.5); })"
        ".map(e => `${e.tagName.toLowerCase()}.${e.className} ${e.dataset.testid ?? ''}`).slice(0, 5)"
    )
    assert outside == [], f"{name} at {width} px: {outside} reach past the screen's edge"


#: Tables a person plays at most until one lets it lead a trick (a bot may win the auction and
#: every trick; the person bids 3 whenever it may, so that is rare).
_TABLES_TRIED = 6
DESKTOP: ViewportSize = {"width": 1100, "height": 860}
PHONE: ViewportSize = {"width": 375, "height": 740}
CJK = re.compile("[\u3000-\u9fff]")
TIMES = "\N{MULTIPLICATION SIGN}"
WEB = Path(__file__).resolve().parents[2] / "web"


@pytest.fixture(scope="session")
def axe_script() -> Path:
    """axe-core's script (web/package.json's dev dependency), installed by ``npm ci`` when missing."""
    script = WEB / "node_modules" / "axe-core" / "axe.min.js"
    npm_ci(WEB, "axe-core/axe.min.js")
    return script


async def _no_serious_violation(page: Page, axe_script: Path, where: str) -> None:
    """axe-core, run inside the page, finds no serious or critical accessibility violation."""
    if not await page.evaluate("typeof window.axe === 'object'"):
        await page.add_script_tag(path=str(axe_script))
    violations = await page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".filter(v => v.impact === 'serious' || v.impact === 'critical')"
        ".map(v => `${v.id} (${v.impact}): ${v.nodes.map(n => n.target.join(' ')).slice(0, 3).join(', ')}`)"
    )
    assert violations == [], f"axe-core on {where}: {violations}"


class _Calls:
    """The calls a page makes to the referee, counted by method."""

    def __init__(self, page: Page) -> None:
        self.by_method: collections.Counter[str] = collections.Counter()
        page.on("request", self._seen)

    def _seen(self, request: Request) -> None:
        if "/dizhu.v1." in request.url:
            self.by_method[request.url.rsplit("/", 1)[1]] += 1


class TestWebTable:
    @pytest.mark.parametrize(
        ("players", "viewport"), [(3, DESKTOP), (4, PHONE)], ids=["3p-mouse-desktop", "4p-mouse-phone"]
    )
    async def test_a_person_plays_a_round_against_bots_by_mouse(
        self,
        page_referee: WebReferee,
        browser: Browser,
        screenshots: Path | None,
        axe_script: Path,
        players: int,
        viewport: ViewportSize,
    ) -> None:
        page, errors = await _person_page(browser, viewport)
        await page.goto(page_referee.base_url)
        await expect(page.locator("[data-testid=open-tables]")).to_contain_text("No open table yet")
        await _no_serious_violation(page, axe_script, "the lobby")
        refused = reloaded = False
        for _ in range(_TABLES_TRIED):
            table_id, spectator = await _new_table(page, browser, page_referee, players)
            refused, reloaded = await _play_the_round(page, spectator, page_referee, table_id, screenshots, players)
            await spectator.close()
            if refused and reloaded:
                break
        assert refused, f"in {_TABLES_TRIED} rounds the person never led a trick"
        assert reloaded, f"in {_TABLES_TRIED} rounds the person never made three plays"
        result = page.locator("[data-testid=result]")
        await expect(result).to_contain_text("Round 1:")
        await expect(page.locator("[data-testid=seed-check]")).to_contain_text("✓")
        await expect(page.locator("[data-testid=standings] li")).to_have_count(players)
        await _the_end_of_the_round_is_told(page, page_referee, table_id)
        await _no_serious_violation(page, axe_script, "the end of a round")
        await _shoot(page, screenshots, _shot("web-table-result", players))
        other = await page.context.new_page()  # a second tab at the other width: the same seat
        await other.set_viewport_size(DESKTOP if viewport == PHONE else PHONE)
        await other.goto(page.url)
        await _the_end_of_the_round_is_told(other, page_referee, table_id)
        await _shoot(other, screenshots, _shot("web-table-result", players))
        await other.close()
        async with TableClient(page_referee.target, table_id=table_id) as anyone:
            final = await anyone.get()
        assert final.phase == table_pb2.PHASE_CLOSED
        assert final.seats[0].player_name == "Tester"

        await page.click("[data-testid=replay-link]")
        await expect(page.locator("[data-testid=replay-step]")).to_contain_text("step 1 /", timeout=STEP_MS)
        await expect(page.locator("[data-testid=replay-seat-0] .card")).to_have_count(17 if players == 3 else 25)
        for seat in final.seats:
            await expect(page.locator(f"[data-testid=replay-name-{seat.seat}]")).to_have_text(seat.player_name)
        await expect(page.locator("[data-testid=replay-text]")).to_contain_text("drew the face-up card")
        await page.click("[data-testid=replay-next]")
        await expect(page.locator("[data-testid=replay-step]")).to_contain_text("step 2 /")
        await expect(page.locator("[data-testid=replay-text]")).not_to_contain_text(re.compile(r"\bseat \d"))
        await page.click("[data-testid=replay-last]")
        await expect(page.locator("[data-testid=replay-result]")).to_be_visible()
        await expect(page.locator("[data-testid=replay-seed-check]")).to_contain_text("✓")
        await expect(page.locator(".replay-page")).not_to_contain_text(re.compile(r"\bseat \d"))
        await _no_serious_violation(page, axe_script, "the replay viewer")
        await _shoot_both(page, screenshots, _shot("web-replay", players))
        assert not CJK.search(await page.locator("body").inner_text())
        assert errors == []

    @pytest.mark.parametrize(
        ("players", "viewport"), [(4, DESKTOP), (3, PHONE)], ids=["4p-keyboard-desktop", "3p-keyboard-phone"]
    )
    async def test_a_person_plays_a_round_by_keyboard_alone(
        self,
        page_referee: WebReferee,
        browser: Browser,
        screenshots: Path | None,
        axe_script: Path,
        players: int,
        viewport: ViewportSize,
    ) -> None:
        page, errors = await _person_page(browser, viewport)
        mine = _Calls(page)
        table_id, spectator = await _new_table(page, browser, page_referee, players=players)
        # The spectator (at the other width) finds the table in the lobby's list of open
        # tables, and watches it.
        await spectator.set_viewport_size(DESKTOP if viewport == PHONE else PHONE)
        await spectator.goto(page_referee.base_url)
        listed = spectator.locator(f'[data-testid=open-table][data-table="{table_id}"]')
        await expect(listed).to_contain_text(f"{players} players", timeout=STEP_MS)
        await expect(listed).to_contain_text("Tester")
        await _no_serious_violation(spectator, axe_script, "the lobby with open tables")
        await _shoot_both(spectator, screenshots, _shot("web-lobby", players))
        calls = _Calls(spectator)
        await listed.locator("[data-testid=watch-table]").click()
        await spectator.wait_for_url(f"**/?table={table_id}&spectate=1", timeout=STEP_MS)
        await expect(spectator.locator("[data-testid=seats]")).to_contain_text("Tester", timeout=STEP_MS)
        events = await _count_events(page_referee, table_id)
        await _no_serious_violation(spectator, axe_script, "a spectator's page")
        await _shoot_both(spectator, screenshots, _shot("web-spectator", players))
        refused = checked = selected_by_keys = False
        decisions = play_turns = 0
        async for _ in _turns(page):
            view = await _seat_view(page_referee, page, table_id)
            if not checked:
                await _seats_sit_around_the_table(page, view)
                await _copies_look_apart(page, view)
                await _no_serious_violation(page, axe_script, "a seat")
                checked = True
            await _shows_the_table_as_it_is(spectator, await _spectator_view(page_referee, table_id))
            decisions += 1
            if await page.locator("[data-testid=bid-0]").is_visible():
                await _shoot(page, screenshots, _shot("web-auction", players))
                await page.keyboard.press("3" if await page.locator("[data-testid=bid-3]").is_enabled() else "0")
                continue
            play_turns += 1
            await expect(page.locator("[data-testid=legal-group], [data-testid=legal-moves] p").first).to_be_visible(
                timeout=STEP_MS
            )
            await _shows_the_table_as_it_is(page, view)
            shown = await page.locator("[data-testid=hand] .card").evaluate_all(
                "cards => cards.map(card => card.dataset.card)"
            )
            if not refused and not await page.locator("[data-testid=pass]").is_enabled():
                for card in two_unlike_cards(view):
                    await _select_by_keyboard(page, shown.index(format_cards([card])))
                await expect(page.locator("[data-testid=selection]")).to_contain_text("not a legal play")
                await page.keyboard.press("p")  # refused by the page: Play is off, nothing is sent
                await expect(page.locator("[data-testid=play]")).to_be_disabled()
                await _shoot(page, screenshots, _shot("web-refusal", players))
                await page.keyboard.press("c")
                await expect(page.locator("[data-testid=hand] .card.selected")).to_have_count(0)
                refused = True
            if not selected_by_keys and await page.locator("[data-testid=legal-move]").count():
                async with TableClient(page_referee.target, table_id=table_id) as anyone:
                    legal = await anyone.legal_moves(list(view.your_hand), to_beat(view), variant=view.settings.variant)
                for card in legal.moves[0].cards:
                    await _select_by_keyboard(page, shown.index(format_cards([card])))
                await expect(page.locator("[data-testid=selection]")).to_contain_text("a legal play")
                await _shoot(page, screenshots, _shot("web-table", players))
                await page.keyboard.press("p")
                selected_by_keys = True
            elif await page.locator("[data-testid=legal-move]").count():
                await page.keyboard.press("h")
                await expect(page.locator("[data-testid=selection]")).to_contain_text("a legal play")
                await page.keyboard.press("p")
            else:
                await page.keyboard.press("s")
        await expect(page.locator("[data-testid=standings] li")).to_have_count(players, timeout=STEP_MS)
        await _the_end_of_the_round_is_told(page, page_referee, table_id)
        await _shoot(page, screenshots, _shot("web-table-result", players))
        await expect(spectator.locator("[data-testid=standings] li")).to_have_count(players, timeout=STEP_MS)
        await _the_end_of_the_round_is_told(spectator, page_referee, table_id)
        await _no_serious_violation(spectator, axe_script, "a spectator's page at the end of a round")
        await _shoot(spectator, screenshots, _shot("web-spectator-result", players))
        events = await _count_events(page_referee, table_id) - events
        # Both pages read the table at the start and once the table is closed; every other
        # change comes from their one stream, but for the bids the person may make (the view's
        # legal_bids, which no event states): its page reads the table once per turn to bid. It
        # asks for the legal plays once per turn to play, and sends one call per decision (none
        # for the selection it refused).
        print(
            f"{players}p by keyboard, one round of {events} events: the spectator's calls {dict(calls.by_method)};"
            f" the person's ({decisions} decisions, {play_turns} turns to play) {dict(mine.by_method)}"
        )
        assert selected_by_keys, "the person never had a play to make"
        assert calls.by_method["GetTable"] <= 2, calls.by_method
        assert calls.by_method["WatchTable"] == 1, calls.by_method
        assert calls.by_method["GetReplay"] == 1, calls.by_method
        assert mine.by_method["GetTable"] <= 2 + decisions - play_turns, mine.by_method
        assert mine.by_method["WatchTable"] == 1, mine.by_method
        assert mine.by_method["ListLegalMoves"] == play_turns, mine.by_method
        assert mine.by_method["Bid"] + mine.by_method["Play"] == decisions, mine.by_method
        assert events > 20
        assert not CJK.search(await page.locator("body").inner_text())
        assert errors == []

    async def test_the_lobby_lists_open_tables_a_page_at_a_time(
        self, page_referee: WebReferee, browser: Browser, axe_script: Path
    ) -> None:
        """The lobby shows 8 open tables (a page of ListTables), then more on demand, each to watch or join."""
        async with TableClient(page_referee.target) as creator:
            made = [(await creator.create_table(player_names=[f"p{n}"], round_limit=1)).table_id for n in range(23)]
        page = await browser.new_page(viewport=PHONE)
        await page.goto(page_referee.base_url)
        listed = page.locator("[data-testid=open-table]")
        await expect(listed).to_have_count(8, timeout=STEP_MS)
        await expect(page.locator("[data-testid=more-tables]")).to_be_visible()
        await _no_serious_violation(page, axe_script, "the lobby's open tables")
        await page.click("[data-testid=more-tables]")
        await expect(listed).to_have_count(16, timeout=STEP_MS)
        await page.click("[data-testid=more-tables]")
        await expect(listed).to_have_count(23, timeout=STEP_MS)
        await expect(page.locator("[data-testid=more-tables]")).to_be_hidden()
        shown = await listed.evaluate_all("items => items.map(item => item.dataset.table)")
        assert sorted(shown) == sorted(made)
        assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        # A free seat is joined from the list: the table's id goes to the join form.
        await listed.first.locator("[data-testid=join-table]").click()
        await expect(page.locator("[data-testid=table-id-input]")).to_have_value(shown[0])

    async def test_a_replay_json_file_opens_in_the_viewer(self, page_referee: WebReferee, browser: Browser) -> None:
        table_id = await _landlord_wins_a_round(page_referee)
        page = await browser.new_page()
        await page.goto(page_referee.base_url)
        record = {
            "name": "round.json",
            "mimeType": "application/json",
            "buffer": await _replay_json(page_referee, table_id),
        }
        await page.set_input_files("[data-testid=replay-file]", files=[record])  # type: ignore[list-item]
        await expect(page.locator("[data-testid=replay-step]")).to_contain_text("step 1 /", timeout=STEP_MS)
        await page.click("[data-testid=replay-last]")
        await expect(page.locator("[data-testid=replay-result]")).to_contain_text("landlord won")
        await expect(page.locator("[data-testid=replay-seed-check]")).to_contain_text("✓")


async def _shows_the_table_as_it_is(page: Page, view: table_pb2.TableView) -> None:
    """The page (following the stream's events) shows what the referee's view says: version,
    cards left per seat, turn, the trick so far."""
    await expect(page.locator("[data-testid=table]")).to_have_attribute("data-version", str(view.version))
    for seat in view.seats:
        await expect(page.locator(f"[data-testid=cards-left-{seat.seat}]")).to_have_text(
            re.compile(rf"^{seat.cards_left} cards · balance {seat.balance}$")
        )
    turn = page.locator(f"[data-testid=seat-{view.turn_seat}]")
    await expect(turn).to_have_attribute("aria-current", "true")
    await expect(page.locator("[aria-current=true]")).to_have_count(1)
    # The clock counts down on the seat to act (the tests' tables have 300 s per decision).
    await expect(turn.locator(".clock")).to_have_text(re.compile(r"^\d+ s left$"))
    if view.phase == table_pb2.PHASE_PLAY:
        await expect(page.locator("[data-testid=trick] > li")).to_have_count(len(view.trick.plays))
        # The landlord is marked (on its seat only) and the kitty lies on the felt, face up.
        await expect(page.locator("[data-testid=seats] [data-testid=landlord-badge]")).to_have_count(1)
        await expect(
            page.locator(f"[data-testid=seat-{view.landlord_seat}] [data-testid=landlord-badge]")
        ).to_have_count(1)
        await expect(page.locator("[data-testid=kitty] .card")).to_have_count(len(view.kitty))
        await expect(page.locator("[data-testid=kitty]")).to_contain_text(view.seats[view.landlord_seat].player_name)


async def _spectator_view(page_referee: WebReferee, table_id: str) -> table_pb2.TableView:
    async with TableClient(page_referee.target, table_id=table_id) as anyone:
        return await anyone.get()


async def _person_page(browser: Browser, viewport: ViewportSize) -> tuple[Page, list[str]]:
    """A person's page in a browser context of its own, and the page's script errors as they come."""
    context = await browser.new_context(viewport=viewport)
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    return page, errors


async def _select_by_keyboard(page: Page, index: int) -> None:
    """Select the hand's card at ``index`` with the arrow keys and Space."""
    await page.keyboard.press("ArrowRight")  # onto the hand, if not there yet
    at = await page.evaluate(
        "[...document.querySelectorAll('[data-testid=hand] .card')].indexOf(document.activeElement)"
    )
    for _ in range(abs(index - at)):
        await page.keyboard.press("ArrowRight" if index > at else "ArrowLeft")
    await page.keyboard.press("Space")
    card = page.locator("[data-testid=hand] .card").nth(index)
    await expect(card).to_have_attribute("aria-pressed", "true")
    await expect(card).to_be_focused()


async def _seats_sit_around_the_table(page: Page, view: table_pb2.TableView) -> None:
    """The viewer's seat at the bottom, the next in turn to its right, the one after across
    (4p) or to the left, and the last to its left: in the page's classes and on the screen."""
    places = ["bottom", "right", "left"] if len(view.seats) == 3 else ["bottom", "right", "top", "left"]
    boxes: dict[str, FloatRect] = {}
    for seat in view.seats:
        place = places[(seat.seat - view.your_seat) % len(view.seats)]
        located = page.locator(f"[data-testid=seat-{seat.seat}]")
        await expect(located).to_have_class(re.compile(rf"\b{place}\b"))
        boxes[place] = await shown_box(located)
    felt = await shown_box(page.locator("[data-testid=center]"))
    # Left of the felt's middle, right of it, across above it; the viewer below it.
    assert boxes["left"]["x"] < felt["x"] + felt["width"] / 2 < boxes["right"]["x"] + boxes["right"]["width"], boxes
    assert boxes["left"]["x"] < boxes["right"]["x"], boxes
    assert boxes["bottom"]["y"] > felt["y"], boxes
    if "top" in boxes:
        assert boxes["left"]["x"] < boxes["top"]["x"] < boxes["right"]["x"], boxes
        assert boxes["top"]["y"] < felt["y"], boxes


async def _copies_look_apart(page: Page, view: table_pb2.TableView) -> None:
    """In 4p the second deck's copies carry a mark and a colour of their own (3p has none)."""
    second = [card for card in view.your_hand if card.copy]
    if len(view.seats) == 3:
        assert not second
        await expect(page.locator("[data-testid=hand] .card.copy")).to_have_count(0)
        return
    assert second, "a 4p hand of 25 cards holds some of the second deck"
    await expect(page.locator("[data-testid=hand] .card.copy")).to_have_count(len(second))
    first = next(card for card in view.your_hand if not card.copy)
    looks = [
        await page.locator(f'[data-testid=hand] [data-card="{format_cards([card])}"]').evaluate(
            "card => [getComputedStyle(card).backgroundColor, getComputedStyle(card, '::after').content]"
        )
        for card in (first, second[0])
    ]
    assert looks[0][0] != looks[1][0], looks
    assert looks[1][1] == '"²"', looks


async def _the_end_of_the_round_is_told(page: Page, page_referee: WebReferee, table_id: str) -> None:
    """The end of the round shows what each seat still held, the last trick, and what it paid."""
    async with TableClient(page_referee.target, table_id=table_id) as anyone:
        view = await anyone.get()
    settlement = view.last_settlement
    held = [page.locator(f"[data-testid=held-{seat}]") for seat in range(len(view.seats))]
    await expect(held[settlement.winner_seat]).to_have_text("out: no card left", timeout=STEP_MS)
    counts = [await cells.locator(".card").count() for cells in held]
    assert sum(counts) > 0, counts
    await expect(page.locator("[data-testid=last-trick] .card").first).to_be_visible()
    payout = page.locator("[data-testid=payout]")
    await expect(payout).to_contain_text(f"Stake {settlement.stake} per farmer: bid {settlement.bid}")
    # Why: every doubling and the spring, when there were any.
    if settlement.doublings:
        await expect(payout).to_contain_text(f"{TIMES} {2**settlement.doublings} for {settlement.doublings} bomb")
    else:
        await expect(payout).not_to_contain_text(TIMES)
    if settlement.spring:
        await expect(payout).to_contain_text(f"{TIMES} 2 for the spring")
    else:
        await expect(payout).not_to_contain_text("spring")
    # In 4p a bomb of four or five cards doubles nothing: the page says so, since one may have been played.
    small_bombs = "In 4p only a rocket or a bomb of 6 or more cards doubles the stake."
    if len(view.seats) == 4:
        await expect(payout).to_contain_text(small_bombs)
    else:
        await expect(payout).not_to_contain_text(small_bombs)
    for seat, change in enumerate(settlement.balance_changes):
        await expect(page.locator(f"[data-testid=change-{seat}]")).to_contain_text(f"{change:+d}" if change else "0")


async def _count_events(page_referee: WebReferee, table_id: str) -> int:
    """How many events the table has logged so far: the sequence of a fresh snapshot."""
    async with grpc.aio.insecure_channel(page_referee.target) as channel:
        stub = table_service_pb2_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
        stream = stub.WatchTable(table_service_pb2.WatchTableRequest(table_id=table_id))
        async for response in stream:
            stream.cancel()
            return int(response.event.sequence)
    raise AssertionError("WatchTable sent no snapshot")


async def _turns(page: Page) -> AsyncIterator[None]:
    """Each of the person's turns until the round's result shows; after each, once the body
    made its move, wait until the page shows a newer version of the table."""
    result = page.locator("[data-testid=result]")
    waiting = page.locator("[data-testid=my-turn], [data-testid=bid-0], [data-testid=result]:not([hidden])").first
    while True:
        await expect(waiting).to_be_visible(timeout=STEP_MS * 4)
        if await result.is_visible():
            return
        version = await page.get_attribute("[data-testid=table]", "data-version")
        yield
        await _moved_on(page, version)


async def _moved_on(page: Page, version: str | None) -> None:
    """Wait until the page shows a newer version of the table than ``version``."""
    await expect(page.locator("[data-testid=table]")).not_to_have_attribute(
        "data-version", version or "", timeout=STEP_MS
    )


async def _landlord_wins_a_round(page_referee: WebReferee) -> str:
    """A one-round table where the first bidder bids 3 and leads every trick while the others pass."""
    async with TableClient(page_referee.target) as creator:
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


async def _replay_json(page_referee: WebReferee, table_id: str) -> bytes:
    async with grpc.aio.insecure_channel(page_referee.target) as channel:
        stub = table_service_pb2_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
        answer = await stub.GetReplay(table_service_pb2.GetReplayRequest(table_id=table_id, round=1))
    return str(answer.json).encode()
