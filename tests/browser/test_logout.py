"""Logging out in a real browser ends the session in every tab."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from tests.browser.conftest import LiveServer

pytestmark = pytest.mark.browser


def test_log_out_ends_the_session_in_every_tab(page: Page, context: BrowserContext, daphne_server: LiveServer):
    other_tab = context.new_page()
    other_tab.goto("/memory/")
    expect(other_tab.get_by_role("heading", name="Memory", exact=True)).to_be_visible()
    page.goto("/memory/")
    page.get_by_role("button", name="Log out").click()
    page.wait_for_url(re.compile(r"/login\?logged_out=1$"))
    expect(page.get_by_role("status")).to_contain_text("logged out everywhere")
    other_tab.goto("/skills/")
    other_tab.wait_for_url(re.compile(r"/login\?next=(/|%2F)skills(/|%2F)$"))  # `next` is URL-encoded
    # The printed link still logs in again.
    page.goto(daphne_server.login_url("/memory/"))
    page.wait_for_url(f"{daphne_server.url}/memory/")
