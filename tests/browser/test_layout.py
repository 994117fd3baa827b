"""Every page at 1280, 768 and 390 px: no sideways scroll, the navigation reachable
(through the "Menu" button on narrow windows), the page's main control on screen, and a
screenshot of each in artifacts/screenshots/layout-<width>-<page>.png to look at."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.browser.conftest import SCREENSHOTS, LiveServer
from tests.browser.site_pages import SitePage, seed_site, site_pages

pytestmark = pytest.mark.browser

WIDTHS = {1280: 860, 768: 1024, 390: 844}
NARROW_NAV = 1100  # below this the main navigation folds behind "Menu" (static/css/app.css)
NAV_LINKS = [
    "Chat",
    "Overview",
    "Memory",
    "Skills",
    "Inbox",
    "Search",
    "Changes",
    "Reviews",
    "Settings",
]

# Controls (links, buttons, fields) that stick out past the window's left or right edge; content
# inside its own scroll box (code blocks, diffs) may be wider on purpose and is left out.
OFF_SCREEN_JS = """() => {
  const out = [];
  const scrolls = (el) => {
    for (let p = el.parentElement; p; p = p.parentElement) {
      const ox = getComputedStyle(p).overflowX;
      if (ox === "auto" || ox === "scroll") return true;
    }
    return false;
  };
  for (const el of document.querySelectorAll("a, button, input, select, textarea, summary")) {
    if (!el.checkVisibility({visibilityProperty: true}) || el.classList.contains("skip-link")) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || scrolls(el)) continue;
    if (r.left < -1 || r.right > window.innerWidth + 1) out.push(el.outerHTML.slice(0, 120));
  }
  return out;
}"""


@pytest.fixture(scope="module")
def ids(browser: Browser, daphne_server: LiveServer, llm_server) -> dict[str, str]:
    return seed_site(browser, daphne_server, llm_server)


@pytest.fixture(params=list(WIDTHS), ids=lambda w: f"{w}px")
def sized(request, browser: Browser, daphne_server: LiveServer) -> Iterator[tuple[int, BrowserContext]]:
    width = request.param
    ctx = browser.new_context(base_url=daphne_server.url, viewport={"width": width, "height": WIDTHS[width]})
    ctx.set_default_timeout(15_000)
    yield width, ctx
    ctx.close()


def _check_page(page: Page, width: int, site: SitePage) -> list[str]:
    problems: list[str] = []
    scroll = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    if scroll[0] > scroll[1]:
        problems.append(f"scrolls sideways: scrollWidth {scroll[0]} > innerWidth {scroll[1]}")
    problems += [f"off screen: {html}" for html in page.evaluate(OFF_SCREEN_JS)]
    action = page.locator(site.main_action).first
    if not action.is_visible():
        problems.append(f"main action {site.main_action} not visible")
    else:
        box = action.bounding_box()
        if box is None or box["x"] < 0 or box["x"] + box["width"] > width:
            problems.append(f"main action {site.main_action} off screen: {box}")
    return [f"{site.name} @ {width}px: {p}" for p in problems]


def _open_drawer_if_narrow(page: Page, width: int) -> None:
    toggle = page.locator("#drawer-toggle")
    if toggle.is_visible():
        toggle.click()
        # It slides in: wait until it has arrived before measuring.
        page.wait_for_function("() => document.getElementById('chat-sidebar').getBoundingClientRect().left >= 0")
        expect(page.locator("#chat-sidebar")).to_be_in_viewport(ratio=1)
        expect(toggle).to_have_attribute("aria-expanded", "true")


def _check_nav(page: Page, width: int) -> None:
    """Every main link is reachable: in the bar on wide windows, behind "Menu" on narrow ones."""
    toggle = page.locator("#nav-toggle")
    if width < NARROW_NAV:
        expect(page.locator("#main-nav")).to_be_hidden()
        toggle.click()
        expect(toggle).to_have_attribute("aria-expanded", "true")
    else:
        expect(toggle).to_be_hidden()
    nav = page.get_by_role("navigation", name="Main")
    for name in NAV_LINKS:
        expect(nav.get_by_role("link", name=name, exact=True)).to_be_in_viewport()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"layout-{width}-nav.png"))
    if width < NARROW_NAV:
        page.keyboard.press("Escape")
        expect(page.locator("#main-nav")).to_be_hidden()


def test_every_page_fits_the_window_at_each_width(sized, ids, daphne_server: LiveServer) -> None:
    width, ctx = sized
    page = ctx.new_page()  # not logged in yet: the login page comes first
    problems: list[str] = []
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for site in site_pages(ids):
        if site.logged_in and "sessionid" not in {c["name"] for c in ctx.cookies()}:
            page.goto(daphne_server.login_url("/"))
            page.wait_for_url(f"{daphne_server.url}/")
            _check_nav(page, width)
        page.goto(site.path)
        if site.open_drawer:
            _open_drawer_if_narrow(page, width)
        problems += _check_page(page, width, site)
        # The chat fills the window and scrolls inside itself: a viewport shot shows what a person sees.
        full = not site.path.startswith("/c/")
        page.screenshot(path=str(SCREENSHOTS / f"layout-{width}-{site.name}.png"), full_page=full)
    assert not problems, "\n".join(problems)


CARD_TABLES = {
    "/changes/": ".change-row",
    "/reviews/": ".review-row",
    "/skills/": ".skill-row",
    "/pending/": ".decided-table tbody tr",
}


def test_wide_tables_become_cards_on_narrow_windows(sized, ids, daphne_server: LiveServer) -> None:
    width, ctx = sized
    page = ctx.new_page()
    page.goto(daphne_server.login_url("/"))
    page.wait_for_url(f"{daphne_server.url}/")
    stacked = width < 800
    for path, row_selector in CARD_TABLES.items():
        page.goto(path)
        row = page.locator(row_selector).first
        display = row.evaluate("el => getComputedStyle(el).display")
        assert display == ("block" if stacked else "table-row"), (path, width, display)
        header = row.locator("xpath=ancestor::table[1]/thead")
        if stacked:  # column names move into each card; the header row stays for screen readers
            expect(header).not_to_be_in_viewport()
            label = row.locator("td[data-label]").first
            shown = label.evaluate("el => getComputedStyle(el, '::before').content")
            assert shown == f'"{label.get_attribute("data-label")}"', (path, shown)
        else:
            expect(header).to_be_visible()
