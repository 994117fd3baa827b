"""axe-core (the copy shipped in the `axe-playwright-python` package) on every page, in light and
dark mode, and on a phone-sized window with the chat list and the menu open: no
critical and no serious violations."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, BrowserContext, Page

from tests.browser.conftest import SCREENSHOTS, LiveServer
from tests.browser.site_pages import seed_site, site_pages

pytestmark = pytest.mark.browser

BLOCKING = {"critical", "serious"}
Scheme = Literal["light", "dark"]
MODES: dict[str, tuple[Scheme, int, int]] = {
    "light-1280": ("light", 1280, 860),
    "dark-1280": ("dark", 1280, 860),
    "dark-390": ("dark", 390, 844),
}
AXE = Axe()


@pytest.fixture(scope="module")
def ids(browser: Browser, daphne_server: LiveServer, llm_server) -> dict[str, str]:
    return seed_site(browser, daphne_server, llm_server)


@pytest.fixture(params=list(MODES))
def mode_context(request, browser: Browser, daphne_server: LiveServer) -> Iterator[tuple[str, int, BrowserContext]]:
    scheme, width, height = MODES[request.param]
    ctx = browser.new_context(
        base_url=daphne_server.url, viewport={"width": width, "height": height}, color_scheme=scheme
    )
    ctx.set_default_timeout(15_000)
    yield scheme, width, ctx
    ctx.close()


def blocking_violations(page: Page, label: str) -> list[str]:
    results: dict[str, Any] = AXE.run(page).response
    found = []
    for v in results["violations"]:
        if v["impact"] in BLOCKING:
            targets = "; ".join(str(n["target"]) + " " + n.get("failureSummary", "")[:160] for n in v["nodes"][:4])
            found.append(f"{label}: {v['id']} ({v['impact']}, {len(v['nodes'])} nodes): {v['help']} -> {targets}")
    return found


def test_no_serious_accessibility_violations_on_any_page(mode_context, ids, daphne_server: LiveServer) -> None:
    scheme, width, ctx = mode_context
    page = ctx.new_page()
    problems: list[str] = []
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    logged_in = False
    for site in site_pages(ids):
        if site.logged_in and not logged_in:
            page.goto(daphne_server.login_url("/"))
            page.wait_for_url(f"{daphne_server.url}/")
            logged_in = True
        page.goto(site.path)
        dark = page.evaluate("() => matchMedia('(prefers-color-scheme: dark)').matches")
        assert dark == (scheme == "dark")
        if site.open_drawer and page.locator("#drawer-toggle").is_visible():
            page.click("#drawer-toggle")
            page.wait_for_function("() => document.getElementById('chat-sidebar').getBoundingClientRect().left >= 0")
        problems += blocking_violations(page, f"{site.name} ({scheme}, {width}px)")
        if scheme == "dark":  # the light ones are test_layout's
            page.screenshot(path=str(SCREENSHOTS / f"dark-{width}-{site.name}.png"))
    if page.locator("#nav-toggle").is_visible():  # the open menu, on the last page
        page.click("#nav-toggle")
        problems += blocking_violations(page, f"menu ({scheme}, {width}px)")
    page.keyboard.press("?")
    problems += blocking_violations(page, f"shortcuts dialog ({scheme}, {width}px)")
    assert not problems, "\n".join(problems)
