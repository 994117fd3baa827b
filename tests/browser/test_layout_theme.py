"""Dark mode, the not-found page and the favicon, in a real browser."""

from __future__ import annotations

from typing import Literal

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import LiveServer

pytestmark = pytest.mark.browser

BG = "() => getComputedStyle(document.body).backgroundColor"
LIGHT_BG, DARK_BG = "rgb(247, 247, 245)", "rgb(20, 21, 24)"


def _logged_in_page(browser: Browser, server: LiveServer, scheme: Literal["light", "dark"]) -> Page:
    ctx = browser.new_context(base_url=server.url, viewport={"width": 1280, "height": 860}, color_scheme=scheme)
    page = ctx.new_page()
    page.goto(server.login_url("/memory/"))
    page.wait_for_url("**/memory/")
    return page


def test_dark_mode_follows_the_system_until_the_toggle_picks_and_the_pick_is_kept(
    browser: Browser, daphne_server: LiveServer, screenshot
) -> None:
    dark_system = _logged_in_page(browser, daphne_server, "dark")
    assert dark_system.evaluate(BG) == DARK_BG
    expect(dark_system.locator("#theme-toggle")).to_have_attribute("aria-pressed", "true")
    dark_system.context.close()

    page = _logged_in_page(browser, daphne_server, "light")
    toggle = page.get_by_role("button", name="Dark mode")
    assert page.evaluate(BG) == LIGHT_BG
    expect(toggle).to_have_attribute("aria-pressed", "false")
    toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "true")
    assert page.evaluate(BG) == DARK_BG
    screenshot("theme-dark-memory", page, full_page=True)

    page.goto("/changes/")  # another page, and a second tab: the pick is kept by this browser
    assert page.evaluate(BG) == DARK_BG
    other = page.context.new_page()
    other.goto("/skills/")
    assert other.evaluate(BG) == DARK_BG
    screenshot("theme-dark-skills", other, full_page=True)

    page.get_by_role("button", name="Dark mode").click()
    page.reload()
    assert page.evaluate(BG) == LIGHT_BG
    expect(page.get_by_role("button", name="Dark mode")).to_have_attribute("aria-pressed", "false")
    page.context.close()


def test_unknown_address_shows_a_not_found_page_with_the_navigation(page: Page, screenshot) -> None:
    response = page.goto("/no-such-page/")
    assert response is not None and response.status == 404
    expect(page.get_by_role("heading", name="Page not found")).to_be_visible()
    expect(page.locator("main")).to_contain_text("/no-such-page/")
    nav = page.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Memory", exact=True)).to_be_visible()
    screenshot("not-found", page)
    nav.get_by_role("link", name="Skills", exact=True).click()
    expect(page.get_by_role("heading", name="Skills")).to_be_visible()


def test_pages_have_a_favicon_and_log_no_console_errors(page: Page, daphne_server: LiveServer) -> None:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    failed: list[str] = []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    for path in ("/memory/", "/skills/", "/search/"):
        page.goto(path)
        icon = page.locator("link[rel=icon]")
        expect(icon).to_have_attribute("type", "image/svg+xml")
        got = page.request.get(str(icon.get_attribute("href")))
        assert got.status == 200 and got.headers["content-type"].startswith("image/svg+xml")
    favicon = page.request.get("/favicon.ico")  # what browsers ask for on their own
    assert favicon.status == 200 and favicon.headers["content-type"].startswith("image/svg+xml")
    assert favicon.body().startswith(b"<svg")
    assert not errors, errors
    assert not failed, failed
