"""Site-wide details in a real browser: no console errors from a missing
favicon, and an unknown address gets a page with the navigation instead of a bare 404."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, Response, expect

pytestmark = pytest.mark.browser


def test_pages_load_without_missing_files_or_console_errors(page: Page):
    missing: list[str] = []
    errors: list[str] = []

    def on_response(response: Response) -> None:
        if response.status >= 400:
            missing.append(response.url)

    page.on("response", on_response)
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    for path in ("/", "/memory/", "/pending/"):
        page.goto(path)
        page.wait_for_load_state("networkidle")
    assert missing == [] and errors == []
    assert page.evaluate("document.querySelector('link[rel=icon]').href").endswith(".svg")


def test_an_unknown_address_shows_the_navigation_and_a_way_back(page: Page):
    response = page.goto("/no/such/page/")
    assert response is not None and response.status == 404
    expect(page.get_by_role("heading", name="Not found")).to_be_visible()
    expect(page.get_by_role("navigation", name="Main")).to_be_visible()
    page.get_by_role("link", name="Back to the chat").click()
    page.wait_for_selector('#chat[data-connected="1"]')


def test_a_refused_notification_socket_goes_to_the_login_page_instead_of_retrying(page: Page):
    page.route_web_socket("**/ws/notify/", lambda ws: ws.close(code=4403, reason="wrong origin"))
    page.goto("/memory/")
    page.wait_for_url(lambda url: "/login?" in url and "memory" in url)
